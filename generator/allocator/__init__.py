"""PyTorch's CUDA caching allocator, modelled without PyTorch: its rules (caching.py, with
blocks.py and expandable.py) and the alloc/free traces it replays (trace.py). The estimate
backend feeds it the storages a step's tracker saw; the calculator replays a trace fitted
over sizes. Nothing here imports torch, so the site can use it too.
"""
