"""The hand-drawn SVG diagrams of the article (the AMP memory flow, the house) on the fixture
results and on synthetic sizes from a few KiB to a 7B model: well-formed, accessible,
deterministic, to scale, the fixture's numbers printed, nothing overlapping or clipped."""

import copy
import itertools
import json
import re
import xml.etree.ElementTree as ET

import pytest
from conftest import FIXTURES as ALL_FIXTURES
from page_checks import check_svg

from generator.results.shapes import CATEGORIES
from generator.site.pages.article import diagrams
from generator.site.pages.article.diagram_text import STYLES, text_width
from generator.site.palette import CATEGORY_COLORS

FIXTURES = ALL_FIXTURES / "results" / "estimate"
PRECISIONS = ("fp32", "amp-fp16", "amp-bf16")
NS = {"svg": "http://www.w3.org/2000/svg"}
GIB, KIB = 2**30, 2**10


def load(precision):
    return json.loads((FIXTURES / f"bert-base-b32-s128-{precision}-adamw-estimate.json").read_text())


RESULTS = {p: load(p) for p in PRECISIONS}


def synthetic(precision, sizes, model="synthetic"):
    """A fixture with other sizes: the same bytes live at the peak and at each maximum."""
    result = copy.deepcopy(RESULTS[precision])
    live = dict(zip(CATEGORIES, sizes))
    result["experiment"]["model"] = model
    result.update(live_at_peak_bytes=live, category_max_bytes=dict(live), peak_bytes=sum(sizes))
    return result


# parameters, gradients, optimizer_state, activations, autocast_copies, temporaries
SEVEN_B = {"fp32": (26 * GIB, 26 * GIB, 52 * GIB, 6 * GIB, 0, GIB),
           "amp": (26 * GIB, 26 * GIB, 52 * GIB, 3 * GIB, 13 * GIB, GIB)}
TINY = {"fp32": (4 * KIB, 4 * KIB, 8 * KIB, 200 * KIB, 0, 50 * KIB),
        "amp": (4 * KIB, 4 * KIB, 8 * KIB, 120 * KIB, 2 * KIB, 300 * KIB)}
LOPSIDED = (300, 300, 600, 900 * 2**20, 150, 2**20)  # stores far below the minimum size


def all_diagrams():
    """Every diagram a page may inline together: 3 flows and the house, in both languages."""
    out = {f"flow-{p}-{lang}": diagrams.amp_flow(RESULTS[p], lang)
           for p in PRECISIONS for lang in ("zh", "en")}
    out.update({f"house-{lang}": diagrams.house(RESULTS["fp32"], RESULTS["amp-fp16"], lang)
                for lang in ("zh", "en")})
    return out


def variants():
    """Sizes from a few KiB to a 7B model, and stores too small to draw to scale."""
    for lang, (name, sizes) in itertools.product(("zh", "en"), (("7b", SEVEN_B), ("tiny", TINY))):
        fp32 = synthetic("fp32", sizes["fp32"], "m" * 60)  # a long model name wraps
        amp = synthetic("amp-fp16", sizes["amp"])
        yield f"{name}-flow-fp32-{lang}", diagrams.amp_flow(fp32, lang)
        yield f"{name}-flow-fp16-{lang}", diagrams.amp_flow(amp, lang)
        yield f"{name}-house-{lang}", diagrams.house(fp32, amp, lang)
        yield f"lopsided-{lang}", diagrams.amp_flow(synthetic("amp-bf16", LOPSIDED), lang)
    yield from all_diagrams().items()


DIAGRAMS = all_diagrams()
VARIANTS = dict(variants())


def texts(svg):
    return [t.text for t in ET.fromstring(svg).iter("{%s}text" % NS["svg"])]


def rects(svg, cls):
    return [r.attrib for r in ET.fromstring(svg).iter("{%s}rect" % NS["svg"])
            if r.get("class") == cls]


def area(r):
    return float(r["width"]) * float(r["height"])


def size_by_hand(nbytes):
    return f"{nbytes / 2**20:,.1f} MiB" if nbytes < GIB else f"{nbytes / GIB:.2f} GiB"


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_well_formed_and_accessible(name):
    check_svg(VARIANTS[name], r"diagram-(amp-flow-[a-z0-9-]+|house)-(zh|en)")


def test_deterministic():
    again = all_diagrams()
    assert again == DIAGRAMS
    assert diagrams.amp_flow(copy.deepcopy(RESULTS["amp-fp16"]), "zh") == DIAGRAMS["flow-amp-fp16-zh"]


