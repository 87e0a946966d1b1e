"""Which results are the calculator's: the experiments of its suites (calculator.toml, the
article's two models; fine_tune.toml, the models people fine-tune).

Read with tomllib and experiment.suite alone, not with jobs.load (which imports the model zoo
and so PyTorch): rendering needs no PyTorch. Results of the grid that no other suite file asks
for belong to the calculator alone; the other pages do not see them (render.py), so that
72 fitting points do not become 72 report sections and a dozen new sweeps.
"""

from __future__ import annotations


from generator.experiment.suite import DEFAULT_SUITE, suite_keys

SUITES = (DEFAULT_SUITE / "calculator.toml", DEFAULT_SUITE / "fine_tune.toml")


def grid_keys() -> frozenset[str]:
    return frozenset().union(*(suite_keys(path) for path in SUITES))


def calculator_only_keys() -> frozenset[str]:
    """Keys of the grid that no other built-in suite file measures too."""
    others = set()
    for path in sorted(DEFAULT_SUITE.glob("*.toml")):
        if path not in SUITES:
            others |= suite_keys(path)
    return grid_keys() - others
