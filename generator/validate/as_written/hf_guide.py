"""Hugging Face's guide "Efficient Training on a Single GPU" (Transformers v4.21.0; a Tesla
V100 16 GB, January 2022), transcribed as its authors wrote it: a held-out source of the
accuracy page (generator/results/reference_data/HELD_OUT.md, source 1;
held_out_as_written.json).

From `docs/source/en/perf_train_gpu_one.mdx` of huggingface/transformers (the copy read:
commit 0016acf7ef421c7fe8eff7945de52c71896c3b01, whose printed figures are those
held_out.json quotes from the v4.21.0 page,
<https://huggingface.co/docs/transformers/v4.21.0/perf_train_gpu_one>): its code blocks, in
their order, line by line, for one experiment per Python process as the guide says ("we
need restart the Python kernel between experiments. Run all steps above and then just one
of the experiments below"). The dummy data, `print_gpu_utilization`, the tiny tensor that
loads the CUDA context, the model loaded onto the GPU, `default_args`, then one experiment:
`TrainingArguments(...)`, `Trainer(model=model, args=training_args, train_dataset=ds)`
(with the guide's bitsandbytes `Adam8bit` built as the guide builds it, for its two 8-bit
experiments), `trainer.train()` and `print_summary(result)`, whose last line is the
published figure ("GPU memory occupied: 14949 MB.", NVML's used memory in MiB).

    python -m generator run --gpu "A100 40GB" --steps all generator/validate/as_written/hf_guide.py \
        --per-device-train-batch-size 4 --dataset-size 32

The experiment's settings are arguments, each a keyword of the guide's `TrainingArguments`
(`--per-device-train-batch-size`, `--gradient-accumulation-steps`,
`--gradient-checkpointing`, `--fp16`), and `--adam8bit` for the guide's "8-bit Adam"
experiments. What differs from the guide, each marked `# AS RUN HERE` where it is:
- `datasets.Dataset` and `pynvml` are not installed here: a stand-in of each gives the same
  rows and the same used memory (total less free, from `torch.cuda.mem_get_info()`).
- `--dataset-size N`: fewer than the guide's 512 sequences of 512 tokens (the default is
  512); every batch has the same shape, so after the second optimizer step every step
  repeats the one before, and the guide's figure is read after training, whatever its
  length.
- `"evaluation_strategy": "steps"`: the name was removed in transformers 5, and today's
  Trainer refuses "steps" without an `eval_dataset`. The guide's runs never evaluated (the
  default `eval_steps` is `logging_steps`, 500, more than the 128 steps of an epoch), so
  `"eval_strategy": "no"` trains as the guide's did.
- `--model` substitutes another model for `bert-large-uncased` (a folder with a tiny config,
  for a quick check of this script); the default is the guide's.
- The versions are those installed, not the guide's (PyTorch 1.10, transformers 4.15 or
  4.16 by the date): today's Trainer defaults to `adamw_torch_fused` where the guide's used
  transformers' own AdamW (`adamw_hf`), and clears gradients to None.
"""

import argparse
import types

PARSER = argparse.ArgumentParser(description=__doc__.splitlines()[0])
PARSER.add_argument("--per-device-train-batch-size", type=int, default=4)
PARSER.add_argument("--gradient-accumulation-steps", type=int, default=1)
PARSER.add_argument("--gradient-checkpointing", action="store_true")
PARSER.add_argument("--fp16", action="store_true")
PARSER.add_argument("--adam8bit", action="store_true",
                    help="the guide's 8-bit Adam experiments (bitsandbytes Adam8bit)")
PARSER.add_argument("--dataset-size", type=int, default=512,
                    help="sequences of dummy data (the guide's 512)")
PARSER.add_argument("--model", default="bert-large-uncased",
                    help="hub id or folder (default: the guide's bert-large-uncased)")
ARGS = PARSER.parse_args()

# ── "Then we create some dummy data" ─────────────────────────────────────────────
import numpy as np
# AS RUN HERE: `datasets` is not installed; a stand-in of its Dataset.
import torch


