"""Hand-designed SVG diagrams: the AMP memory flow and the "house" floor plan.

Every coordinate, label and number is computed here; the templates under templates/article/ only
place what they are given. Text widths are estimated on the wide side (there are no font
metrics at build time), so labels keep their room in any font of FONT_STACK.
"""

from __future__ import annotations

import math
from typing import Any

from generator.results.shapes import CATEGORIES, StepResult
from generator.site.charts import svgtools
from generator.site.labels import CATEGORY_LABELS, PRECISION_LABELS, kind
from generator.site.pages.article.diagram_text import (
    STYLES,
    Lines,
    fmt,
    lines_height,
    lines_width,
    place,
    text_width,
    wrap,
)
from generator.site.palette import CATEGORY_COLORS, FONT_STACK
from generator.site.templating import environment
from generator.units import size as size_text
from generator.words import LANGS, Words

Result = StepResult
MARGIN, GAP = 16.0, 40.0        # canvas margin; between flow columns (an arrow and its label)
MAX_SIDE, MIN_SIDE = 112.0, 8.0  # the largest store box; smaller than MIN_SIDE would vanish
GHOST_SIDE = 30.0               # an absent store (0 bytes): a dashed outline, not to scale
PILL_H = 44.0                   # the height of a step node
FLAT_W, FLAT_H, FLAT_GAP = 300.0, 300.0, 64.0  # the larger flat is FLAT_W × FLAT_H
# Light enough for black text on top (WCAG AA); on the dark scheme extra.css lowers it to
# 0.3 for the light text (an inlined SVG cannot tell the site's scheme by itself).
ROOM_OPACITY = 0.55
MODEL_STATE = ("parameters", "gradients", "optimizer_state")  # kept from step to step
WORKING = ("activations", "autocast_copies", "temporaries")   # made and freed within a step
LOW = {"amp-fp16": "fp16", "amp-bf16": "bf16", "fp32": "FP32"}

TEXT: dict[str, Words] = {
    "weights": Words("FP32 weights", "FP32 权重"),
    "master": Words("FP32 master weights", "FP32 主权重"),
    "copies": Words("{low}, for backward", "{low}，供反向传播用"),
    "no_copies": Words("none in FP32", "FP32 下没有"),
    "saved": Words("saved for backward", "为反向传播保存"),
    "grads": Words("FP32, in .grad", "FP32，存于 .grad"),
    "state": Words("FP32, {opt}", "FP32，{opt}"),
    # steps: (name, what it does) in each language
    "forward": Words(("Forward", "in {low}"), ("前向传播", "{low} 计算")),
    "loss_scaled": Words(("Loss × S", "by GradScaler"), ("损失 × S", "GradScaler 放大")),
    "loss": Words(("Loss", "not scaled"), ("损失", "不缩放")),
    "backward": Words(("Backward", "frees activations"), ("反向传播", "释放激活值")),
    "unscale": Words(("Unscale ÷ S", "inf/NaN check"), ("反缩放 ÷ S", "inf/NaN 检查")),
    "no_scaler": Words(("No GradScaler", {"amp-bf16": "bf16 has FP32's range", "fp32": "not needed"}),
                       ("无 GradScaler", {"amp-bf16": "bf16 范围同 FP32", "fp32": "无需"})),
    "step": Words(("Optimizer step", "in FP32"), ("优化器更新", "FP32 计算")),
    "cast": Words("cast", "转换"),
    "update": Words("update", "更新"),
    "area": Words("Box area ∝ bytes: each store at its largest during the step.",
                  "方块面积 ∝ 字节数：每项取其在一步之中的最大值。"),
    "small": Words("* Too small to draw to scale: shown at the minimum size ({px:g} px).",
                   "* 太小，无法按比例画出：按最小尺寸（{px:g} px）显示。"),
    "run": Words("{model} · batch {batch}{seq} · {opt} — {backend}",
                 "{model} · 批大小 {batch}{seq} · {opt} — {backend}"),
    "seq": Words(" · seq {seq}", " · 序列长度 {seq}"),
    "flow_title": Words("Memory flow of a training step, {precision} ({model})",
                        "一步训练的显存流向，{precision}（{model}）"),
    "flow_desc": Words("{run}: {stores}. {scaler}", "{run}：{stores}。{scaler}"),
    "scaler_yes": Words("The loss is scaled by S; the gradients are unscaled and checked for inf/NaN "
                        "before the FP32 optimizer step.",
                        "损失先乘以 S 放大；FP32 优化器更新之前，梯度先除以 S 并检查 inf/NaN。"),
    "scaler_no": Words("No loss scaling; the optimizer step runs in FP32.",
                       "不缩放损失；优化器更新以 FP32 进行。"),
    "house_title": Words("GPU memory at the peak as a floor plan: {a} and {b}",
                         "峰值时刻的显存户型图：{a} 与 {b}"),
    "flat_desc": Words("{precision}: {rooms}; peak {peak}.", "{precision}：{rooms}；峰值 {peak}。"),
    "freed": Words("{size} less than {other}", "比 {other} 少 {size}"),
    "plan": Words("Area ∝ bytes live at the peak; both flats at one scale. Lower floor: the model's "
                  "state, kept from step to step; upper floor: the step's working memory.",
                  "面积 ∝ 峰值时刻在用的字节数，两套房同一比例尺。下层：模型状态，一步接一步地保留；"
                  "上层：这一步自己用的显存。"),
    "sep": Words(", ", "，"),
}


