"""Sebastian Raschka's DistilBERT mixed-precision experiment (one A100, May 2023), transcribed
as he wrote it: a held-out source of the accuracy page
(generator/results/reference_data/HELD_OUT.md, source 3; held_out_as_written.json).

From rasbt/LLM-finetuning-scripts @ cff61447a8e62224e06a47552881e837cb2cb871,
`conventional/distilbert-movie-review/mixed-precision-experiment/`: `float32-regular.py`,
line by line (`float16-mixed.py`, `bfloat16-mixed.py`, `float16-regular.py` and
`bfloat16-regular.py` are the same script but for Fabric's `precision`, and
`bfloat16-mixed.py`'s one more print of `torch.cuda.is_bf16_supported()`, kept here for
that precision), with `IMDBDataset` from `local_dataset_utilities.py` beside them. Its loop
keeps the author's order of calls: the forward pass, then `optimizer.zero_grad()`, then
`fabric.backward(...)`, then `optimizer.step()`; three epochs, a validation pass after each,
a test pass, then the published figure: "Memory used: X GB",
`torch.cuda.max_memory_reserved() / 1e9`.

    python -m generator run --gpu "A100 40GB" --steps all \\
        generator/validate/as_written/raschka_fabric.py --precision 32-true

What differs from the scripts, each marked `# AS RUN HERE` where it is:
- The data. The scripts download IMDb (50,000 reviews; 35,000 / 5,000 / 5,000 for
  training, validation and test), tokenize each split as one batch with
  `tokenizer(batch["text"], truncation=True, padding=True)` (`map(batched=True,
  batch_size=None)`), so every sample of every split is padded to the split's longest
  review, cut at 512 tokens: IMDb has reviews longer than that, so every split is 512
  tokens wide. Here each split is generated: random token ids, 512 wide, an attention mask
  of ones over a random length and zeros after it (the padding), a label 0 or 1. There is
  no network here and no tokenizer files; the shapes are the scripts'. Far fewer samples
  than IMDb's (`--train-samples`, `--val-samples`, `--test-samples`, default 120, 24, 24):
  every batch has the same shape, so the memory of a step repeats from the second one on,
  and the figure is read once, after the last pass.
- `watermark` is not installed: the versions are printed by a stand-in.
- `--precision` is Fabric's (the five scripts' `32-true`, `16-mixed`, `bf16-mixed`,
  `16-true`, `bf16-true`); `--model` substitutes another model for
  `distilbert-base-uncased` (a folder with a tiny config, for a quick check of this
  script; the default is the author's).
- The versions are those installed, not the author's (torch 2.0.0, lightning 2.0.2,
  transformers 4.28.1, as his logs print them).
"""

import argparse

PARSER = argparse.ArgumentParser(description=__doc__.splitlines()[0])
PARSER.add_argument("--precision", default="32-true",
                    choices=("32-true", "16-mixed", "bf16-mixed", "16-true", "bf16-true"))
PARSER.add_argument("--train-samples", type=int, default=120)
PARSER.add_argument("--val-samples", type=int, default=24)
PARSER.add_argument("--test-samples", type=int, default=24)
PARSER.add_argument("--model", default="distilbert-base-uncased",
                    help="hub id or folder (default: the author's distilbert-base-uncased)")
ARGS = PARSER.parse_args()

import os
import os.path as op
import time

# AS RUN HERE: `from datasets import load_dataset` (no download here: generated splits below)
from lightning import Fabric
import torch
from torch.utils.data import DataLoader
from torch.utils.data import Dataset  # AS RUN HERE: local_dataset_utilities.py's import
import torchmetrics
# AS RUN HERE: `from transformers import AutoTokenizer` (no tokenizer files here)
from transformers import AutoModelForSequenceClassification
# AS RUN HERE: `from watermark import watermark` (not installed: a stand-in below)

# AS RUN HERE: `from local_dataset_utilities import download_dataset,
# load_dataset_into_to_dataframe, partition_dataset` (the download), and IMDBDataset, which
# is copied here from local_dataset_utilities.py as it is there:


class IMDBDataset(Dataset):
    def __init__(self, dataset_dict, partition_key="train"):
        self.partition = dataset_dict[partition_key]

    def __getitem__(self, index):
        return self.partition[index]

    def __len__(self):
        return self.partition.num_rows


# AS RUN HERE: the stand-ins of watermark and of the tokenized IMDb splits.
def watermark(packages, python):
    import platform
    import importlib.metadata as metadata

    lines = [f"Python implementation: {platform.python_implementation()}",
             f"Python version       : {platform.python_version()}", ""]
    lines += [f"{name:<13}: {metadata.version(name)}" for name in packages.split(",")]
    return "\n".join(lines)


class GeneratedSplit:
    """One tokenized split as `imdb_tokenized[split]` gives it after
    `set_format("torch", columns=["input_ids", "attention_mask", "label"])`: `num_rows`, and
    a row as a dict of tensors, every one padded to 512 tokens."""

    def __init__(self, rows, width=512):
        lengths = torch.randint(64, width + 1, (rows,))
        self.columns = {
            "input_ids": torch.randint(1000, 30000, (rows, width)),
            "attention_mask": (torch.arange(width) < lengths[:, None]).long(),
            "label": torch.randint(0, 2, (rows,)),
        }
        self.num_rows = rows

    def __getitem__(self, index):
        return {name: values[index] for name, values in self.columns.items()}