class Dataset:
    """`datasets.Dataset.from_dict(...)` then `set_format("pt")`: a row is a dict of
    tensors, one per column."""

    def __init__(self, columns):
        self.columns = columns

    @classmethod
    def from_dict(cls, mapping):
        return cls(dict(mapping))

    def set_format(self, kind):
        assert kind in ("pt", "torch")
        self.columns = {name: torch.as_tensor(values) for name, values in self.columns.items()}

    def __len__(self):
        return len(next(iter(self.columns.values())))

    def __getitem__(self, index):
        return {name: values[index] for name, values in self.columns.items()}


seq_len, dataset_size = 512, ARGS.dataset_size  # AS RUN HERE: the guide's 512, 512
dummy_data = {
    "input_ids": np.random.randint(100, 30000, (dataset_size, seq_len)),
    "labels": np.random.randint(0, 1, (dataset_size)),
}
ds = Dataset.from_dict(dummy_data)
ds.set_format("pt")

# ── "We setup a two helper functions" ────────────────────────────────────────────
# AS RUN HERE: `pynvml` is not installed (`from pynvml import *`); a stand-in of the three
# functions the guide calls.


def nvmlInit():
    pass


def nvmlDeviceGetHandleByIndex(index):
    return index


def nvmlDeviceGetMemoryInfo(handle):
    free, total = torch.cuda.mem_get_info(handle)
    return types.SimpleNamespace(total=total, free=free, used=total - free)


def print_gpu_utilization():
    nvmlInit()
    handle = nvmlDeviceGetHandleByIndex(0)
    info = nvmlDeviceGetMemoryInfo(handle)
    print(f"GPU memory occupied: {info.used//1024**2} MB.")


def print_summary(result):
    print(f"Time: {result.metrics['train_runtime']:.2f}")
    print(f"Samples/second: {result.metrics['train_samples_per_second']:.2f}")
    print_gpu_utilization()


print_gpu_utilization()

import torch

torch.ones((1, 1)).to("cuda")
print_gpu_utilization()

# ── "Load Model" ─────────────────────────────────────────────────────────────────
from transformers import AutoModelForSequenceClassification

model = AutoModelForSequenceClassification.from_pretrained(ARGS.model).to("cuda")  # AS RUN HERE: ARGS.model
print_gpu_utilization()

default_args = {
    "output_dir": "tmp",
    "eval_strategy": "no",  # AS RUN HERE: the guide's "evaluation_strategy": "steps"
    "num_train_epochs": 1,
    "log_level": "error",
    "report_to": "none",
}

# ── One experiment ("Vanilla Training", "Gradient Accumulation", "Gradient
# Checkpointing", "FP16 Training", "8-bit Adam"), its settings as arguments ──────────
from transformers import TrainingArguments, Trainer, logging

logging.set_verbosity_error()


training_args = TrainingArguments(
    per_device_train_batch_size=ARGS.per_device_train_batch_size,
    gradient_accumulation_steps=ARGS.gradient_accumulation_steps,
    gradient_checkpointing=ARGS.gradient_checkpointing,
    fp16=ARGS.fp16,
    **default_args,
)

if ARGS.adam8bit:
    # ── "8-bit Adam" ─────────────────────────────────────────────────────────────
    import bitsandbytes as bnb
    from torch import nn
    from transformers.trainer_pt_utils import get_parameter_names

    decay_parameters = get_parameter_names(model, [nn.LayerNorm])
    decay_parameters = [name for name in decay_parameters if "bias" not in name]
    optimizer_grouped_parameters = [
        {
            "params": [p for n, p in model.named_parameters() if n in decay_parameters],
            "weight_decay": training_args.weight_decay,
        },
        {
            "params": [p for n, p in model.named_parameters() if n not in decay_parameters],
            "weight_decay": 0.0,
        },
    ]

    optimizer_kwargs = {
        "betas": (training_args.adam_beta1, training_args.adam_beta2),
        "eps": training_args.adam_epsilon,
    }
    optimizer_kwargs["lr"] = training_args.learning_rate
    adam_bnb_optim = bnb.optim.Adam8bit(
        optimizer_grouped_parameters,
        betas=(training_args.adam_beta1, training_args.adam_beta2),
        eps=training_args.adam_epsilon,
        lr=training_args.learning_rate,
    )

    trainer = Trainer(model=model, args=training_args, train_dataset=ds, optimizers=(adam_bnb_optim, None))
else:
    trainer = Trainer(model=model, args=training_args, train_dataset=ds)
result = trainer.train()
print_summary(result)
