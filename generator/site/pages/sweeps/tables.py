"""The sweeps page's Markdown tables, in Chinese or English: the fits, the formula beside
them, the sequence sweep, and the largest batch per GPU. Cells are escaped here."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from generator.site.escaping import markdown_text as escape
from generator.site.tables import markdown_table
from generator.site.tables import precision_swatch as swatch
from generator.units import gib, mib, pct
from generator.words import Words

_TEXT: dict[str, Words] = {
    "precision": Words("Precision", "精度"),
    "per_sample": Words("Per sample (MiB)", "每样本 (MiB)"),
    "acts": Words("activations", "其中激活值"),
    "temps": Words("temporaries", "其中临时张量"),
    "fixed": Words("Fixed part (MiB)", "固定部分 (MiB)"),
    "floor": Words("Floor (GiB)", "下限 (GiB)"),
    "variant": Words("Formula", "公式"),
    "v_fp32": Words("fp32 variant", "fp32 版"), "v_16-bit": Words("16-bit", "16 位版"),
    "f_sample": Words("Formula per sample (MiB)", "公式：每样本 (MiB)"),
    "m_sample": Words("This site: in the layers (MiB)", "本站：各层 (MiB)"),
    "f_error": Words("This site vs formula", "本站比公式"),
    "f_peak": Words("Fixed part + formula at batch {b} (GiB)", "固定部分 + 公式，batch {b} (GiB)"),
    "m_peak": Words("Peak, this site (GiB)", "本站的峰值 (GiB)"),
    "p_error": Words("Formula vs this site", "公式比本站"),
    "seq": Words("Sequence", "序列长度"),
    "peak": Words("Peak (GiB)", "峰值 (GiB)"),
    "layers": Words("Layers (GiB)", "各层激活 (GiB)"),
    "formula": Words("Formula (GiB)", "公式 (GiB)"),
    "quad": Words("s² share", "s² 项占比"),
    "gpu": Words("GPU (memory for a process)", "GPU（进程可用显存）"),
    "none": Words("nothing fits", "放不下"),
}


def _t(key: str, lang: str) -> str:
    return _TEXT[key][lang]


def label(precision: str, group: dict[str, Any], lang: str) -> str:
    """A row's or column's precision: its colour and name, or both colours and both names
    where AMP fp16's row stands for AMP bf16 too (twins.py)."""
    said = group.get("twins") or {"same": False}
    if said["same"] and precision == said["kept"]:
        return f"{swatch(said['kept'], lang)} = {swatch(said['left_out'], lang)}"
    return swatch(precision, lang)


def fit_cells(s: dict[str, Any]) -> list[str]:
    """One precision's row of the fit table, after its name."""
    slopes = s["fit"].category_slopes
    floor = "–" if s["floor"] is None else f"{gib(s['floor'])} (≤ {max(s['fit'].floor_batches)})"
    return [f"**{mib(s['bytes_per_sample'])}**", mib(slopes["activations"]),
            mib(slopes["temporaries"]), mib(s["fixed"]), floor]


def fit_table(group: dict[str, Any], lang: str) -> Markup:
    """Per precision: the fitted bytes per sample (split by category), the fixed part and the
    optimizer step's floor (the residuals are in the page's text)."""
    rows = [[label(p, group, lang)] + fit_cells(s) for p, s in group["shown"].items()]
    headers = [_t(k, lang) for k in ("precision", "per_sample", "acts", "temps", "fixed",
                                     "floor")]
    return markdown_table(headers, rows)


def formula_cells(s: dict[str, Any], lang: str) -> list[str]:
    """One precision's row of the formula table, after its name."""
    f = s["formula"]
    return [_t(f"v_{f['variant']}", lang), mib(f["per_sample"]), mib(f["layers_per_sample"]),
            _signed(f["layers_error"])]


def formula_table(group: dict[str, Any], lang: str) -> Markup:
    """Per precision: the formula's variant and its bytes per sample beside the activations
    the layers were measured to keep per sample."""
    rows = [[label(p, group, lang)] + formula_cells(s, lang) for p, s in group["shown"].items()]
    headers = [_t(k, lang) for k in ("precision", "variant", "f_sample", "m_sample", "f_error")]
    return markdown_table(headers, rows, numeric_from=2)


def prediction_cells(s: dict[str, Any]) -> list[str]:
    """One precision's row of the prediction table, after its name."""
    f = s["formula"]
    return [gib(f["predicted_peak"]), gib(f["measured_peak"]), _signed(f["peak_error"])]


def prediction_table(group: dict[str, Any], lang: str) -> Markup:
    """Per precision: the peak that the fixed part plus the formula predicts at the largest
    batch fitted, beside the measured peak."""
    rows = [[label(p, group, lang)] + prediction_cells(s) for p, s in group["shown"].items()]
    top = max(s["formula"]["at_batch"] for s in group["shown"].values())
    headers = [_t("precision", lang), _t("f_peak", lang).format(b=top), _t("m_peak", lang),
               _t("p_error", lang)]
    return markdown_table(headers, rows)


def seq_cells(s: dict[str, Any]) -> list[list[str]]:
    """One precision's rows of the sequence table, after its name: one per sequence length."""
    rows = []
    for p in s["points"]:
        formula = [gib(p["formula"]), pct(p["quadratic_share"])] if "formula" in p \
            else ["–"] * 2
        rows.append([str(p["seq"]), gib(p["peak"]), gib(p["layers"])] + formula)
    return rows


def seq_table(group: dict[str, Any], lang: str) -> Markup:
    """One row per precision and sequence length: the peak, the layers' activations, and the
    formula with the share of its quadratic attention-score term (how far the measurement
    is from the formula is discussed in the page's text)."""
    rows = [[label(p, group, lang)] + cells for p, s in group["shown"].items()
            for cells in seq_cells(s)]
    headers = [_t(k, lang) for k in ("precision", "seq", "peak", "layers", "formula", "quad")]
    return markdown_table(headers, rows, numeric_from=1)


def largest_cells(s: dict[str, Any], lang: str) -> list[str]:
    """One precision's column of the largest-batch table, one cell per GPU ([] where the
    peak does not grow with the batch: the table prints "–" for it)."""
    cells = []
    for answer in s["largest"]:
        if not answer.batch:
            cells.append(_t("none", lang))
            continue
        exact = "✓" if answer.measured_fits and not answer.disagreements else ""
        marks = ("†" if answer.extrapolated else "") + exact + \
            ("✗" if answer.disagreements else "")
        cells.append(f"**{answer.batch}**{marks} · {gib(answer.needed_bytes)} GiB")
    return cells


def largest_table(group: dict[str, Any], lang: str) -> Markup:
    """GPUs down, precisions across: the largest batch and what it needs by the one rule; †
    marks a batch beyond the largest one in the sweep, ✓ a point of the sweep at exactly that
    batch that fits, ✗ a point whose own verdict disagrees."""
    series = group["shown"]
    answered = next((s["largest"] for s in series.values() if s["largest"]), [])
    columns = [largest_cells(s, lang) or ["–"] * len(answered) for s in series.values()]
    rows = [[f"{escape(gpu.gpu)} ({gib(gpu.memory_bytes)} GiB)"] + [c[i] for c in columns]
            for i, gpu in enumerate(answered)]
    return markdown_table([_t("gpu", lang)] + [label(p, group, lang) for p in series], rows)


def _signed(fraction: float) -> str:
    """A relative difference with its sign, so that 'under' and 'over' read at a glance."""
    text = pct(fraction)
    return text if text.startswith("-") else "+" + text
