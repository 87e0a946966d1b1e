"""The levers page's tables, in Chinese or English: the ranking by peak saving, the
combinations, and the step times measured with and without each lever."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator.site.escaping import markdown_text as escape
from generator.site.labels import BACKEND_LABELS, kind
from generator.site.lever_results.relations import amount
from generator.site.tables import markdown_table, swatch
from generator.units import gib, mib, pct
from generator.words import Words

Row = dict[str, Any]

TEXT: dict[str, Words] = {
    "rank": Words("#", "#"),
    "lever": Words("Lever", "手段"),
    "levers": Words("Levers together", "组合"),
    "peaks": Words("Tensors' peak (GiB)", "张量峰值（GiB）"),
    "peak": Words("Tensors' peak (GiB)", "张量峰值（GiB）"),
    "reserved_peaks": Words("Reserved peak (GiB)", "已预留峰值（GiB）"),
    "run_peaks": Words("Peak GiB (without → with)", "峰值 GiB（不用 → 用）"),
    "saving": Words("Saving (reserved; tensors)", "节省（已预留；张量）"),
    "saving_tensors": Words("Saving", "节省"),
    "saving_base": Words("Saving on the baseline (reserved; tensors)", "比基线节省（已预留；张量）"),
    "saving_base_tensors": Words("Saving on the baseline", "比基线节省"),
    "acts_on": Words("Acts on", "作用于"),
    "best_part": Words("Best of its parts alone", "其中单项最好的"),
    "in_optimizer": Words(" (optimizer step)", "（优化器步内）"),
    "gap": Words("Reserved − allocated", "已预留 − 已分配"),
    "spread": Words("Spread (slowest − fastest)", "波动（最慢 − 最快）"),
    "default": Words(" (default)", "（默认）"),
    "not_measured": Words("–", "–"),
    "source": Words("Source", "来源"),
    "setting": Words("Setting", "配置"),
    "seconds": Words("s/step (without → with)", "秒/步（不用 → 用）"),
    "colon": Words(": ", "："),
    "change": Words("Change", "变化"),
    "batch": Words("batch {b}, sequence {s}", "batch {b}，序列 {s}"),
    "cores": Words(" ({n} cores)", "（{n} 核）"),
}
NBSP = "\u00a0"


def label(names: dict[str, Words], lever_id: str, lang: str) -> str:
    """A lever's name as a table's row begins: with a capital."""
    text = names[lever_id][lang]
    return text[:1].upper() + text[1:]


def signed_pct(ratio: float) -> str:
    """A step-time ratio as a change: 1.42 → '+42.0 %', 0.78 → '−22.0 %'."""
    change = ratio - 1
    return ("+" if change >= 0 else "−") + pct(abs(change))


def saving_cell(row: Row, by_reserved: bool, lang: str = "en") -> str:
    """What a lever saves: of the reserved peak (what runs out), then of the tensors'; "no
    change" where a reader could not tell the two peaks apart (relations.amount)."""
    tensors = nowrap(amount(row["saving_bytes"], row["ref_peak"])[lang])
    if not by_reserved:
        return tensors
    return nowrap(amount(row["reserved_saving_bytes"], row["ref_reserved"])[lang]) + "<br>" + \
        tensors


def acts_cell(row: Row, lang: str) -> str:
    """The categories whose changes make up the saving, largest first, each with its bytes
    without → with the lever; where no category changed, what the allocator holds beyond
    the tensors (reserved − allocated)."""
    where = TEXT["in_optimizer"][lang] if row["phase"] else ""
    lines = [swatch(cat, lang) + where + "<br>" + nowrap(f"{mib(before)} → {mib(after)} MiB")
             for cat, before, after in row["acts"]]
    if not lines and row["gap_before"] is not None:
        lines.append(escape(TEXT["gap"][lang]) + "<br>" + nowrap(
            f"{mib(row['gap_before'])} → {mib(row['gap_after'])} MiB"))
    return "<br>".join(lines) or TEXT["not_measured"][lang]


