"""No estimate touches the network or loads code it did not ship with (DESIGN.md, "Hostile
data"), from the API as from the command line. LoRA through PEFT, QLoRA and 8-bit AdamW import
bitsandbytes, whose CPU backend asks the `kernels` package, as it is imported, for a compiled
kernel from the Hugging Face Hub (on a CPU with AVX512-BF16).

Each run is a fresh process, so that bitsandbytes is imported for the first time in it: every
socket connection and DNS lookup there is refused and recorded, a `kernels` package of the
test's own records any request for a kernel (and says on stderr what the real one says when
offline), and bitsandbytes is told that the CPU has AVX512-BF16, as it would find on such a
CPU, so that its request is made on any machine unless the estimate prevents it. The control
(`test_the_harness_sees_bitsandbytes_ask_for_a_kernel`) shows that it would be seen.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import cli_env
from hf_offline import write_config

pytest.importorskip("transformers", reason="hf: models need transformers (pip install -e '.[hf]')")
pytest.importorskip("peft", reason="LoRA needs peft (the test extra has it)")
pytest.importorskip("bitsandbytes", reason="QLoRA and 8-bit AdamW need bitsandbytes")

#: Imported first in each run (a `-c` wrapper): the guard, installed on import.
GUARD = '''\
import importlib.machinery
import os
import socket
import sys

RECORD = os.environ["GUARD_RECORD"]


def record(what):
    with open(RECORD, "a", encoding="utf-8") as out:
        out.write(what + "\\n")


def refused(name):
    def call(*args, **kwargs):
        record(f"{name}{args!r}")
        raise OSError(f"the test refuses {name}")
    return call


socket.socket.connect = refused("socket.connect")
socket.socket.connect_ex = refused("socket.connect_ex")
socket.create_connection = refused("socket.create_connection")
socket.getaddrinfo = refused("socket.getaddrinfo")


class Avx512Bf16:
    """bitsandbytes.functional.has_avx512bf16, which asks bitsandbytes' library about the
    CPU, answers yes: the kernel is asked for on any machine."""

    def find_spec(self, name, path=None, target=None):
        if name != "bitsandbytes.functional":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            module.has_avx512bf16 = lambda: True

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, Avx512Bf16())
'''
#: A `kernels` package of the test's own, found before any installed one.
KERNELS = '''\
import sys

from guard import record


def get_kernel(repo_id, *args, **kwargs):
    record(f"kernels.get_kernel({repo_id!r})")
    print("Skipping publisher trust check (HF_HUB_OFFLINE)", file=sys.stderr)
    raise RuntimeError("the test's kernels package holds no kernel")
'''
#: Two layers of hidden 64: QLoRA's model, an hf: folder.
TINY_LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 64,
              "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
              "num_key_value_heads": 2, "vocab_size": 1000, "max_position_embeddings": 256}
#: The API's calls, each run first in a process of its own (the import of bitsandbytes or
#: PEFT each makes first): LoRA (PEFT imports bitsandbytes), QLoRA, 8-bit AdamW as a lever
#: and as the step's optimizer. `{config}`: the folder of TINY_LLAMA.
API_CALLS = {
    "lora": 'generator.estimate("llama-tiny", batch_size=2, seq_len=16, device="cpu", '
            'lora_rank=8, lora_targets=("q_proj", "v_proj"))',
    "qlora": 'generator.estimate("hf:{config}", batch_size=2, seq_len=16, device="cpu", '
             'precision="amp-bf16", lora_rank=8, quantization="nf4")',
    "adamw-8bit": 'generator.levers("tiny", batch_size=2, seq_len=16); '
                  'generator.estimate("tiny", batch_size=2, seq_len=16, optimizer="adamw-8bit")',
}
#: Around the API's calls: what the first estimate of a process changed in it, to a file.
API_RUN = '''\
import guard, json, os, sys, warnings
environ, filters = dict(os.environ), list(warnings.filters)
import generator
{call}
changed = {{"environ": sorted(set(os.environ.items()) ^ set(environ.items())),
           "warnings filters": [repr(f) for f in warnings.filters if f not in filters]
                               + [repr(f) for f in filters if f not in warnings.filters]}}
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(changed, out)
'''


@pytest.fixture
def guarded(tmp_path: Path):
    """Run `python -c CODE ARGS` under the guard; returns (process, what it recorded)."""
    (tmp_path / "guard.py").write_text(GUARD, encoding="utf-8")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "__init__.py").write_text(KERNELS, encoding="utf-8")
    record = tmp_path / "record.txt"
    env = cli_env()
    env["PYTHONPATH"] = f"{tmp_path}:{env['PYTHONPATH']}"
    env.update(GUARD_RECORD=str(record), HF_HOME=str(tmp_path / "hf-home"))
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):  # the guard is the test's offline
        env.pop(name, None)
    env.pop("TORCHINDUCTOR_CACHE_DIR", None)  # this process's torch set it; the run's would

    def run(code: str, *args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
        record.unlink(missing_ok=True)
        proc = subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL)
        made = record.read_text(encoding="utf-8").splitlines() if record.exists() else []
        return proc, made

    return run


def test_the_harness_sees_bitsandbytes_ask_for_a_kernel(guarded) -> None:
    """Imported bare, bitsandbytes asks the test's `kernels` for the Hub's kernel, on any
    CPU: the tests below can fail."""
    proc, made = guarded("import guard, bitsandbytes")
    assert proc.returncode == 0, proc.stderr
    assert made == ["kernels.get_kernel('kernels-community/quantization-bitsandbytes')"]
    assert "Skipping publisher trust check" in proc.stderr


@pytest.mark.parametrize("name", sorted(API_CALLS))
def test_an_estimate_from_the_api_reaches_for_no_network_and_says_nothing(
        guarded, tmp_path: Path, name: str) -> None:
    config = write_config(tmp_path / "tiny-llama" / "config.json", TINY_LLAMA).parent
    code = API_RUN.format(call=API_CALLS[name].format(config=config))
    proc, made = guarded(code, str(tmp_path / "changed.json"))
    assert proc.returncode == 0, proc.stderr
    assert made == []
    assert (proc.stdout, proc.stderr) == ("", "")
    # the first estimate of a process leaves its environment and warnings filters as found
    assert json.loads((tmp_path / "changed.json").read_text(encoding="utf-8")) == \
        {"environ": [], "warnings filters": []}


def test_an_estimate_on_the_command_line_reaches_for_no_network(guarded,
                                                                 tmp_path: Path) -> None:
    """QLoRA with its levers: PEFT, bitsandbytes' 4-bit layers and its 8-bit AdamW."""
    config = write_config(tmp_path / "tiny-llama" / "config.json", TINY_LLAMA).parent
    args = ["estimate", f"hf:{config}", "-b", "2", "-s", "16", "--device", "cpu",
            "--precision", "amp-bf16", "--lora-rank", "8", "--quantization", "nf4", "--levers"]
    proc, made = guarded("import guard, runpy, sys; sys.argv[0] = 'generator'; "
                         "runpy.run_module('generator', run_name='__main__', alter_sys=True)",
                         *args)
    assert proc.returncode == 0, proc.stderr
    assert made == []
    assert proc.stderr == ""
    assert "nf4 4-bit weights (QLoRA)" in proc.stdout and "8-bit AdamW" in proc.stdout
