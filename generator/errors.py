"""The exceptions a user can provoke, in one tree.

    GeneratorError            a user mistake: printed as one line, exit status 2
    ├── ConfigError           a bad experiment, option or experiments.toml
    ├── ModelError            an unknown model, or a user model that cannot be built
    ├── ResultsError          a results file that cannot be read or is of an unknown schema
    └── OutputError           an output folder that cannot be written

Anything else that escapes is a bug in this tool and keeps its traceback.
"""


class GeneratorError(Exception):
    """A mistake in what the user asked for; the message is one line that names it."""


class ConfigError(GeneratorError):
    """An experiment, a command-line option or experiments.toml is invalid."""


class ModelError(GeneratorError):
    """A model name is unknown, or a user model cannot be imported or built."""


class ResultsError(GeneratorError):
    """A results file is unreadable, truncated, or of a schema this version does not know."""


class OutputError(GeneratorError):
    """An output folder is missing or not writable."""
