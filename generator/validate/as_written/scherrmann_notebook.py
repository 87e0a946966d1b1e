"""mscherrmann's notebook "Understand GPU Memory Usage for Language Model Fine-Tuning"
(RTX 3090, February 2024), transcribed as its author wrote it: a held-out source of the
accuracy page (generator/results/reference_data/HELD_OUT.md, source 2;
held_out_as_written.json).

From `assets/jupyter/testGPUMemoryBertTraining.ipynb` of mscherrmann/mscherrmann.github.io
@ 2f5ab7537b4fdd097422e9dc39b87a41975f64ed: its code cells, in their order, line by line,
up to the cell that prints the published figure ("Actual maximum allocated memory by
tensors: 10562.79 MiB", `torch.cuda.max_memory_allocated()`, cell [50]). Left out: the
markdown, and the plots and tables after the figure (cells [53] on), which allocate nothing
on the GPU. The training runs, as the author's did, inside
`torch.profiler.profile(profile_memory=True, ...)`, two iterations of forward, backward,
`optimizer.step()`, `optimizer.zero_grad()`, with `print_gpu_utilization()` (which calls
`torch.cuda.empty_cache()`) between them.

    python -m generator run --gpu "RTX 3090" --steps all \
        generator/validate/as_written/scherrmann_notebook.py --batch-size 4 --seq-len 512

What differs from the notebook, each marked `# AS RUN HERE` where it is:
- `datasets.Dataset` and `pynvml` are not installed here: a stand-in of each, below, gives
  the same rows (a dict of `input_ids` and `labels` tensors per sample) and the same used
  memory (total less free, read from `torch.cuda.mem_get_info()`, which is what NVML
  reports for the device).
- The point's settings are arguments: `--batch-size` and `--seq-len` (the notebook's
  `batch_size = 4`, `seq_len = 512`); `--model` substitutes another model for
  `bert-large-uncased` (a folder with a tiny config, for a quick check of this script; the
  default is the author's). The notebook's `train_bert` ignores its `model_name` and loads
  "bert-large-uncased" itself; here it loads `--model`.
- `TrainingArguments(evaluation_strategy="steps")`: the name was removed in transformers 5
  (`eval_strategy`). The notebook uses TrainingArguments only to hold its settings and
  never evaluates, so the key is renamed and nothing else changes.
- The versions are those installed, not the author's (PyTorch 2.1 or 2.2, transformers
  4.36 or 4.37 by the post's date).
- On the simulated GPU the profiler runs without its CUDA activity and Python stacks
  (generator/simulate/device.py); the code asks for them as the notebook does.
"""

import argparse
import types

PARSER = argparse.ArgumentParser(description=__doc__.splitlines()[0])
PARSER.add_argument("--batch-size", type=int, default=4)
PARSER.add_argument("--seq-len", type=int, default=512)
PARSER.add_argument("--model", default="bert-large-uncased",
                    help="hub id or folder (default: the author's bert-large-uncased)")
ARGS = PARSER.parse_args()
MODEL = ARGS.model

# ── notebook cell [1] ────────────────────────────────────────────────────────────
import matplotlib.patches as patches
import numpy as np
# AS RUN HERE: `datasets` is not installed; a stand-in below (class Dataset).
import torch
from torch.profiler import ProfilerActivity
from transformers import AutoModelForSequenceClassification
import gc
# AS RUN HERE: `pynvml` is not installed; a stand-in below (nvmlInit, ...).
from transformers import TrainingArguments
from torch.utils.data.dataloader import DataLoader
from torch.optim import AdamW
import pandas as pd
import matplotlib.pyplot as plt


# AS RUN HERE: the stand-ins of datasets.Dataset and pynvml.
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


def nvmlInit():
    pass


def nvmlDeviceGetHandleByIndex(index):
    return index


def nvmlDeviceGetMemoryInfo(handle):
    free, total = torch.cuda.mem_get_info(handle)
    return types.SimpleNamespace(total=total, free=free, used=total - free)