def _setup(result: Result, lang: str) -> tuple[str, dict[str, Any]]:
    """The result's precision and the texts in `lang`, after refusing what cannot be drawn."""
    if lang not in LANGS:
        raise ValueError(f"lang must be 'zh' or 'en', not {lang!r}")
    precision = result.get("experiment", {}).get("precision")
    if precision not in PRECISION_LABELS:
        raise ValueError(f"unknown precision {precision!r}")
    if result.get("error") or not result.get("category_max_bytes") or not result.get("peak_bytes"):
        raise ValueError(f"nothing to draw: the run failed ({result.get('error')})")
    return precision, {key: pair[lang] for key, pair in TEXT.items()}


def _run_caption(result: Result, lang: str, t: dict[str, Any]) -> str:
    exp = result["experiment"]
    seq = t["seq"].format(seq=exp["seq_len"]) if exp.get("seq_len") else ""
    return t["run"].format(model=exp.get("model"), batch=exp.get("batch_size"), seq=seq,
                           opt=exp.get("optimizer"),
                           backend=kind(result, lang))


def _flow_items(result: Result, precision: str, lang: str, t: dict[str, Any],
                biggest: int) -> tuple[list[dict], list[dict]]:
    """The two rows of the flow, column by column; the bottom row is read right to left."""
    low, fp16, maxima = LOW[precision], precision == "amp-fp16", result["category_max_bytes"]

    def store(cat: str, sub: str) -> dict:
        nbytes = int(maxima.get(cat, 0))
        exact = MAX_SIDE * math.sqrt(nbytes / biggest)
        side, small = (GHOST_SIDE if not nbytes else max(exact, MIN_SIDE)), 0 < exact < MIN_SIDE
        caption = ([(line, "name") for line in wrap(CATEGORY_LABELS[cat][lang], "name")]
                   + [(line, "sub") for line in wrap(sub, "sub")]
                   + [(size_text(nbytes) + ("*" if small else ""), "size")])
        return {"category": cat, "bytes": nbytes, "side": side, "absent": not nbytes,
                "small": small, "color": CATEGORY_COLORS[cat], "caption": caption,
                "w": max(side, lines_width(caption)), "hw": side / 2, "hh": side / 2}

    def step(key: str, texts: tuple[str, str], ghost: bool = False) -> dict:
        lines = [(texts[0], "name"), (texts[1].format(low=low), "sub")]
        w = lines_width(lines) + 24
        return {"key": key, "lines": lines, "ghost": ghost, "w": w, "hw": w / 2, "hh": PILL_H / 2}

    amp, (no_scaler, why) = precision != "fp32", t["no_scaler"]
    scaler = step("unscale", t["unscale"]) if fp16 else step(
        "no-scaler", (no_scaler, why[precision]), ghost=True)
    top = [store("parameters", t["master"] if amp else t["weights"]),
           store("autocast_copies", t["copies"].format(low=low) if amp else t["no_copies"]),
           step("forward", t["forward"]), store("activations", t["saved"]),
           step("loss", t["loss_scaled"] if fp16 else t["loss"])]
    optimizer = t["state"].format(opt=result["experiment"].get("optimizer"))
    bottom = [store("optimizer_state", optimizer), step("optimizer-step", t["step"]), scaler,
              store("gradients", t["grads"]), step("backward", t["backward"])]
    return top, bottom


