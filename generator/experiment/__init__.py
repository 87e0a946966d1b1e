"""What to measure: one experiment (experiment.py), how each of its options is declared and
checked (option.py), the levers that change it to lower its memory (levers.py), and the suites
that list experiments (suite.py, suites/*.toml).

Torch-free: the site reads experiments and suites without PyTorch.
"""

from generator.experiment.experiment import (
    ATTENTIONS,
    BACKENDS,
    DEVICES,
    HF_PREFIX,
    OPTIMIZERS,
    PRECISIONS,
    Experiment,
    as_held,
    attention_default,
    is_hf_name,
    is_plain_step,
    list_fields,
    option_words,
    options,
    step_defaults,
    step_options_of,
)

__all__ = ["ATTENTIONS", "BACKENDS", "DEVICES", "HF_PREFIX", "OPTIMIZERS", "PRECISIONS",
           "Experiment", "as_held", "attention_default", "is_hf_name", "is_plain_step",
           "list_fields", "option_words", "options", "step_defaults", "step_options_of"]