# ── notebook cell [3] ────────────────────────────────────────────────────────────
def print_gpu_utilization():
    gc.collect()
    torch.cuda.empty_cache()
    nvmlInit()
    handle = nvmlDeviceGetHandleByIndex(0)
    info = nvmlDeviceGetMemoryInfo(handle)
    print("############################################")
    print("GPU memory statistics")
    print("GPU memory occupied: "+f"{info.used/1024**2:.2f} MiB".rjust(23))
    print("Reserved GPU memory by torch: " +
          f"{torch.cuda.memory_reserved()/1024**2:.2f} MiB".rjust(14))
    print("Allocated GPU memory by torch: " +
          f"{torch.cuda.memory_allocated()/1024**2:.2f} MiB".rjust(13))
    print("############################################\n")

# ── notebook cell [5] ────────────────────────────────────────────────────────────
print_gpu_utilization()

# ── notebook cell [7] ────────────────────────────────────────────────────────────
nvmlInit()
handle = nvmlDeviceGetHandleByIndex(0)
info = nvmlDeviceGetMemoryInfo(handle)
default_gpu_occupation = info.used

# ── notebook cell [9] ────────────────────────────────────────────────────────────
default_gpu_occupation += 300 * 1024**2

# ── notebook cell [11] ────────────────────────────────────────────────────────────
# Define main parameters for this script
batch_size = ARGS.batch_size  # AS RUN HERE: the notebook's 4, as an argument
seq_len = ARGS.seq_len  # AS RUN HERE: the notebook's 512, as an argument
mdl = AutoModelForSequenceClassification.from_pretrained(MODEL)  # AS RUN HERE: MODEL

# ── notebook cell [13] ────────────────────────────────────────────────────────────
# %% Inspect dtype of BERT
dtype = mdl.bert.embeddings.word_embeddings.weight.dtype
print(f"\nDtype of bert weights: {dtype}")
element_size = mdl.bert.embeddings.word_embeddings.weight.element_size()
print(f"Number of bytes of single bert weight: {element_size}")
# Test if every model weight is of the same data type
for par in mdl.parameters():
    assert par.dtype == torch.float32

# ── notebook cell [15] ────────────────────────────────────────────────────────────
# %% Get expected size of BERT weights
expected_memory_model_weights = 0
for par in mdl.parameters():
    expected_memory_model_weights += element_size * par.numel()
expected_memory_model_weights = expected_memory_model_weights

print(
    f"Expected GPU usage by storing model weigths: "
    f"{expected_memory_model_weights / 1024**2:.2f} MiB")

# ── notebook cell [17] ────────────────────────────────────────────────────────────
word_embeddings_shape = mdl.bert.embeddings.word_embeddings.weight.shape
expected_size_word_embeddings = word_embeddings_shape[0] * \
    word_embeddings_shape[1] * element_size

# ── notebook cell [19] ────────────────────────────────────────────────────────────
print(
    f"Memory allocated to GPU before adding embedding weights: "
    f"{torch.cuda.memory_allocated() / 1024**2:.2f} MiB")
tmp = mdl.bert.embeddings.word_embeddings.weight.to("cuda")
allocated_memory_act = torch.cuda.memory_allocated()
print(
    f"Memory allocated to GPU after adding embedding weights: "
    f"{torch.cuda.memory_allocated() / 1024**2:.2f} MiB")
print(
    f"Expected memory allocated to GPU after adding embedding weights: "
    f"{expected_size_word_embeddings / 1024**2:.2f} MiB")

# ── notebook cell [21] ────────────────────────────────────────────────────────────
additional_memory_word_embeddings = allocated_memory_act - \
    expected_size_word_embeddings
expected_memory_model_weights += additional_memory_word_embeddings

del tmp
gc.collect()
torch.cuda.empty_cache()

# ── notebook cell [24] ────────────────────────────────────────────────────────────
hidden_size = mdl.config.hidden_size
intermediate_size = mdl.config.intermediate_size
num_hidden_layers = mdl.config.num_hidden_layers
num_attention_heads = mdl.config.num_attention_heads

print(f"Hidden size: {hidden_size}")
print(f"Intermediate size: {intermediate_size}")
print(f"# hidden layers: {num_hidden_layers}")
print(f"# attention heads: {num_attention_heads}")

