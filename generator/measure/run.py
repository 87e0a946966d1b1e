"""One experiment measured in this process, into a complete result; one study likewise.

What the worker runs for each job (jobs/worker.py) and what the API calls (generator/api.py):
the backend's figures, wrapped with what the results store keeps beside them (the experiment,
its key, the environment, the method's version, when), or an out-of-memory step as a result
with its error rather than a crash.
"""

from __future__ import annotations

from datetime import datetime, timezone

from generator.errors import BackendUnavailable, ConfigError, GeneratorError, ModelError
from generator.experiment import Experiment
from generator.measure.studies import Study
from generator.results import SCHEMA_VERSION
from generator.results.shapes import StepResult, StudyResult


def stamp() -> str:
    """Now, in UTC, to the second: when a result was measured."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def measure_to_result(exp: Experiment) -> StepResult:
    """Measure `exp` here and wrap its figures into a complete result."""
    from generator.measure.backends import is_out_of_memory, measure

    try:
        figures = measure(exp)
    except GeneratorError:
        raise
    except SystemExit as exit:  # the model's own code (its make_batch, loss or forward)
        from generator.measure.models.user import ended

        raise ModelError(f"{exp.model}: the model's code raised SystemExit: {ended(exit)}") \
            from None
    except Exception as error:  # an out-of-memory step is a result, not a crash
        if _is_size_overflow(error):
            raise ConfigError(f"batch_size {exp.batch_size} × seq_len {exp.seq_len} is more "
                              f"than {exp.model} can hold: a tensor of the step would have "
                              "more bytes than PyTorch can count (2⁶³)") from None
        if not is_out_of_memory(error):
            raise
        figures = {"error": "out_of_memory", "error_detail": str(error).splitlines()[0][:300]}
    return step_result(exp, figures)


def step_result(exp: Experiment, figures: dict) -> StepResult:
    """A step's figures wrapped with what the results store keeps beside them: the
    experiment, its key, the environment, the method's version, when (the backends' runs
    here, the user's own tracked step in track.py)."""
    from generator.measure.backends import METHOD_VERSION
    from generator.measure.environment import describe

    return {
        "schema_version": SCHEMA_VERSION,
        "key": exp.key,
        "experiment": exp.to_dict(),
        "backend": exp.backend,
        "method_version": METHOD_VERSION,
        "environment": describe(exp.backend),
        "measured_at": stamp(),
        "error": None,
        "error_detail": None,
        **figures,  # may set error and error_detail
    }


def _is_size_overflow(error: BaseException) -> bool:
    """PyTorch's refusal of a tensor whose byte count overflows int64 (a batch of 10¹⁶)."""
    return isinstance(error, RuntimeError) and "size calculation overflowed" in str(error)


def study_to_result(study: Study) -> StudyResult:
    """Run `study` here and wrap its data into a complete study result."""
    from generator.measure import studies
    from generator.measure.backends import backend_available, is_out_of_memory

    reason = backend_available(study.backend)
    if reason:
        raise BackendUnavailable(f"cannot run study {study.name!r}: {reason}")
    kind = studies.module(study.kind)
    error, data = None, {}
    try:
        data = kind.run(study.params)
    except GeneratorError:
        raise
    except Exception as exc:
        if not is_out_of_memory(exc):
            raise
        error = "out_of_memory"
    return study_result(study, data, error=error)


def study_result(study: Study, data: dict, *, error: str | None = None) -> StudyResult:
    """A study's data wrapped with what the results store keeps beside it (study_to_result)."""
    from generator.measure import studies
    from generator.measure.environment import describe

    return {"schema_version": SCHEMA_VERSION, "study": study.to_dict(),
            "method_version": studies.module(study.kind).VERSION,
            "environment": describe(study.backend), "measured_at": stamp(), "error": error,
            "data": data}
