"""Scripts that ship with the package, to try `python -m generator run` on:

    python -m generator run -m generator.examples.plain_loop
"""