# ── notebook cell [29] ────────────────────────────────────────────────────────────
def getNumElementsPerFfwTensor(batch_size, seq_len, model):
    # Get model configurations
    hidden_size = model.config.hidden_size
    intermediate_size = model.config.intermediate_size
    num_hidden_layers = model.config.num_hidden_layers
    num_attention_heads = model.config.num_attention_heads

    # Store number of elements of all tensors during forward pass
    numel_ffw_tensors = {}
    # Input
    numel_ffw_tensors["input"] = 3 * batch_size * seq_len
    # Embedding
    numel_ffw_tensors["embeddings_add"] = batch_size * seq_len * hidden_size
    numel_ffw_tensors["embeddings_layer_norm_bias"] = batch_size * seq_len
    numel_ffw_tensors["embeddings_layer_norm_shift"] = batch_size * seq_len
    numel_ffw_tensors["embeddings_layer_norm"] = batch_size * \
        seq_len * hidden_size
    numel_ffw_tensors["embeddings_dropout"] = batch_size * \
        seq_len * hidden_size
    # Encoder Layers
    for layer_idx in range(num_hidden_layers):
        numel_ffw_tensors[f"layer_{layer_idx}_attention_self_query_dense"] = \
            batch_size * seq_len * hidden_size
        numel_ffw_tensors[f"layer_{layer_idx}_attention_self_key_dense"] = \
            batch_size * seq_len * hidden_size
        numel_ffw_tensors[f"layer_{layer_idx}_attention_self_value_dense"] = \
            batch_size * seq_len * hidden_size
        numel_ffw_tensors[f"layer_{layer_idx}_attention_self_scores"] = \
            num_attention_heads * batch_size * seq_len * seq_len
        numel_ffw_tensors[f"layer_{layer_idx}_attention_self_probs"] = \
            num_attention_heads * batch_size * seq_len * seq_len
        numel_ffw_tensors[
            f"layer_{layer_idx}_attention_self_probs_dropout"] = \
            num_attention_heads * batch_size * seq_len * seq_len
        numel_ffw_tensors[f"layer_{layer_idx}_attention_self_context"] = \
            batch_size * seq_len * hidden_size
        numel_ffw_tensors[f"layer_{layer_idx}_attention_output_dense"] = \
            batch_size * seq_len * hidden_size
        numel_ffw_tensors[
            f"layer_{layer_idx}_attention_output_layer_norm_bias"] = \
            batch_size * seq_len
        numel_ffw_tensors[
            f"layer_{layer_idx}_attention_output_layer_norm_shift"] = \
            batch_size * seq_len
        numel_ffw_tensors[f"layer_{layer_idx}_attention_output_layer_norm"] = \
            batch_size * seq_len * hidden_size
        numel_ffw_tensors[f"layer_{layer_idx}_attention_output_dropout"] = \
            batch_size * seq_len * hidden_size
        numel_ffw_tensors[f"layer_{layer_idx}_intermediate_dense"] = \
            batch_size * seq_len * intermediate_size
        numel_ffw_tensors[f"layer_{layer_idx}_intermediate_gelu"] = \
            batch_size * seq_len * intermediate_size
        numel_ffw_tensors[f"layer_{layer_idx}_output_dense"] = \
            batch_size * seq_len * hidden_size
        numel_ffw_tensors[f"layer_{layer_idx}_output_layer_norm_bias"] = \
            batch_size * seq_len
        numel_ffw_tensors[f"layer_{layer_idx}_output_layer_norm_shift"] = \
            batch_size * seq_len
        numel_ffw_tensors[f"layer_{layer_idx}_output_layer_norm"] = \
            batch_size * seq_len * hidden_size
        numel_ffw_tensors[f"layer_{layer_idx}_output_dropout"] = \
            batch_size * seq_len * hidden_size
    # Pooler
    numel_ffw_tensors["pooler_dense"] = batch_size * hidden_size
    numel_ffw_tensors["pooler_tanh"] = batch_size * hidden_size
    # Classifier
    numel_ffw_tensors["dropout"] = batch_size * hidden_size
    numel_ffw_tensors["target"] = batch_size
    numel_ffw_tensors["classifier"] = batch_size
    return numel_ffw_tensors

