"""From results to the site, without PyTorch.

    results/ ─► render (pages/<page>: data, tables, charts) ─► templates/ ─► docs/<lang>/
                                                                         └► mkdocs (site/)

`derived.py` holds the figures several pages share, `style/` how charts, tables and SVGs
look, `templating.py` the one Jinja environment, `freshness.py` whether docs/ is up to date.
"""
