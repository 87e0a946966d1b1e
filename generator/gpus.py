"""The GPUs people train on, and what each holds for a training step besides the tensors.

Pure data (no torch import). `CATALOGUE` lists GPUs by name, each with the memory a process
can have of it and its generation; `find` picks one by a loose name ("3090", "a100-80gb").
Each `Overheads` entry is one GPU generation or family, with stated, sourced assumptions:
- `context_bytes_low/high`: device memory the process holds outside PyTorch's caching allocator
  (nvidia-smi minus `memory_reserved`): the CUDA context with the kernels loaded so far. Low: a
  process that has only run `torch.ones(1, device="cuda")` with lazy module loading (PyTorch's
  default since 1.13, the CUDA default on Linux since 12.2). High: once a training step's
  libraries (cuBLAS/cuBLASLt, cuDNN, PyTorch's own kernels) have loaded their modules, bounded
  by what eager loading takes (`CUDA_MODULE_LOADING=EAGER`). Both vary with driver, CUDA and
  PyTorch version, SM count (the bare context grows with it) and the kernels a model touches.
- `NCCL_COMMUNICATOR_BYTES`: what each NCCL communicator of a multi-GPU job holds outside the
  caching allocator (below); a rank's context range adds it once per communicator it uses.
- `cublas_workspace_bytes`: PyTorch's default cuBLAS workspace (`getChosenWorkspaceSize`,
  overridden by `CUBLAS_WORKSPACE_CONFIG`). It comes from the caching allocator, so it counts in
  `memory_allocated`, active and reserved (8,519,680 B alone leaves a 20 MiB large segment).
  Keyed per (cuBLAS handle, stream), allocated by the first matmul on that key, never freed
  until `torch._C._cuda_clearCublasWorkspaces()`. Handles are per CPU thread and autograd runs
  CUDA backward on its own device thread, hence `cublas_workspaces` = 2 in a training step.
  PyTorch 2.5 to 2.13 behave so; builds of late 2026 (docs 2.15) allocate it per operation
  unless `TORCH_CUBLAS_WORKSPACE_CACHE=1`, so none persists there (the size is the same).
- `cublaslt_workspace_bytes`: cuBLASLt's (`CUBLASLT_WORKSPACE_SIZE`, KiB; 1 MiB default since
  2022). In 2.5 it is taken from the caching allocator per Lt call and freed after it (a 2 MiB
  small-pool segment stays reserved); from mid-2025 one per (handle, stream) is kept, and on
  open-source CUDA builds from early 2026 Lt shares the cuBLAS workspace (unified), so it adds
  nothing beyond `cublas_workspace_bytes`.
Sources are issue/PR URLs or `repo:path@commit`; ranges say where sources disagree. Where no
measurement of a family was found (Hopper, Blackwell context) the range is an extrapolation.
Each entry's two context figures carry, beside them, the readings they come from.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from generator.errors import ConfigError
from generator.words import Words

MIB = 2**20
#: ":4096:2:16:8": 2 x 4 MiB + 8 x 16 KiB, PyTorch's default off Hopper (Blackwell: see below).
CUBLAS_WORKSPACE_DEFAULT = 4096 * 1024 * 2 + 16 * 1024 * 8
CUBLAS_WORKSPACE_32MIB = 32 * MIB
CUBLASLT_WORKSPACE_DEFAULT = 1 * MIB

_WORKSPACE_SOURCES = (
    "https://github.com/pytorch/pytorch/pull/89027",  # sm90 32 MiB, else :4096:2:16:8
    "https://github.com/pytorch/pytorch/issues/95668",  # 8519680 B in memory_allocated (A10G)
    "https://github.com/pytorch/pytorch/pull/124250",  # workspace kept in the caching allocator
    "pytorch/pytorch:aten/src/ATen/cuda/CublasHandlePool.cpp@26a39059ec580351411f180816c47e2ef5134ae1",
    "cyyever/pytorch:aten/src/ATen/cuda/CublasHandlePool.cpp@0cecc5c1817a7a03f29219a9001d9583f0864473",
    "pytorch/pytorch:aten/src/ATen/cuda/detail/DeviceThreadHandles.h@06d733a5cf2a06665241a75b98720a8497f7b4b7",
    "pytorch/pytorch.github.io:_posts/2022-6-27-how-computational-graphs-are-executed-in-pytorch.md",
    "https://github.com/pytorch/pytorch/pull/73439",  # cuBLASLt 1 MiB
    "https://github.com/pytorch/pytorch/pull/156495",  # persistent Lt workspace per handle+stream
    "https://github.com/pytorch/pytorch/pull/175879",  # unified cuBLAS/Lt workspace by default
    "https://docs.pytorch.org/docs/2.15/cuda_environment_variables.html",  # TORCH_CUBLAS_WORKSPACE_CACHE
)
#: What the two ends of a context range hold, as the nvidia-smi figure names them: what lies
#: outside the caching allocator grows after the first kernels run (the HF guide's 1,343 MiB
#: after one tensor on a V100; 738 MiB then 1,114 MiB after the first forward and backward in
#: mscherrmann's RTX 3090 notebook, below).
CONTEXT_ENDS = Words(
    "{low} after the first tensor, up to {high} once the step's first kernels have loaded "
    "cuBLAS, cuDNN and the kernels PyTorch loads lazily",
    "第一个张量之后是 {low}，训练步的头几个内核加载了 cuBLAS、cuDNN 和 PyTorch 延迟加载的内核之后"
    "最多 {high}")

_CONTEXT_SOURCES = (
    "stas00/ml-engineering:training/performance/README.md@a4549bc6b2fce24f6ec9a039197a8b304818b112",
    "https://github.com/pytorch/pytorch/pull/86509",  # lazy 287,047,680 B vs eager 666,632,192 B
    "https://github.com/pytorch/pytorch/issues/107667",  # ~300 MB lazy, >1000 MB before 11.7
    "https://github.com/pytorch/pytorch/issues/109888",  # ~400 MB with lazy loading
)


#: Device memory one NCCL communicator (one process group's) holds outside the caching
#: allocator, its channels' FIFOs and connection buffers, low and high. Low: 544 MiB, a
#: 2-rank group on 4 A100s over NVLink (688 MiB for larger groups, NVIDIA/nccl#964); high:
#: about 1.6 GB for one communicator (NVIDIA/nccl#864). It grows with the channels NCCL
#: opens for more bandwidth (NVLink on Hopper more than PCIe), with NVLS and direct
#: algorithms, and with send/receive (NVIDIA/nccl#986), and shrinks with NCCL_BUFFSIZE or
#: fewer channels: a range, as the CUDA context's is.
NCCL_COMMUNICATOR_BYTES = (544 * MIB, 1_600_000_000)
NCCL_SOURCES = ("https://github.com/NVIDIA/nccl/issues/964",
                "https://github.com/NVIDIA/nccl/issues/864",
                "https://github.com/NVIDIA/nccl/issues/986")


def communicator_bytes(communicators: int) -> tuple[int, int]:
    """The NCCL memory (low, high) of a rank that uses `communicators` process groups."""
    low, high = NCCL_COMMUNICATOR_BYTES
    return communicators * low, communicators * high


@dataclass(frozen=True)
class Overheads:
    name: str
    compute_capability: tuple[int, int]
    context_bytes_low: int
    context_bytes_high: int
    cublas_workspace_bytes: int
    cublas_workspaces: int
    cublaslt_workspace_bytes: int
    sources: tuple[str, ...]
    name_patterns: tuple[str, ...] = ()
    note: str = ""

    @property
    def persistent_workspace_bytes(self) -> int:
        """cuBLAS workspaces alive after a step's backward (PyTorch 2.5 to 2.13)."""
        return self.cublas_workspace_bytes * self.cublas_workspaces


