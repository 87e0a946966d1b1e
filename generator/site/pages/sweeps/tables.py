"""The sweeps page's Markdown tables, in Chinese or English: the fits, the formula beside
them, the sequence sweep, and the largest batch per GPU. Cells are escaped here."""

from __future__ import annotations

from html import escape
from typing import Any

from markupsafe import Markup

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


def fit_table(group: dict[str, Any], lang: str) -> Markup:
    """Per precision: the fitted bytes per sample (split by category), the fixed part and the
    optimizer step's floor (the residuals are in the page's text)."""
    rows = []
    for precision, s in group["series"].items():
        slopes = s["fit"].category_slopes
        floor = "–" if s["floor"] is None else \
            f"{gib(s['floor'])} (≤ {max(s['fit'].floor_batches)})"
        rows.append([swatch(precision, lang), f"**{mib(s['bytes_per_sample'])}**",
                     mib(slopes["activations"]), mib(slopes["temporaries"]),
                     mib(s["fixed"]), floor])
    headers = [_t(k, lang) for k in ("precision", "per_sample", "acts", "temps", "fixed",
                                     "floor")]
    return markdown_table(headers, rows)


def formula_table(group: dict[str, Any], lang: str) -> Markup:
    """Per precision: the formula's variant and its bytes per sample beside the activations
    the layers were measured to keep per sample."""
    rows = []
    for precision, s in group["series"].items():
        f = s["formula"]
        rows.append([swatch(precision, lang), _t(f"v_{f['variant']}", lang),
                     mib(f["per_sample"]), mib(f["layers_per_sample"]),
                     _signed(f["layers_error"])])
    headers = [_t(k, lang) for k in ("precision", "variant", "f_sample", "m_sample", "f_error")]
    return markdown_table(headers, rows, numeric_from=2)


def prediction_table(group: dict[str, Any], lang: str) -> Markup:
    """Per precision: the peak that the fixed part plus the formula predicts at the largest
    batch fitted, beside the measured peak."""
    rows, top = [], 0
    for precision, s in group["series"].items():
        f = s["formula"]
        top = f["at_batch"]
        rows.append([swatch(precision, lang), gib(f["predicted_peak"]),
                     gib(f["measured_peak"]), _signed(f["peak_error"])])
    headers = [_t("precision", lang), _t("f_peak", lang).format(b=top), _t("m_peak", lang),
               _t("p_error", lang)]
    return markdown_table(headers, rows)


def seq_table(group: dict[str, Any], lang: str) -> Markup:
    """One row per precision and sequence length: the peak, the layers' activations, and the
    formula with the share of its quadratic attention-score term (how far the measurement
    is from the formula is discussed in the page's text)."""
    rows = []
    for precision, s in group["series"].items():
        for p in s["points"]:
            formula = [gib(p["formula"]), pct(p["quadratic_share"])] if "formula" in p \
                else ["–"] * 2
            rows.append([swatch(precision, lang), str(p["seq"]), gib(p["peak"]),
                         gib(p["layers"])] + formula)
    headers = [_t(k, lang) for k in ("precision", "seq", "peak", "layers", "formula", "quad")]
    return markdown_table(headers, rows, numeric_from=1)


def largest_table(group: dict[str, Any], lang: str) -> Markup:
    """GPUs down, precisions across: the largest batch and what it needs by the one rule; †
    marks a batch beyond the largest one in the sweep, ✓ a point of the sweep at exactly that
    batch that fits, ✗ a point whose own verdict disagrees."""
    series = group["series"]
    answered = next((s["largest"] for s in series.values() if s["largest"]), [])
    rows = []
    for i, gpu in enumerate(answered):
        row = [f"{escape(gpu.gpu)} ({gib(gpu.memory_bytes)} GiB)"]
        for s in series.values():
            answer = s["largest"][i] if s["largest"] else None
            if answer is None:  # the peak does not grow with the batch: no answer
                row.append("–")
                continue
            if not answer.batch:
                row.append(_t("none", lang))
                continue
            exact = "✓" if answer.measured_fits and not answer.disagreements else ""
            marks = ("†" if answer.extrapolated else "") + exact + \
                ("✗" if answer.disagreements else "")
            row.append(f"**{answer.batch}**{marks} · {gib(answer.needed_bytes)} GiB")
        rows.append(row)
    return markdown_table([_t("gpu", lang)] + [swatch(p, lang) for p in series], rows)


def _signed(fraction: float) -> str:
    """A relative difference with its sign, so that 'under' and 'over' read at a glance."""
    text = pct(fraction)
    return text if text.startswith("-") else "+" + text
