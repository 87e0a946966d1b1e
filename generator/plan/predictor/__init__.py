"""The calculator's predictor: from a grid of estimates of one model and setting, what a
batch and sequence length not estimated will take, and whether it fits a GPU.

    planes    each category's bytes as a plane over the tokens, fitted to the grid
    replay    the caching allocator replayed on the predicted blocks: the reserved peak
    verdicts  the fit rule's verdict for a GPU, the largest batch, the smallest GPU that fits

The calculator page (site/pages/calculator) shows it and ports it to the widget's
JavaScript; the sweeps page reads its verdicts too.
"""
