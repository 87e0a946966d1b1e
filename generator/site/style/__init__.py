"""How the site looks, shared by every page: the charts' house style (charts.py) and the
charts of one step (step_charts.py), Markdown tables, colours, labels and SVG clean-up."""