def test_ids_unique_across_the_diagrams_of_a_page():
    seen = [e.get("id") for svg in DIAGRAMS.values() for e in ET.fromstring(svg).iter()
            if e.get("id")]
    assert len(seen) == len(set(seen))
    assert {ET.fromstring(s).get("id") for s in DIAGRAMS.values()} >= {
        "diagram-amp-flow-amp-fp16-zh", "diagram-house-en"}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_store_and_room_areas_are_proportional_to_bytes(name):
    svg = VARIANTS[name]
    boxes = [r for r in rects(svg, "store") if r.get("data-to-scale") == "true"]
    boxes += rects(svg, "room")
    ratios = [area(r) / int(r["data-bytes"]) for r in boxes]
    assert ratios and max(ratios) / min(ratios) < 1.01
    for r in rects(svg, "store"):
        if r.get("data-to-scale") == "false":  # drawn at the minimum size, and footnoted
            assert float(r["width"]) == diagrams.MIN_SIDE and area(r) / int(r["data-bytes"]) > max(ratios)
            assert "*" in "".join(texts(svg))


def test_lopsided_flow_says_which_boxes_are_not_to_scale():
    svg = VARIANTS["lopsided-en"]
    assert sum(r.get("data-to-scale") == "false" for r in rects(svg, "store")) == 4
    assert "300 B*" in texts(svg) and any("minimum size" in t for t in texts(svg))
    assert "*" not in "".join(texts(DIAGRAMS["flow-amp-fp16-en"]))


def test_flows_at_one_scale():
    biggest = max(max(r["category_max_bytes"].values()) for r in RESULTS.values())
    boxes = [r for p in PRECISIONS
             for r in rects(diagrams.amp_flow(RESULTS[p], "en", scale_bytes=biggest), "store")
             if r.get("data-to-scale") == "true"]
    ratios = [area(r) / int(r["data-bytes"]) for r in boxes]
    assert max(ratios) / min(ratios) < 1.01


def test_house_flats_at_one_scale():
    for lang in ("zh", "en"):
        fp32, amp = rects(DIAGRAMS[f"house-{lang}"], "flat")
        assert (fp32["data-precision"], amp["data-precision"]) == ("fp32", "amp-fp16")
        peaks = RESULTS["fp32"]["peak_bytes"] / RESULTS["amp-fp16"]["peak_bytes"]
        assert area(fp32) / area(amp) == pytest.approx(peaks, rel=0.01)
        rooms = rects(DIAGRAMS[f"house-{lang}"], "room")
        assert sum(map(area, rooms)) == pytest.approx(area(fp32) + area(amp), rel=0.01)
        assert {r["data-category"] for r in rooms} == {
            "parameters", "optimizer_state", "activations", "autocast_copies", "temporaries"}


def test_printed_sizes_are_the_fixture_values():
    for p, lang in itertools.product(PRECISIONS, ("zh", "en")):
        shown = texts(DIAGRAMS[f"flow-{p}-{lang}"])
        for cat in diagrams.MODEL_STATE + diagrams.WORKING[:2]:  # the stores drawn
            nbytes = RESULTS[p]["category_max_bytes"][cat]  # each at its own maximum
            if nbytes:
                assert size_by_hand(nbytes) in shown, (p, lang, cat)
    for lang in ("zh", "en"):
        house = " ".join(texts(DIAGRAMS[f"house-{lang}"]))
        for p in ("fp32", "amp-fp16"):  # each flat is a peak, each room what is live at it
            assert size_by_hand(RESULTS[p]["peak_bytes"]) in house, (lang, p)
            for cat, nbytes in RESULTS[p]["live_at_peak_bytes"].items():
                if nbytes and cat in ("temporaries", "autocast_copies"):
                    assert size_by_hand(nbytes) in house, (lang, p, cat)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_only_fp16_scales_the_loss(lang):
    marks = ("× S", "÷ S", "inf/NaN", "nscale", "反缩放", 'data-step="unscale"')
    fp16 = DIAGRAMS[f"flow-amp-fp16-{lang}"]
    assert 'data-step="unscale"' in fp16 and "× S" in fp16 and "inf/NaN" in fp16
    for p in ("fp32", "amp-bf16"):
        svg = DIAGRAMS[f"flow-{p}-{lang}"]
        assert not [m for m in marks if m in svg] and 'data-step="no-scaler"' in svg
    assert 'data-absent="true"' in DIAGRAMS[f"flow-fp32-{lang}"]  # no autocast copies