def amp_flow(result: Result, lang: str, *, scale_bytes: int | None = None,
             id_prefix: str | None = None) -> str:
    """The memory flow of one training step in the result's precision, as a finished SVG.

    Forward runs left to right on the top row, backward and update right to left below, and
    the optimizer step closes the loop on the master weights. The largest store (or one of
    `scale_bytes`, to draw several results at one scale) is MAX_SIDE wide."""
    precision, t = _setup(result, lang)
    maxima = result["category_max_bytes"]
    biggest = max([scale_bytes or 0] + [int(maxima.get(c, 0)) for c in CATEGORIES]) or 1
    top, bottom = _flow_items(result, precision, lang, t, biggest)
    cols = [max(a["w"], b["w"]) for a, b in zip(top, bottom)]
    cx = [MARGIN + sum(cols[:i]) + GAP * i + cols[i] / 2 for i in range(5)]

    def reach(e: dict) -> float:  # from the row's centre line to the far edge of the caption
        return e["hh"] + (8 + lines_height(e["caption"]) if "caption" in e else 0)

    y1 = MARGIN + max(map(reach, top))
    yc = y1 + max(max(e["hh"] for e in top) + 24, 42)  # the corridor of the update arrow
    y2 = yc + 16 + max(e["hh"] for e in bottom)
    stores, steps, texts = [], [], []
    for row, y, sign in ((top, y1, -1), (bottom, y2, 1)):  # captions outside the loop
        for x, e in zip(cx, row):
            box = {**e, "x": fmt(x - e["hw"]), "y": fmt(y - e["hh"]), "w": fmt(e["w"])}
            if "caption" in e:
                stores.append({**box, "s": fmt(e["side"]), "rx": fmt(min(5.0, e["side"] * 0.15)),
                               "to_scale": str(not e["small"]).lower()})
                cap_h = lines_height(e["caption"])
                texts += place(e["caption"], x, y + sign * (e["hh"] + 8) - (sign < 0) * cap_h)
            else:
                steps.append({**box, "h": fmt(PILL_H)})
                texts += place(e["lines"], x, y - lines_height(e["lines"]) / 2)
    arrows = []
    for i in range(4):  # top row left to right, bottom row right to left
        arrows.append((f"M{fmt(cx[i] + top[i]['hw'] + 3)},{fmt(y1)} "
                       f"H{fmt(cx[i + 1] - top[i + 1]['hw'] - 4)}", False))
        arrows.append((f"M{fmt(cx[i + 1] - bottom[i + 1]['hw'] - 3)},{fmt(y2)} "
                       f"H{fmt(cx[i] + bottom[i]['hw'] + 4)}", i == 0))  # step ⇄ its state
    arrows.append((f"M{fmt(cx[4])},{fmt(y1 + top[4]['hh'] + 3)} "
                   f"V{fmt(y2 - bottom[4]['hh'] - 4)}", False))
    arrows.append((f"M{fmt(cx[1])},{fmt(y2 - bottom[1]['hh'] - 3)} V{fmt(yc)} H{fmt(cx[0])} "
                   f"V{fmt(y1 + top[0]['hh'] + 4)}", False))
    texts += place([(t["update"], "note")], (cx[0] + cx[1]) / 2, yc - 20)
    if precision != "fp32":
        texts += place([(t["cast"], "note")], MARGIN + cols[0] + GAP / 2, y1 + 3)
    width = MARGIN * 2 + sum(cols) + GAP * 4
    notes = [_run_caption(result, lang, t), t["area"]]
    notes += [t["small"].format(px=MIN_SIDE)] if any(s["small"] for s in stores) else []
    foot = [(line, "note") for note in notes for line in wrap(note, "note", width - 2 * MARGIN)]
    width, foot_y = max(width, lines_width(foot) + 2 * MARGIN), y2 + max(map(reach, bottom)) + 20
    texts += place(foot, MARGIN, foot_y, anchor="start")
    prefix = id_prefix or f"diagram-amp-flow-{precision}-{lang}"
    svg = environment().get_template("article/amp_flow.svg.j2").render(
        prefix=prefix, width=fmt(width), height=fmt(foot_y + lines_height(foot) + MARGIN),
        font=", ".join(FONT_STACK), precision=precision, stores=stores, steps=steps,
        arrows=[{"d": d, "both": both} for d, both in arrows], texts=texts)
    listed = t["sep"].join(f"{CATEGORY_LABELS[c][lang]} {size_text(int(maxima[c]))}" for c in (
        "parameters", "autocast_copies", "activations", "gradients", "optimizer_state") if maxima.get(c))
    label = PRECISION_LABELS[precision][lang]
    title = t["flow_title"].format(precision=label, model=result["experiment"].get("model"))
    desc = t["flow_desc"].format(run=f"{label} · {_run_caption(result, lang, t)}", stores=listed,
                                 scaler=t["scaler_yes" if precision == "amp-fp16" else "scaler_no"])
    return svgtools.finalize(svg, title=title, desc=desc, id_prefix=prefix)


