"""The calculator's grid, below the pages that read it (the calculator's page and widget; the
sweeps page's largest batch):

    keys      which results are the grid's (its suite files)
    settings  what a reader picks of each: method, precision, levers, with their words
    fits      each model and setting fitted from its estimates, and its predictor
"""