def nowrap(text: str) -> str:
    """Numbers and their units stay on one line in a narrow column."""
    return text.replace(" ", NBSP)


def ranking(rows: list[Row], names: dict[str, Words], lang: str,
            by_reserved: bool, ranked: bool = True) -> Markup:
    """The levers by how much they lower the example's reserved peak (its tensors' peak
    where no allocator was modelled), beside the tensors' peak; the category each acts on,
    how much of it goes (step times have their own table). Not `ranked`: the same columns
    without a rank, for levers listed apart (another kind of training)."""
    mixed = len({row["backend"] for row in rows}) > 1
    heads = (("rank",) if ranked else ()) + ("lever", "acts_on") + \
        (("reserved_peaks",) if by_reserved else ()) + \
        ("peaks", "saving" if by_reserved else "saving_tensors")
    headers = [TEXT[k][lang] for k in heads]
    if mixed:
        headers.append(TEXT["source"][lang])
    lines = []
    for row in rows:
        name = label(names, row["id"], lang) + (TEXT["default"][lang] if row["in_baseline"] else "")
        acts = acts_cell(row, lang)
        reserved = [nowrap(f"{gib(row['ref_reserved'])} → **{gib(row['reserved'])}**")] \
            if by_reserved else []
        cells = [*([str(row["rank"])] if ranked else []), name, acts, *reserved,
                 nowrap(f"{gib(row['ref_peak'])} → **{gib(row['peak'])}**"),
                 saving_cell(row, by_reserved, lang)]
        if mixed:
            cells.append(escape(kind(row["result"], lang)))
        lines.append(cells)
    return markdown_table(headers, lines, numeric_from=3 if ranked else 2)


def combos(rows: list[Row], names: dict[str, Words], lang: str, by_reserved: bool) -> Markup:
    """Levers together against the baseline, and beside the best of their parts alone."""
    heads = ("levers", "best_part") + (("reserved_peaks",) if by_reserved else ()) + \
        ("peak", "saving_base" if by_reserved else "saving_base_tensors")
    headers = [TEXT[k][lang] for k in heads]
    held = "reserved" if by_reserved else "peak"
    lines = []
    for row in rows:
        part = row["best_part"]
        best = (f"{label(names, part['id'], lang)}: {nowrap(gib(part[held]) + ' GiB')}"
                if part else "–")
        reserved = [f"**{gib(row['reserved'])}**"] if by_reserved else []
        lines.append([label(names, row["id"], lang), best, *reserved, f"**{gib(row['peak'])}**",
                      saving_cell(row, by_reserved, lang)])
    return markdown_table(headers, lines, numeric_from=2)


def costs(rows: list[Row], names: dict[str, Words], lang: str) -> Markup:
    """The step times that mean something (relations.timing_shown): which runs, where, how
    long, and the spread of their timed steps."""
    headers = [TEXT[k][lang] for k in ("lever", "source", "run_peaks", "seconds", "spread",
                                        "change")]
    lines = []
    for row in rows:
        cost = row["cost"]
        machine = cost["device_name"] or cost["cpu"] or cost["machine"]
        if cost["backend"] == "cpu" and cost["cpu_count"]:
            machine += TEXT["cores"][lang].format(n=cost["cpu_count"])
        setting = f"{cost['model']}, " + TEXT["batch"][lang].format(b=cost["batch_size"],
                                                                     s=cost["seq_len"])
        where = BACKEND_LABELS[cost["backend"]][lang] + TEXT["colon"][lang] + machine
        lines.append([label(names, row["id"], lang), f"{escape(where)}<br>{escape(setting)}",
                      nowrap(f"{gib(cost['ref_peak'])} → {gib(cost['peak'])}"),
                      nowrap(f"{cost['ref_seconds']:.3f} → {cost['seconds']:.3f}"),
                      nowrap(pct(cost["spread"])),
                      f"**{nowrap(signed_pct(cost['ratio']))}**"])
    return markdown_table(headers, lines, numeric_from=2)