# ── notebook cell [31] ────────────────────────────────────────────────────────────
def getExpectedMemoryPerFfwTensor(batch_size, seq_len, model, element_size):
    # Get size per feed forward tensor
    numel_ffw_tensors = getNumElementsPerFfwTensor(batch_size, seq_len, model)
    expected_memory_per_ffw_tensor = {}
    for ffw_tensor in numel_ffw_tensors:
        if "dropout" in ffw_tensor:
            expected_memory_per_ffw_tensor[ffw_tensor] = \
                numel_ffw_tensors[ffw_tensor]
        else:
            expected_memory_per_ffw_tensor[ffw_tensor] = \
                numel_ffw_tensors[ffw_tensor] * element_size
    return expected_memory_per_ffw_tensor

# ── notebook cell [33] ────────────────────────────────────────────────────────────
def getExpectedTotalMemoryFfwTensors(batch_size, seq_len, model, element_size):
    expected_memory_per_ffw_tensor = getExpectedMemoryPerFfwTensor(
        batch_size, seq_len, model, element_size)
    # Calculate memory
    expected_total_memory_ffw_tensors = sum(
        list(expected_memory_per_ffw_tensor.values()))
    return expected_total_memory_ffw_tensors

# ── notebook cell [35] ────────────────────────────────────────────────────────────
print(
    f"Expected GPU usage by storing model weigths: "
    f"{expected_memory_model_weights / 1024**2:.2f} MiB")
# Gradient memory
expected_memory_gradients = expected_memory_model_weights  # Gradients
print(
    f"Expected GPU usage by storing gradients of model weights: "
    f"{expected_memory_gradients / 1024**2:.2f} MiB")
# Optimizer memory
expected_memory_gradient_moments = 2 * \
    expected_memory_model_weights  # Both Adam Moments
print(
    f"Expected GPU usage by storing ADAM moments: "
    f"{expected_memory_gradient_moments / 1024**2:.2f} MiB")
# Forward pass memory
expected_total_memory_ffw_tensors = getExpectedTotalMemoryFfwTensors(
    batch_size, seq_len, mdl, element_size)
print(
    f"Expected GPU usage by storing forward pass tensors: "
    f"{expected_total_memory_ffw_tensors / 1024**2:.2f} MiB")
# cuBLAS workspace size
cublas_workspace_size = 4096 * 1024 * 2 + 16 * 1024 * 8
print(
    f"Expected GPU usage for cuBLAS workspace: "
    f"{cublas_workspace_size / 1024**2:.2f} MiB")

