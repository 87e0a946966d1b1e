"""The GPUs the calculator checks a step against: one representative card per common size,
with the total memory `nvidia-smi` reports for it (MiB, as it prints them) and where that
figure was read. The CUDA context each adds on top of reserved memory comes from
generator/plan/gpus.py, by the card's generation.

A card's nvidia-smi total is less than its marketed size (an "80GB" H100 shows 81,559 MiB,
85.5 GB) and is what a process can ask for; the driver keeps a little of it on some cards.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.plan import gpus

MIB = 2 ** 20


@dataclass(frozen=True)
class Card:
    #: The marketed size class (GB), what the widget lists the card under.
    size_gb: int
    #: The name as `nvidia-smi` (and torch.cuda.get_device_name) prints it.
    name: str
    #: Total memory as `nvidia-smi` prints it, MiB.
    total_mib: int
    source: str

    @property
    def total_bytes(self) -> int:
        return self.total_mib * MIB

    @property
    def overheads(self) -> gpus.Overheads:
        found = gpus.for_device_name(self.name)
        if found is None:  # a card without a generation entry could not be checked
            raise ValueError(f"no CUDA context figures for {self.name} in plan/gpus.py")
        return found


CARDS: tuple[Card, ...] = (
    Card(8, "NVIDIA GeForce RTX 3070", 8192,
         "https://github.com/ace-step/ACE-Step/issues/344"),
    Card(12, "NVIDIA GeForce RTX 3060", 12288,
         "https://github.com/geerlingguy/raspberry-pi-pcie-devices/issues/790"),
    Card(16, "NVIDIA RTX A4000", 16376,
         "https://github.com/geerlingguy/raspberry-pi-pcie-devices/issues/791"),
    Card(24, "NVIDIA GeForce RTX 4090", 24564, "https://github.com/RLinf/RLinf/issues/255"),
    Card(40, "NVIDIA A100-SXM4-40GB", 40960,
         "https://github.com/modal-labs/modal-client/pull/2797"),
    Card(48, "NVIDIA L40S", 46068, "https://github.com/modal-labs/modal-client/pull/2797"),
    Card(80, "NVIDIA H100 80GB HBM3", 81559, "https://github.com/NVIDIA/nccl/issues/1264"),
    # The nvidia-smi table of an 8 x H200 node (driver 570.158.01) quoted in a public issue;
    # the same total appears in every H200 listing found.
    Card(141, "NVIDIA H200", 143771, "nvidia-smi on NVIDIA H200, driver 570.158.01"),
)


def card_data() -> list[dict]:
    """The cards as the widget reads them: total bytes and the context range, low and high."""
    return [{"size_gb": c.size_gb, "name": c.name, "total_bytes": c.total_bytes,
             "source": c.source, "generation": c.overheads.name,
             "context_bytes": [c.overheads.context_bytes_low, c.overheads.context_bytes_high]}
            for c in CARDS]