def _entry(name, cc, low_mib, high_mib, workspace, patterns, sources, note=""):
    return Overheads(name, cc, low_mib * MIB, high_mib * MIB, workspace, 2,
                     CUBLASLT_WORKSPACE_DEFAULT, _WORKSPACE_SOURCES + _CONTEXT_SOURCES + sources,
                     patterns, note)


OVERHEADS: tuple[Overheads, ...] = (
    # low 450, high 1,024: A100's 420 and 950 (below) grown for 132 SMs against 108; no H100
    # reading was found
    _entry("Hopper (H100, H200, GH200, H800, H20)", (9, 0), 450, 1024, CUBLAS_WORKSPACE_32MIB,
           (r"\bG?H(100|200|800|20)\b", r"\bHopper\b"),
           ("https://github.com/pytorch/pytorch/pull/120925",  # cuBLAS: 32 MiB for Hopper
            "https://github.com/ggml-org/llama.cpp/pull/23604"),  # bare context grows with SMs
           "context extrapolated from A100 (132 vs 108 SMs): no H100 figure was found"),
    # low 420: 426 MiB per process on an A100 80GB (torchrec#3580), 0.47 GiB lazy
    # (ml-engineering); high 950: 0.92 GiB with eager loading, torch 2.1.1+cu121, A100 80GB
    # (ml-engineering)
    _entry("Ampere datacenter (A100, A800, A30)", (8, 0), 420, 950, CUBLAS_WORKSPACE_DEFAULT,
           (r"\bA(100|800|30)\b", r"\bPG509"),
           ("https://github.com/meta-pytorch/torchrec/pull/3580",),  # 426 MiB/process, A100 80GB
           "0.47 GiB lazy, 0.92 GiB eager: torch 2.1.1+cu121 on A100 80GB (ml-engineering)"),
    # low 250: 256 MiB, RTX 3090, torch 2.7.1 (InvokeAI#9413), 128-256 MiB bare context
    # (InvokeAI#9447); high 1,114: nvidia-smi used less memory_reserved() less the 895.04 MiB
    # used before PyTorch started, in mscherrmann's RTX 3090 notebook (HELD_OUT.md source 2):
    # 738.2 MiB once the model was on the GPU (2,923.20 - 1,290.00 - 895.04), 1,105.7 after
    # the first forward pass and 1,113.7 after the first backward (4,980.72 - 2,972.00 -
    # 895.04), the same through the second step: cuBLAS and the lazily loaded kernels
    _entry("Ampere consumer/workstation (RTX 30, A10, A40, RTX A6000)", (8, 6), 250, 1114,
           CUBLAS_WORKSPACE_DEFAULT,
           (r"RTX\s*30\d0", r"RTX\s*A\d{3,4}\b", r"\bA(10G?|40|16|2)\b"),
           ("https://github.com/invoke-ai/InvokeAI/issues/9413",  # 256 MiB, RTX 3090, 2.7.1
            "https://github.com/invoke-ai/InvokeAI/pull/9447",  # 128-256 MiB bare context
            "mscherrmann/mscherrmann.github.io:assets/jupyter/testGPUMemoryBertTraining.ipynb"
            "@2f5ab7537b4fdd097422e9dc39b87a41975f64ed"),  # 738 then 1,114 MiB, RTX 3090
           "high end: an RTX 3090 after a BERT-large training step (PyTorch 2.1 or 2.2 by "
           "the notebook's date)"),
    # low 250: 107 MiB bare on an RTX 4060 Ti (llama.cpp#23604) and 426 MiB on an RTX 6000
    # Ada (unsloth-zoo#1053); high 900: no Ada reading after a training step was found, an
    # extrapolation
    _entry("Ada (RTX 40, L4, L40, RTX 6000 Ada)", (8, 9), 250, 900, CUBLAS_WORKSPACE_DEFAULT,
           (r"RTX\s*40\d0", r"\bL(4|40S?|20)\b", r"\bAda\b"),
           ("https://github.com/unslothai/unsloth-zoo/pull/1053",  # 426 MiB, RTX 6000 Ada
            "https://github.com/ggml-org/llama.cpp/pull/23604"),  # 107 MiB bare, RTX 4060 Ti
           "small Ada parts (4060) sit below the low end; 142-SM RTX 6000 Ada at 426 MiB"),
    # low 550: 555 MiB bare on an RTX PRO 6000 (llama.cpp#23604); high 1,280: no reading
    # after a training step was found, an extrapolation
    _entry("Blackwell (B200, GB200, RTX 50, RTX PRO 6000)", (10, 0), 550, 1280,
           CUBLAS_WORKSPACE_32MIB, (r"\bG?B[123]00\b", r"RTX\s*50\d0", r"\bBlackwell\b"),
           ("https://github.com/pytorch/pytorch/pull/175344",  # 32 MiB for sm10x/sm12x
            "https://github.com/ggml-org/llama.cpp/pull/23604"),  # 555 MiB bare, RTX PRO 6000
           "cuBLAS workspace is 8,519,680 B in builds before Feb 2026; context extrapolated"),
)