def test_model_name_is_escaped():
    result = copy.deepcopy(RESULTS["amp-bf16"])
    result["experiment"]["model"] = 'evil<script>alert("x")</script>\'&'
    for svg in (diagrams.amp_flow(result, "en"), diagrams.house(RESULTS["fp32"], result, "zh")):
        assert "<script" not in svg
        ET.fromstring(svg)
    assert any('evil<script>alert("x")' in t for t in texts(diagrams.amp_flow(result, "en")))


def test_languages():
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for name, svg in DIAGRAMS.items():
        assert bool(cjk.search(svg)) == name.endswith("-zh"), name
    assert {"模型参数", "激活值", "优化器状态"} <= set(texts(DIAGRAMS["flow-fp32-zh"]))
    assert "峰值" in DIAGRAMS["house-zh"]
    with pytest.raises(ValueError, match="lang"):
        diagrams.amp_flow(RESULTS["fp32"], "fr")
    with pytest.raises(ValueError, match="lang"):
        diagrams.house(RESULTS["fp32"], RESULTS["amp-bf16"], "de")


def test_refuses_a_failed_run():
    failed = dict(RESULTS["fp32"], error="out of memory", peak_bytes=None)
    with pytest.raises(ValueError, match="out of memory"):
        diagrams.amp_flow(failed, "en")


def test_theme_colours_and_fonts():
    for svg in DIAGRAMS.values():
        root = ET.fromstring(svg)
        assert root.get("fill") == "currentColor" and "Noto Sans CJK SC" in root.get("font-family")
        assert "#010203" not in svg and "background" not in svg
    fills = {r["fill"] for r in rects(DIAGRAMS["flow-amp-fp16-en"], "store")}
    assert fills == {CATEGORY_COLORS[c] for c in diagrams.MODEL_STATE + diagrams.WORKING[:2]}


# --- nothing overlaps, nothing is clipped ---------------------------------------------------

def _text_boxes(root):
    for t in root.iter("{%s}text" % NS["svg"]):
        size, x, y = float(t.get("font-size")), float(t.get("x")), float(t.get("y"))
        style = "name" if t.get("font-weight") else "size"
        w = text_width(t.text, style) * size / STYLES[style][0]
        x0 = {"start": x, "middle": x - w / 2, "end": x - w}[t.get("text-anchor")]
        yield t.text, (x0, y - size, x0 + w, y + 0.25 * size)


def _segments(root):
    for path in root.iter("{%s}path" % NS["svg"]):
        d = path.get("d")
        if not d.startswith("M") or "Z" in d:
            continue  # the arrow heads inside the markers
        x, y = map(float, re.match(r"M([\d.]+),([\d.]+)", d).groups())
        for cmd, value in re.findall(r"([HV])([\d.]+)", d):
            end = (float(value), y) if cmd == "H" else (x, float(value))
            yield (min(x, end[0]) - 0.5, min(y, end[1]) - 0.5, max(x, end[0]) + 0.5, max(y, end[1]) + 0.5)
            x, y = end


def _overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(a, b):
    return b[0] <= a[0] and b[1] <= a[1] and a[2] <= b[2] and a[3] <= b[3]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_no_overlap_no_clipping(name):
    root = ET.fromstring(VARIANTS[name])
    view = tuple(map(float, root.get("viewBox").split()))
    boxes = list(_text_boxes(root))
    shapes = [(r.get("class"), (float(r.get("x")), float(r.get("y")), float(r.get("x")) + float(r.get("width")),
                                float(r.get("y")) + float(r.get("height"))))
              for r in root.iter("{%s}rect" % NS["svg"]) if r.get("class")]
    for (text, box), (other, box2) in itertools.combinations(boxes, 2):
        assert not _overlap(box, box2), (text, other)
    for text, box in boxes:
        assert _inside(box, view), text
        assert not any(_overlap(box, seg) for seg in _segments(root)), text
        for cls, shape in shapes:  # text lies inside a step or a room, or clear of it
            if cls in ("step", "room"):
                assert _inside(box, shape) or not _overlap(box, shape), (text, cls)
            elif cls in ("store", "flat"):
                assert not _overlap(box, shape) or cls == "flat" and any(
                    _inside(box, room) for c, room in shapes if c == "room"), (text, cls)
    for _, shape in shapes:
        assert _inside(shape, view)
