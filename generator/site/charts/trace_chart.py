"""The allocator's history of a simulated run, drawn from its memory snapshot's trace: the
allocated and the reserved bytes after each of the allocator's events, as PyTorch's memory
visualizer draws the same trace (its timeline of active memory, and the segments around it).
The page "Run your own script" shows it.
"""

from __future__ import annotations

from typing import Any

from generator import units
from generator.site.charts.canvas import MIB, chart_figure, chart_svg
from generator.site.charts.svgtools import finalize
from generator.site.palette import INK
from generator.words import Words

_WORDS = {
    "allocated": Words("allocated (torch.cuda.memory_allocated)",
                       "已分配（torch.cuda.memory_allocated）"),
    "reserved": Words("reserved (torch.cuda.memory_reserved)",
                      "已预留（torch.cuda.memory_reserved）"),
    "x": Words("the allocator's events, in order", "分配器的事件，按先后"),
    "y": Words("MiB on the simulated GPU", "模拟 GPU 上的 MiB"),
    "title": Words("The simulated run's memory snapshot: allocated and reserved over its "
                   "allocator's {events} events", "模拟运行的显存快照：分配器 {events} 个事件中的"
                   "已分配与已预留"),
    "desc": Words("Estimated on a simulated {gpu}. Allocated peaks at {allocated} MiB, reserved "
                  "at {reserved} MiB.", "在模拟的 {gpu} 上估算。已分配峰值 {allocated} MiB，"
                  "已预留峰值 {reserved} MiB。"),
}


def allocator_timeline(name: str, timeline: dict[str, Any], gpu: str, lang: str) -> str:
    """Two step lines over the events (each point is the largest value of its run of events,
    so the peaks stand as they are)."""
    say = {key: words[lang] for key, words in _WORDS.items()}
    events = [0, *timeline["events"]]
    with chart_figure(name, lang, 3.6) as (fig, ax):
        for key, style in (("reserved", "--"), ("allocated", "-")):
            values = [0.0, *(v / MIB for v in timeline[key])]
            ax.step(events, values, where="pre", color=INK, linestyle=style, linewidth=1.2,
                    label=say[key])
        ax.set_xlim(0, events[-1])
        ax.set_ylim(0, max(timeline["reserved"]) / MIB * 1.15)
        ax.set_xlabel(say["x"])
        ax.set_ylabel(say["y"])
        ax.grid(axis="y")
        fig.legend(loc="outside lower center", ncol=2)
        svg = chart_svg(fig, name, lang)
    title = say["title"].format(events=events[-1])
    desc = say["desc"].format(gpu=gpu, allocated=units.mib(max(timeline["allocated"])),
                              reserved=units.mib(max(timeline["reserved"])))
    return finalize(svg, title=title, desc=desc, id_prefix=f"chart-{name}-{lang}")
