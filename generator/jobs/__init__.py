"""From suites to results: read the suite files (`suite.py`, `suites/*.toml`), run each job
in a fresh subprocess (`runner.py` → `worker.py`), reuse what is stored, report progress."""