def for_device_name(name: str) -> Overheads | None:
    """The entry whose patterns match a device name (`torch.cuda.get_device_name()`)."""
    for entry in OVERHEADS:
        if any(re.search(pattern, name, re.IGNORECASE) for pattern in entry.name_patterns):
            return entry
    return None


def nvidia_smi_bytes(allocator: dict) -> tuple[int, int]:
    """What `nvidia-smi` shows for a step whose CUDA allocator was simulated (an estimate's
    `allocator` figures): its reserved peak plus the CUDA context, low and high."""
    low, high = allocator["context_bytes"]
    return allocator["peak_reserved_bytes"] + low, allocator["peak_reserved_bytes"] + high


# -- the catalogue ---------------------------------------------------------------------------
#: Where most totals were read: captures of nvidia-smi and of CUDA's deviceQuery sample.
_CAPTURES = "thamada/gls:gls/{}@e20f22d0eec076b6eeed628fdb1312d84a6fb663"


@dataclass(frozen=True)
class GPU:
    """One GPU as PyTorch sees it."""

    name: str
    """As `torch.cuda.get_device_name()` and nvidia-smi print it."""
    memory_bytes: int
    """What a process can have of it: `torch.cuda.get_device_properties().total_memory`
    (CUDA's totalGlobalMem). The verdict judges against this."""
    smi_total_mib: int
    """The total nvidia-smi prints: larger by what the driver keeps for itself."""
    sources: tuple[str, ...]
    """Where each figure was read: nvidia-smi's total first, then the memory for a process,
    then any other reading (a driver may move the totals by a few tens of MiB)."""
    aliases: tuple[str, ...] = ()
    """Other names it goes by, matched loosely as its name is."""

    @property
    def memory_source(self) -> str:
        """Where `memory_bytes` was read."""
        return self.sources[1] if len(self.sources) > 1 else self.sources[0]

    @property
    def overheads(self) -> Overheads:
        found = for_device_name(self.name)
        if found is None:  # the catalogue's test holds every entry to a generation
            raise ValueError(f"no generation in OVERHEADS matches {self.name}")
        return found

    @property
    def context_bytes(self) -> tuple[int, int]:
        """The CUDA context this GPU's generation takes, low and high."""
        return self.overheads.context_bytes_low, self.overheads.context_bytes_high

    @property
    def short_name(self) -> str:
        """The name without the vendor's words: "RTX 3090", "A100-SXM4-80GB", "H100 80GB HBM3"."""
        return re.sub(r"^NVIDIA\s+(GeForce\s+)?", "", self.name)


