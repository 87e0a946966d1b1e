"""Benchmarks and the prepared GPU session: scripts run by hand, not by the pipeline.

    python -m generator.bench.run           the whole tool's timings (medians)
    python -m generator.bench.estimate      the estimate's wall time and its CPU error
    python -m generator.bench.accuracy      the accuracy page's table in the terminal
    bash generator/bench/gpu_check.sh OUT   the one command a lent GPU runs (gpu_*.py,
                                            compare_snapshot.py, reserved_start_state.py)
"""
