"""How much the simulated reserved peak depends on what the allocator holds when training starts.

    python bench/reserved_start_state.py [text a run's name contains ...]

The estimate's allocator simulation starts from the parameters alone. A real process first
builds the model, and building it frees blocks that stay in the allocator's cache: the output
layer's weight that `tie_weights` replaces by the input embedding, and, when the model is
built in fp32 and then cast to 16 bits, every fp32 weight the cast replaces. This script
estimates each published H100 run (the `[[reference]]` table of
generator/jobs/suites/validation.toml) twice: as the estimate does, and with the building of
the model traced and replayed before the first step. It prints estimate ÷ real for both.

What it showed (transformers 4.46, see generator/results/reference_data/SOURCE.md; about two
minutes here): with the building replayed, most fp32 and AMP runs come closer to the H100
(Llama 3.2 1B AMP 1.017 -> 0.998, Gemma 2B b2 s2048 AMP 1.012 -> 1.000, Gemma 2B b8 s512 AMP
1.074 -> 1.062), but runs in pure fp16 with checkpointing, which the H100 ran through the same
code, move away from it (Gemma 2B 0.998 -> 0.891, Llama b1 s16384 1.000 -> 0.836). A freed
block or two at the start moves a simulated reserved peak by several GiB either way, so the
estimate keeps the start it can defend (the parameters alone); which start is real needs a
memory snapshot taken on a GPU. (The allocated column counts from the building, so the
building's own peak can show there; the estimate counts from the first step.)
"""

from __future__ import annotations

import itertools
import sys
import weakref
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils._pytree import tree_flatten  # noqa: E402

from generator.experiment import Experiment  # noqa: E402
from generator.measure import reserved  # noqa: E402
from generator.measure.backends import estimate, measure  # noqa: E402
from generator.measure.reserved import TrackedSteps  # noqa: E402
from generator.measure.timeline import StorageLife  # noqa: E402
from generator.measure.tracker import own_storage  # noqa: E402
from generator.results.reference_runs import runs  # noqa: E402


class BuildTracker(TorchDispatchMode):
    """Every storage an op makes while the model is built and cast, and when it dies; keyed
    like the step's tracker (the storage's id), so the first step finds its parameters."""

    def __init__(self) -> None:
        super().__init__()
        self.clock, self.lives, self._refs = itertools.count(1), [], {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in tree_flatten(out)[0]:
            storage = own_storage(tensor) if isinstance(tensor, torch.Tensor) else None
            if storage is None or storage.nbytes() == 0 or id(storage) in self._refs:
                continue
            life = StorageLife(nbytes=storage.nbytes(), category="parameters",
                               born=next(self.clock), key=id(storage),
                               requested=storage.nbytes())
            self._refs[id(storage)] = weakref.ref(storage, self._ender(id(storage), life))
            self.lives.append(life)
        return out

    def _ender(self, key: int, life: StorageLife):
        def end(_ref) -> None:
            life.died = next(self.clock)
            self._refs.pop(key, None)
        return end


def replay_building() -> None:
    """Trace estimate.run's building of the model and trainer; prepend it to the replay."""
    build, trainer_class, predict = estimate.build_workload, estimate.Trainer, reserved.predict
    traced: list[BuildTracker] = []

    def traced_build(spec, exp):
        traced.append(BuildTracker())
        traced[-1].__enter__()
        return build(spec, exp)

    class TracedTrainer(trainer_class):
        @classmethod
        def create(cls, *args, **kwargs):
            trainer = trainer_class.create(*args, **kwargs)
            traced[-1].__exit__(None, None, None)
            return trainer

    def predict_after_building(steps, **kwargs):
        return predict([TrackedSteps(traced[-1].lives)] + list(steps), **kwargs)

    estimate.build_workload, estimate.Trainer = traced_build, TracedTrainer
    estimate.reserved.predict = predict_after_building


def ratios(names: list[str]) -> dict[str, tuple[float, float]]:
    found = {}
    for run in runs():
        if run.skipped or (names and not any(n in run.name for n in names)):
            continue
        allocator = measure(Experiment.from_dict(run.experiment()))["allocator"]
        found[run.name] = (allocator["peak_allocated_bytes"] / run.active_peak_bytes,
                           allocator["peak_reserved_bytes"] / run.reserved_peak_bytes)
    return found


def main() -> int:
    names = sys.argv[1:]
    plain = ratios(names)
    replay_building()
    built = ratios(names)
    print(f"{'run':<34}{'reserved ÷ real':>16}{'with building':>15}{'allocated':>11}")
    for name, (_, reserved_ratio) in plain.items():
        allocated, built_reserved = built[name]
        print(f"{name:<34}{reserved_ratio:>16.3f}{built_reserved:>15.3f}{allocated:>11.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