def train(num_epochs, model, optimizer, train_loader, val_loader, fabric):

    for epoch in range(num_epochs):
        train_acc = torchmetrics.Accuracy(task="multiclass", num_classes=2).to(fabric.device)

        model.train()
        for batch_idx, batch in enumerate(train_loader):
            model.train()

            # For non-Fabric PyTorch:
            #for s in ["input_ids", "attention_mask", "label"]:
            #    batch[s] = batch[s].to(device)

            ### FORWARD AND BACK PROP   
            outputs = model(batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["label"]) 
            optimizer.zero_grad()
            
            # For non-Fabric PyTorch:
            #outputs["loss"].backward()
            fabric.backward(outputs["loss"])

            ### UPDATE MODEL PARAMETERS
            optimizer.step()

            ### LOGGING
            if not batch_idx % 300:
                print(f"Epoch: {epoch+1:04d}/{num_epochs:04d} | Batch {batch_idx:04d}/{len(train_loader):04d} | Loss: {outputs['loss']:.4f}")

            model.eval()
            with torch.no_grad():
                predicted_labels = torch.argmax(outputs["logits"], 1)
                train_acc.update(predicted_labels, batch["label"])

        ### MORE LOGGING
        model.eval()
        with torch.no_grad():
            val_acc = torchmetrics.Accuracy(task="multiclass", num_classes=2).to(fabric.device)
            for batch in val_loader:

                # For non-Fabric PyTorch:
                #for s in ["input_ids", "attention_mask", "label"]:
                #    batch[s] = batch[s].to(device)
                outputs = model(batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["label"])
                predicted_labels = torch.argmax(outputs["logits"], 1)
                val_acc.update(predicted_labels, batch["label"])

            print(f"Epoch: {epoch+1:04d}/{num_epochs:04d} | Train acc.: {train_acc.compute()*100:.2f}% | Val acc.: {val_acc.compute()*100:.2f}%")
            train_acc.reset(), val_acc.reset()


if __name__ == "__main__":

    print(watermark(packages="torch,lightning,transformers", python=True))
    print("Torch CUDA available?", torch.cuda.is_available())
    if ARGS.precision == "bf16-mixed":  # AS RUN HERE: bfloat16-mixed.py's one more line
        print("GPU supports bfloat16:", torch.cuda.is_bf16_supported())
    device = "cuda" if torch.cuda.is_available() else "cpu"

    torch.manual_seed(123)

    ##########################
    ### 1 Loading the Dataset
    ##########################
    # AS RUN HERE: sections 1 and 2 (download IMDb, partition it, load the CSVs, tokenize
    # each split padded to its longest review, cut at 512) give way to generated splits of
    # the same width.
    imdb_tokenized = {
        "train": GeneratedSplit(ARGS.train_samples),
        "validation": GeneratedSplit(ARGS.val_samples),
        "test": GeneratedSplit(ARGS.test_samples),
    }
    os.environ["TOKENIZERS_PARALLELISM"] = "false"

    #########################################
    ### 3 Set Up DataLoaders
    #########################################

    train_dataset = IMDBDataset(imdb_tokenized, partition_key="train")
    val_dataset = IMDBDataset(imdb_tokenized, partition_key="validation")
    test_dataset = IMDBDataset(imdb_tokenized, partition_key="test")

    train_loader = DataLoader(
        dataset=train_dataset,
        batch_size=12,
        shuffle=True, 
        num_workers=4,
        drop_last=True,
    )

    val_loader = DataLoader(
        dataset=val_dataset,
        batch_size=12,
        num_workers=4,
        drop_last=True,
    )

    test_loader = DataLoader(
        dataset=test_dataset,
        batch_size=12,
        num_workers=2,
        drop_last=True,
    )


    #########################################
    ### 4 Initializing the Model
    #########################################

    fabric = Fabric(accelerator="cuda", devices=1, precision=ARGS.precision)  # AS RUN HERE: ARGS.precision
    fabric.launch()

    model = AutoModelForSequenceClassification.from_pretrained(
        ARGS.model, num_labels=2)  # AS RUN HERE: ARGS.model

    # model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-5)

    model, optimizer = fabric.setup(model, optimizer)
    train_loader, val_loader, test_loader = fabric.setup_dataloaders(train_loader, val_loader, test_loader)
    fabric.barrier()

    #########################################
    ### 5 Finetuning
    #########################################

    start = time.time()
    train(
        num_epochs=3,
        model=model,
        optimizer=optimizer,
        train_loader=train_loader,
        val_loader=val_loader,
        fabric=fabric
    )

    end = time.time()
    elapsed = end-start
    print(f"Time elapsed {elapsed/60:.2f} min")

    with torch.no_grad():
        model.eval()
        test_acc = torchmetrics.Accuracy(task="multiclass", num_classes=2).to(fabric.device)
        for batch in test_loader:

            #for s in ["input_ids", "attention_mask", "label"]:
            #    batch[s] = batch[s].to(device)
            outputs = model(batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["label"])
            predicted_labels = torch.argmax(outputs["logits"], 1)
            test_acc.update(predicted_labels, batch["label"])

    print(f"Memory used: {torch.cuda.max_memory_reserved() / 1e9:.02f} GB")
    print(f"Test accuracy {test_acc.compute()*100:.2f}%")