# ── notebook cell [39] ────────────────────────────────────────────────────────────
def train_bert(model_name,
               batch_size,
               seq_len,
               gradient_checkpointing=False,
               fp16=False,
               gradient_accumulation_steps=1,
               num_iterations=2):
    # Load model
    model = AutoModelForSequenceClassification.from_pretrained(
        MODEL)  # AS RUN HERE: MODEL, the notebook's "bert-large-uncased" by default
    # Create arbitrary train data
    dataset_size = 512
    dummy_data = {
        "input_ids": np.random.randint(100, 30000, (dataset_size, seq_len)),
        "labels": np.random.randint(0, 1, (dataset_size)),
    }
    ds = Dataset.from_dict(dummy_data)
    ds.set_format("pt")
    with torch.profiler.profile(
        on_trace_ready=torch.profiler.tensorboard_trace_handler('./log/bert'),
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
    ) as prof:
        default_args = {
            "output_dir": "tmp",
            "eval_strategy": "steps",  # AS RUN HERE: evaluation_strategy, renamed
            "num_train_epochs": 1,
            "log_level": "error",
            "report_to": "none",
        }
        training_args = TrainingArguments(
            per_device_train_batch_size=batch_size,
            gradient_accumulation_steps=gradient_accumulation_steps,
            gradient_checkpointing=gradient_checkpointing,
            fp16=fp16,
            **default_args,
        )
        dataloader = DataLoader(ds,
                                batch_size=batch_size)
        if training_args.gradient_checkpointing:
            model.gradient_checkpointing_enable()

        # Define optimizer to AdamW
        optimizer = AdamW(model.parameters(), lr=1e-5)
        print("Put model on GPU")
        print(
            f"Expected GPU usage by storing model weigths: "
            f"{expected_memory_model_weights / 1024**2:.2f} MiB")
        actual_occupied_memory_by_tensors = torch.cuda.memory_allocated()
        model.to("cuda")
        mem_act = torch.cuda.memory_allocated() - \
            actual_occupied_memory_by_tensors
        print(f"Actual GPU usage by storing model weigths: "
              f"{mem_act / 1024**2:.2f} MiB")
        actual_occupied_memory_by_tensors = torch.cuda.memory_allocated()
        print_gpu_utilization()

        # Enable train modos of model
        model.train()
        for step, batch in enumerate(dataloader, start=1):
            # Need to call this at each step to
            # notify profiler of steps' boundary.
            prof.step()
            if step > num_iterations:
                break

            # Get batch
            batch = {k: batch[k].to("cuda") for k in batch}

            # Forward pass
            if step == 1:
                exp_net_additional_gpu_usage = \
                    expected_total_memory_ffw_tensors + cublas_workspace_size
                print(f"Forward pass iteration {step}")
                print("Expected additional GPU usage "
                      "by storing feedforward tensors: "
                      f"{expected_total_memory_ffw_tensors / 1024**2:.2f} MiB")
                print(f"Expected additional GPU usage for cuBLAS workspace: "
                      f"{cublas_workspace_size / 1024**2:.2f} MiB")
                print(f"Expected net additional GPU usage: "
                      f"{exp_net_additional_gpu_usage / 1024**2:.2f} MiB")
            else:
                print(f"Forward pass iteration {step}")
                print(f"Expected net additional GPU usage: "
                      f"{expected_total_memory_ffw_tensors / 1024**2:.2f} MiB")
            loss = model(**batch).loss
            loss = loss / training_args.gradient_accumulation_steps
            act_net_additional_gpu_usage = \
                torch.cuda.memory_allocated() - \
                actual_occupied_memory_by_tensors
            print(f"Actual net additional GPU usage: "
                  f"{act_net_additional_gpu_usage / 1024**2:.2f} MiB")
            actual_occupied_memory_by_tensors = torch.cuda.memory_allocated()
            print_gpu_utilization()

            # Backward pass
            if step == 1:
                exp_net_diff_gpu_mem = \
                    expected_memory_gradients + cublas_workspace_size - \
                    expected_total_memory_ffw_tensors
                print(f"Backward pass iteration {step}")
                print("Expected released GPU memory by deleting ffw tensors: "
                      f"{expected_total_memory_ffw_tensors / 1024**2:.2f} MiB")
                print("Expected additional GPU usage by "
                      "adding weight gradients: "
                      f"{expected_memory_gradients / 1024**2:.2f} MiB")
                print(f"Expected additional GPU usage for cuBLAS workspace: "
                      f"{cublas_workspace_size / 1024**2:.2f} MiB")
                print(f"Expected net difference in GPU memory: "
                      f"{exp_net_diff_gpu_mem / 1024**2:.2f} MiB")
            else:
                exp_net_diff_gpu_mem = \
                    expected_memory_gradients - \
                    expected_total_memory_ffw_tensors
                print(f"Backward pass iteration {step}")
                print("Expected released GPU memory by deleting ffw tensors: "
                      f"{expected_total_memory_ffw_tensors / 1024**2:.2f} MiB")
                print("Expected additional GPU usage "
                      "by adding weight gradients: "
                      f"{expected_memory_gradients / 1024**2:.2f} MiB")
                print(f"Expected net difference in GPU memory: "
                      f"{exp_net_diff_gpu_mem / 1024**2:.2f} MiB")
            loss.backward()
            act_net_diff_gpu_mem = \
                torch.cuda.memory_allocated() - \
                actual_occupied_memory_by_tensors
            print(f"Actual net difference in GPU memory: "
                  f"{act_net_diff_gpu_mem / 1024**2:.2f} MiB")
            actual_occupied_memory_by_tensors = torch.cuda.memory_allocated()
            print_gpu_utilization()

            # Optimizer step
            if step % training_args.gradient_accumulation_steps == 0:
                print(f"Optimizer step iteration {step}")
                print("When called the first time, Adam's first and "
                      "second moments of gradients "
                      "are initialized and added to GPU memory.")
                if step == 1:
                    print("Expected additional GPU usage by Adam moments: "
                          f"{expected_memory_gradient_moments / 1024**2:.2f} "
                          "MiB")
                else:
                    print("Expected additional GPU "
                          "usage by Adam moments: 0 MiB")
                optimizer.step()
                act_add_gpu_mem_adam = \
                    torch.cuda.memory_allocated() - \
                    actual_occupied_memory_by_tensors
                print(f"Actual additional GPU usage by Adam moments: "
                      f"{act_add_gpu_mem_adam / 1024**2:.2f} MiB")
                actual_occupied_memory_by_tensors = \
                    torch.cuda.memory_allocated()
                print_gpu_utilization()
                # Set gradients to zero
                print(f"Zero grad iteration {step}")
                print(f"Expected released GPU memory by deleting gradients: "
                      f"{expected_memory_gradients / 1024**2:.2f} MiB")
                optimizer.zero_grad()
                act_rel_gpu_mem_grad = \
                    actual_occupied_memory_by_tensors - \
                    torch.cuda.memory_allocated()
                print(f"Actual released GPU memory by deleting gradients: "
                      f"{act_rel_gpu_mem_grad / 1024**2:.2f} MiB")
                actual_occupied_memory_by_tensors = \
                    torch.cuda.memory_allocated()
                print_gpu_utilization()

