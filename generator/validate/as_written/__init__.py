"""The accuracy page's held-out sources as their authors wrote them: their loops, their order
of calls, data of the same shapes, each a script run by `python -m generator run` on the
simulated GPU of its setting (generator/results/reference_data/HELD_OUT.md, "As written";
held_out_as_written.json; validate/held_out_scripts.py runs and records them).

    hf_guide             Hugging Face's "Efficient Training on a Single GPU" (Trainer)
    scherrmann_notebook  mscherrmann's notebook (a plain loop inside torch.profiler)
    raschka_fabric       Sebastian Raschka's DistilBERT experiment (Lightning Fabric)
    torchtitan_train     torchtitan's own trainer, with a shipped tokenizer and data set
                         (torchtitan_assets/), for the multi-GPU points
                         (held_out_torchtitan.json; validate/held_out_torchtitan.py)

They are scripts, not modules: run them (`python -m generator run … -m
generator.validate.as_written.hf_guide …`); importing one runs its job. Where each differs
from its source (a stand-in for a package not installed here, generated data, fewer
samples, a renamed keyword) is said in its docstring and marked `# AS RUN HERE` in place.
"""