def _room_label(name: str, size: str, w: float, h: float) -> Lines:
    """The largest label that fits the room with a margin: name and size in the normal, then
    the small type, the size alone, or nothing (the legend carries every figure anyway)."""
    for name_style, size_style in (("name", "size"), ("small", "small_size"), ("", "small_size")):
        items = [(line, name_style) for line in wrap(name, name_style, w - 8)] if name_style else []
        items.append((size, size_style))
        if lines_width(items) <= w - 8 and lines_height(items) <= h - 6:
            return items
    return []


def house(fp32_result: Result, amp_result: Result, lang: str, *,
          id_prefix: str | None = None) -> str:
    """Two flats side by side at one scale (area ∝ bytes live at the peak), one room per
    category: the model's state on the lower floor, the step's working memory above it."""
    (p32, t), (pamp, _) = _setup(fp32_result, lang), _setup(amp_result, lang)
    flats, prefix = [(fp32_result, p32), (amp_result, pamp)], id_prefix or f"diagram-house-{lang}"
    peaks = [int(r["peak_bytes"]) for r, _ in flats]
    lives = [{c: int(r["live_at_peak_bytes"].get(c, 0)) for c in CATEGORIES} for r, _ in flats]
    heads = [PRECISION_LABELS[p][lang] for _, p in flats]
    base, plans, rooms, texts, ghosts = MARGIN + FLAT_H, [], [], [], []  # one ground line
    for i, live in enumerate(lives):
        x0, h = MARGIN + i * (FLAT_W + FLAT_GAP), FLAT_H * peaks[i] / max(peaks)
        y, total = base, max(sum(live.values()), peaks[i])  # bytes not in a category stay empty
        for group in (MODEL_STATE, WORKING):
            group_bytes = sum(live[c] for c in group)
            rh, x = h * group_bytes / total, x0
            y -= rh
            for cat in (c for c in group if live[c] > 0):
                rw = FLAT_W * live[cat] / group_bytes
                rooms.append({"category": cat, "bytes": live[cat], "x": fmt(x), "y": fmt(y),
                              "w": fmt(rw), "h": fmt(rh), "color": CATEGORY_COLORS[cat], "flat": i})
                label = _room_label(CATEGORY_LABELS[cat][lang], size_text(live[cat]), rw, rh)
                texts += place(label, x + rw / 2, y + (rh - lines_height(label)) / 2)
                x += rw
        plans.append({"precision": flats[i][1], "bytes": peaks[i], "x": fmt(x0),
                      "y": fmt(base - h), "w": fmt(FLAT_W), "h": fmt(h), "index": i})
        if FLAT_H - h > 0.5:  # the larger flat's outline: the floor space this one needs less
            ghosts.append({"x": fmt(x0), "y": fmt(MARGIN), "w": fmt(FLAT_W), "h": fmt(FLAT_H - h)})
            freed = [(t["freed"].format(size=size_text(max(peaks) - peaks[i]), other=heads[1 - i]),
                      "sub")]
            if FLAT_H - h >= 24:
                texts += place(freed, x0 + FLAT_W / 2, MARGIN + (FLAT_H - h - lines_height(freed)) / 2)
        change = f" ({(peaks[1] - peaks[0]) / peaks[0] * 100:+.1f} %)".replace("-", "−") if i else ""
        texts += place([(heads[i], "title"), (f"{CATEGORY_LABELS['peak'][lang]} "
                                               f"{size_text(peaks[i])}{change}", "size")],
                        x0 + FLAT_W / 2, base + 10)
    # the legend, a small table: swatch, name, then each flat's bytes under its precision
    rows = [(CATEGORY_LABELS[c][lang], [live[c] for live in lives], c)
            for c in CATEGORIES if any(live[c] for live in lives)]
    rows.append((CATEGORY_LABELS["peak"][lang], peaks, ""))
    name_w = max(text_width(name, "name") for name, _, _ in rows)
    num_w = max([text_width(head, "name") for head in heads]
                + [text_width(size_text(b), "name") for _, nums, _ in rows for b in nums])
    width = MARGIN * 2 + FLAT_W * 2 + FLAT_GAP
    lx = (width - (22 + name_w + 2 * (28 + num_w))) / 2
    col_x = [lx + 22 + name_w + k * (28 + num_w) for k in (1, 2)]
    ly, row_h, swatches = base + 10 + STYLES["title"][0] * 1.32 * 2 + 22, 21.0, []
    for k, x in enumerate(col_x):
        texts += place([(heads[k], "name")], x, ly, anchor="end")
    for r, (name, nums, cat) in enumerate(rows, start=1):
        style, y = ("size", ly + r * row_h) if cat else ("name", ly + r * row_h + 4)
        if cat:
            swatches.append({"x": fmt(lx), "y": fmt(y + 2), "color": CATEGORY_COLORS[cat]})
        texts += place([(name, style)], lx + 22, y, anchor="start")
        for k, x in enumerate(col_x):
            texts += place([(size_text(nums[k]) if nums[k] else "–", style)], x, y, anchor="end")
    rule = {"x1": fmt(lx + 22), "x2": fmt(col_x[1]), "y": fmt(ly + len(rows) * row_h + 1)}
    notes = [(line, "note") for line in wrap(t["plan"], "note", width - 2 * MARGIN)]
    note_y = ly + (len(rows) + 1) * row_h + 18
    texts += place(notes, MARGIN, note_y, anchor="start")
    svg = environment().get_template("article/house.svg.j2").render(
        prefix=prefix, width=fmt(width), height=fmt(note_y + lines_height(notes) + MARGIN),
        font=", ".join(FONT_STACK), plans=plans, rooms=rooms, ghosts=ghosts, texts=texts,
        swatches=swatches, rule=rule, opacity=ROOM_OPACITY)
    desc = " ".join(t["flat_desc"].format(
        precision=heads[i], peak=size_text(peaks[i]), rooms=t["sep"].join(
            f"{CATEGORY_LABELS[c][lang]} {size_text(b)}" for c, b in lives[i].items() if b))
        for i in range(2))
    return svgtools.finalize(svg, title=t["house_title"].format(a=heads[0], b=heads[1]),
                             desc=desc.replace("。 ", "。"), id_prefix=prefix)