CATALOGUE: tuple[GPU, ...] = (
    GPU("NVIDIA GeForce RTX 3060", 12_629_508_096, 12288,
        ("https://github.com/geerlingguy/raspberry-pi-pcie-devices/issues/790",
         "intelav/cuda-practices:cppIntegration/README.md@11596c32c94c725a24cc7df70a646e18d71216bf"),
        ("rtx 3060 12gb",)),
    GPU("NVIDIA GeForce RTX 3070", 8_351_318_016, 8192,
        (_CAPTURES.format("RTX3070_smi.py"), _CAPTURES.format("RTX3070_deviceQuery.py"))),
    GPU("NVIDIA GeForce RTX 3090", 25_327_697_920, 24576,
        ("https://github.com/noonghunna/club-3090/issues/1127",
         _CAPTURES.format("RTX3090_deviceQuery.py"))),
    GPU("NVIDIA GeForce RTX 4090", 25_386_352_640, 24564,
        ("https://github.com/RLinf/RLinf/issues/255", _CAPTURES.format("RTX4090_deviceQuery.py"))),
    GPU("NVIDIA GeForce RTX 5090", 33_680_457_728, 32607,
        ("https://github.com/noonghunna/club-3090/issues/617",
         _CAPTURES.format("RTX5090_deviceQuery.py"))),
    GPU("NVIDIA A10", 23_595_909_120, 23028,
        (_CAPTURES.format("A10_smi.py"), _CAPTURES.format("A10_deviceQuery.py")),
        ("a10 24gb",)),
    GPU("NVIDIA L4", 23_570_219_008, 23034,
        (_CAPTURES.format("L4_smi.py"), _CAPTURES.format("L4_deviceQuery.py"))),
    GPU("NVIDIA L40S", 47_803_596_800, 46068,
        (_CAPTURES.format("L40S_smi.py"), _CAPTURES.format("L40S_deviceQuery.py"))),
    GPU("NVIDIA A100-SXM4-40GB", 42_298_834_944, 40960,
        ("https://github.com/bottlerocket-os/bottlerocket-core-kit/pull/834",
         "https://github.com/bottlerocket-os/bottlerocket/pull/3873"),
        ("a100 40gb", "a100-40gb", "a100 40gb pcie")),
    GPU("NVIDIA A100-SXM4-80GB", 85_100_068_864, 81920,
        (_CAPTURES.format("A100SXMx4_smi.py"), _CAPTURES.format("A100SXMx4_deviceQuery.py"),
         # the PCIe card: 84,974,239,744 B, 0.15 % less
         "WFU-HPC/deac-docs:source/cluster-gpu.rst@cfc6d17f3fdfc5dad90acea34efb601498d60eef"),
        ("a100 80gb", "a100-80gb", "a100 80gb pcie")),
    GPU("NVIDIA H100 80GB HBM3", 85_045_477_376, 81559,
        ("https://github.com/NVIDIA/nccl/issues/1264",
         _CAPTURES.format("H100SXMx8_deviceQuery.py")),
        ("h100", "h100 sxm", "h100 80gb")),
    GPU("NVIDIA H200", 150_021_734_400, 143771,
        (_CAPTURES.format("H200_smi.py"), _CAPTURES.format("H200_deviceQuery.py")),
        ("h200 141gb",)),
    GPU("NVIDIA B200", 191_503_007_744, 183359,
        ("https://github.com/NVIDIA/TensorRT-LLM/issues/10278",
         "mispa-ms/srt-slurm:configs/patches/vllm-container-deps-k3-b200-dcp8-emptycache.sh"
         "@5805859062ea583ba214f490f8baedfaab50b1af",
         "decoderesearch/interp-engine:interp_engine/memory.py"
         "@021825e487c1eedc826cfc73385d30dab1977b6b")),
)
#: The GPU an estimate models when none is named: a Hopper GPU, the generation of the
#: published H100 runs the accuracy page compares against.
ASSUMED = "NVIDIA H100 80GB HBM3"


