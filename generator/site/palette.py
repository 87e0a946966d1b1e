"""One colour per category, everywhere: tables, charts and diagrams.

Okabe & Ito's colour-blind-safe palette; every fill is a mid-tone that reads on the white and
the dark slate backgrounds of mkdocs-material. Text and lines use `currentColor`, so an SVG
inlined into a page takes the theme's text colour in light and in dark mode.
"""

CATEGORY_COLORS = {
    "parameters": "#0072B2",
    "gradients": "#E69F00",
    "optimizer_state": "#009E73",
    "activations": "#D55E00",
    "autocast_copies": "#CC79A7",
    "temporaries": "#8C8C8C",
    "not_attributed": "#5F5F5F",  # neutral like temporaries, darker: unexplained bytes
    "allocator_overhead": "#56B4E9",
    "runtime": "#B8A900",
    "comm_buffers": "#56B4E9",  # sharding only: FSDP2's gathered weights, DDP's buckets
}

#: One colour per precision, for charts that compare precisions (sweeps, training curves);
#: distinct from the category colours.
PRECISION_COLORS = {"fp32": "#6A5ACD", "amp-fp16": "#D6336C", "amp-bf16": "#1F9E89",
                    "fp16": "#B35806", "bf16": "#2B8CBE"}

#: matplotlib draws text and axes in this colour; svgtools turns it into currentColor.
INK = "#010203"
#: The ink of a chart shown as an image (its SVG file): near-black, as the page's text.
FILE_INK = "#1a1a1a"
#: The CSS font stack for text in SVGs: CJK fonts first where the reader has them.
FONT_STACK = ("Noto Sans CJK SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei",
              "WenQuanYi Micro Hei", "DejaVu Sans", "sans-serif")
