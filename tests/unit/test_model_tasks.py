"""The tasks read without PyTorch (experiment.BUILT_IN_TASKS, task_of_architectures) are the
ones the zoo builds: each built-in transformer's class, on the meta device (no memory), ends
as its task's architectures do."""

from __future__ import annotations

import pytest
import torch

from generator.experiment.experiment import BUILT_IN_TASKS, HF_TASK_HEADS, task_of_architectures
from generator.measure.models import MODELS


@pytest.mark.parametrize("name", sorted(BUILT_IN_TASKS))
def test_built_in_tasks_are_the_classes_built(name: str) -> None:
    with torch.device("meta"):
        model = MODELS[name].build().model
    assert task_of_architectures([type(model).__name__]) == BUILT_IN_TASKS[name]


def test_a_configs_architectures_name_its_task() -> None:
    assert task_of_architectures(["LlamaForCausalLM"]) == "causal-lm"
    assert task_of_architectures(["GPT2LMHeadModel"]) == "causal-lm"
    assert task_of_architectures(["Unknown", "BertForMaskedLM"]) == "masked-lm"
    assert task_of_architectures(["BertModel"]) is None
    assert task_of_architectures(None) is None
    assert set(HF_TASK_HEADS) == {"causal-lm", "masked-lm", "seq2seq-lm",
                                  "sequence-classification", "image-classification",
                                  "contrastive"}
