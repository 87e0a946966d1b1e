"""Planning with an estimate, without PyTorch: the GPUs people train on (gpus.py), whether a
step fits one (fit.py) and the largest batch that does (search.py); and the formulas people
use instead of an estimate (rules_of_thumb.py), which the calculator's page holds against it. The command line, the API,
the pages and the calculator ask here."""
