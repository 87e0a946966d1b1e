"""The README's accuracy figures are the accuracy page's, computed from the stored results:
the page computes them on every render, the README states them in prose (its short "how it
is checked"; the page holds the rest: which commit estimated the held-out runs, the rows
that cannot be estimated yet), and a change to the estimate that moves them must move both
(this test says which sentence to mend)."""

from __future__ import annotations

from conftest import REPO_ROOT

from generator.results import load_all
from generator.site.pages import accuracy


def _pct(fraction: float, digits: int) -> str:
    return f"{fraction * 100:.{digits}f} %"


def test_the_readme_states_the_accuracy_pages_worst_and_median_errors() -> None:
    ctx = accuracy.context(load_all(REPO_ROOT / "docs" / "data"), [])
    assert ctx is not None, "no estimate of the published H100 runs is stored"
    summary = ctx["summary"]
    active, reserved = summary["active"], summary["reserved"]
    with_ckpt, memtracker = summary["reserved_ac"], summary["memtracker"]
    readme = " ".join((REPO_ROOT / "README.md").read_text(encoding="utf-8").split())
    for sentence in (
        f"allocated peak is off by at most {_pct(active['worst'], 2)} "
        f"(median {_pct(active['median'], 2)})",
        f"MemTracker, run on the GPU machine, by up to {_pct(memtracker['worst'], 1)}",
        f"reserved peak is off by at most {_pct(reserved['worst'], 1)} "
        f"(median {_pct(reserved['median'], 2)}) on the {reserved['count']} steps without "
        f"checkpointing",
        f"by at most {_pct(with_ckpt['worst'], 1)} (median {_pct(with_ckpt['median'], 2)}) "
        f"on the {with_ckpt['count']} with it",
    ):
        assert sentence in readme, f"README.md should say: {sentence!r}"


def test_the_readme_states_the_multi_gpu_held_out_points_as_the_page_computes_them() -> None:
    from generator.results import reference_runs
    from generator.site.pages.accuracy import multi_gpu
    from generator.units import gib

    readme = " ".join((REPO_ROOT / "README.md").read_text(encoding="utf-8").split())
    rows = multi_gpu.rows(reference_runs.multi_gpu_held_out())
    for row in rows:
        short = "short" if row["ratio"] < 1 else "over"
        sentence = (f"{gib(row['estimated'])} GiB {'reserved ' if row is rows[0] else ''}"
                    f"against {'the published ' if row is rows[0] else ''}"
                    f"{row['point'].published_gib:.1f} GiB on {row['point'].gpus} GPUs "
                    f"({_pct(abs(row['ratio'] - 1), 1)} {short})")
        assert sentence in readme, sentence
