"""The charts' house style (canvas.py), the charts of one step (step_charts.py) and SVG
clean-up (svgtools.py)."""