# ── notebook cell [41] ────────────────────────────────────────────────────────────
print("GPU utilization before training starts:")
print_gpu_utilization()
train_bert(MODEL, batch_size, seq_len)  # AS RUN HERE: MODEL
# %% Write function to get temporary occupation
# of GPU memory for gradient calculations

# ── notebook cell [44] ────────────────────────────────────────────────────────────
def getTempGradientCalculationMemory(batch_size,
                                     seq_len,
                                     model,
                                     element_size):
    intermediate_size = model.config.intermediate_size
    hidden_size = model.config.hidden_size
    gradient_caluculation_memory = \
        batch_size * seq_len * intermediate_size * element_size + \
        intermediate_size * hidden_size * element_size + \
        2 * batch_size * seq_len * intermediate_size + \
        hidden_size * hidden_size * element_size - \
        batch_size * seq_len * hidden_size
    return gradient_caluculation_memory

# ── notebook cell [46] ────────────────────────────────────────────────────────────
def getExpectedMaximumAllocatedMemory(batch_size, seq_len, model, element_size,
                                      expected_memory_model_weights,
                                      cublas_workspace_size):
    expected_total_memory_ffw_tensors = getExpectedTotalMemoryFfwTensors(
        batch_size, seq_len, model, element_size)
    temp_grad_calc_memory = getTempGradientCalculationMemory(
        batch_size, seq_len, model, element_size)
    expected_max_memory_allocated = \
        3 * expected_memory_model_weights + \
        expected_total_memory_ffw_tensors + \
        2 * cublas_workspace_size + \
        temp_grad_calc_memory
    return expected_max_memory_allocated

# ── notebook cell [48] ────────────────────────────────────────────────────────────
expected_max_memory_allocated = \
    getExpectedMaximumAllocatedMemory(batch_size,
                                      seq_len,
                                      mdl,
                                      element_size,
                                      expected_memory_model_weights,
                                      cublas_workspace_size)
print(
    f"Expected maximum allocated memory by tensors: "
    f"{expected_max_memory_allocated / 1024**2:.2f} MiB")

# ── notebook cell [50] ────────────────────────────────────────────────────────────
actual_max_memory_allocated = torch.cuda.max_memory_allocated()
print(
    f"Actual maximum allocated memory by tensors: "
    f"{actual_max_memory_allocated / 1024**2:.2f} MiB")

