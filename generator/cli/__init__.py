"""The command line: the parser and its sub-commands (main.py, commands.py), and `estimate`'s
printout (estimate.py) and `run`'s (run.py). It prints what the answers are; the answers
themselves come from generator.plan and the measuring layer."""