def _loose(name: str) -> str:
    """"NVIDIA GeForce RTX 3090" and "rtx-3090" → "3090"; "A100 80GB" → "a10080gb"."""
    words = re.sub(r"\b(nvidia|geforce|rtx|tesla)\b", " ", name.lower())
    return re.sub(r"[^a-z0-9]+", "", words)


def _names(gpu: GPU) -> set[str]:
    return {_loose(n) for n in (gpu.name, gpu.short_name, *gpu.aliases)}


def _begins(name: str, key: str) -> bool:
    """`name` begins with `key`, and a number in it does not go on ("h20" is no "h200")."""
    return name.startswith(key) and not (key[-1].isdigit() and name[len(key):][:1].isdigit())


def find(name: str) -> GPU:
    """The catalogue's GPU of that name, matched loosely ("3090", "RTX 4090", "a100-80gb",
    "h100"): an exact loose match, else the one GPU whose names begin with it. A name that
    matches none or several is a ConfigError naming the close ones."""
    if not isinstance(name, str):
        raise ConfigError(f"a GPU is named by a string such as 'RTX 4090', got "
                          f"{type(name).__name__} {name!r} (a memory size goes in memory=, "
                          "--gpu-memory)")
    key = _loose(name)
    exact = [gpu for gpu in CATALOGUE if key and key in _names(gpu)]
    if exact:
        return exact[0]
    starting = [gpu for gpu in CATALOGUE if key and any(_begins(n, key) for n in _names(gpu))]
    if len(starting) == 1:
        return starting[0]
    close = starting or [gpu for gpu in CATALOGUE
                         if difflib.get_close_matches(key, _names(gpu), n=1, cutoff=0.8)]
    hint = f"; did you mean {', '.join(repr(g.short_name) for g in close)}?" if close else ""
    what = "names several GPUs" if len(starting) > 1 else "is not a GPU of the catalogue"
    raise ConfigError(f"{name!r} {what}{hint} (the catalogue: "
                      f"{', '.join(g.short_name for g in CATALOGUE)}; for another GPU, give "
                      "its memory size: --gpu-memory, memory=)")


def workspace_sizes() -> tuple[int, ...]:
    """The cuBLAS workspace sizes the catalogue's GPUs keep, each once, in order."""
    return tuple(dict.fromkeys(gpu.overheads.cublas_workspace_bytes for gpu in CATALOGUE))


def assumed() -> GPU:
    """The GPU an estimate of CUDA models when none is named."""
    return find(ASSUMED)
