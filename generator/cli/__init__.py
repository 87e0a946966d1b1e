"""The command line: the parser and its sub-commands (main.py, commands.py), and `estimate`'s
printout (estimate.py), `run`'s (run.py), and the exit status of a step judged (status.py).
It prints what the answers are; the answers themselves come from
generator.plan and the measuring layer."""
