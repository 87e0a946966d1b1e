"""The calculator page in Chromium, in both languages, built from the fixture results and the
committed grid: what the widget shows equals its Python twin (verdicts.py); at held-out
sizes its allocated and reserved peaks equal fresh estimates within 0.5 %
(calculator_cases.py); the choices live in the address; bad input gets a message, never NaN,
a blank result or a console error; the home page and a report lead to it."""

from __future__ import annotations

import json
import shutil
from urllib.parse import urlencode

import pytest
from browser_harness import FIXTURE_RESULTS, open_page, shared_site
from calculator_cases import cases, fresh
from conftest import REPO_ROOT

from generator.plan.predictor import verdicts
from generator.site.calculator_grid import keys as grid

pytestmark = pytest.mark.browser
OUTSIDE = {"en": "Outside the fitted range", "zh": "超出拟合范围"}
FITS_WORD = {"en": "fits", "zh": "放得下"}
PAGE = {"en": "en/calculator/", "zh": "calculator/"}
WITHIN = 0.005
#: What a reader may type: nothing, zero, negative, fractional, words, and absurd sizes (a GPU
#: memory too small to print as more than 0.00 GiB among them).
BAD = {"batch": ["", "0", "-3", "2.5", "abc", "1e3", "99999999999"],
       "seq": [" ", "0", "-1", "0.5", "many", "123456789012"],
       "gpu_memory": ["-8", "0", "lots", "1e9", "99999999", "0.004", "0.0000000001"]}


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    """Overrides browser_harness's fixture: the fixture results and the calculator's grid."""
    def results(root):
        folder = root / "results"
        shutil.copytree(FIXTURE_RESULTS, folder)
        for key in grid.grid_keys():
            shutil.copy(REPO_ROOT / "docs" / "data" / "estimate" / f"{key}.json", folder / "estimate")
        return folder

    return shared_site(tmp_path_factory, "calculator", results)


@pytest.fixture(scope="module")
def data(built_site):
    """The top-level data, each model's fits and each setting's templates, as built."""
    folder = built_site / "docs" / "data"
    top = json.loads((folder / "calculator.json").read_text(encoding="utf-8"))
    fits, templates = [], {}
    for model in top["models"]:
        text = (folder / "calculator" / f"model-{model['slug']}.js").read_text(encoding="utf-8")
        fits += json.loads(text.split("] = ", 1)[1].rstrip().rstrip(";"))
    for path in (folder / "calculator").glob("*.js"):
        if path.name.startswith("model-"):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            name = json.loads(line.split(")[", 1)[1].split("] = ", 1)[0])
            templates[name] = json.loads(line.split("] = ", 1)[1].rstrip(";"))
    return {**top, "fits": fits, "templates": templates}


def _choose(session, site, lang, **choices) -> None:
    """The page opened on these choices, through its address, and its answer shown."""
    open_page(session, site, PAGE[lang] + "?" + urlencode(choices), settle=False)
    session.page.wait_for_selector(".calc[data-ready=true]")
    session.page.wait_for_selector("[data-figure=reserved], .calc-invalid, .calc-nofit")


def _bytes(session, figure: str) -> float:
    return float(session.page.get_attribute(f"[data-figure={figure}]", "data-bytes"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_widget_matches_python(lang, site, session, data):
    model, batch, seq = "hf:meta-llama/Llama-3.2-1B", 24, 1024
    fit = next(f for f in data["fits"] if f["model"] == model and f["method"] == "full"
               and f["precision"] == "amp-bf16" and f["levers"] == "ckpt")
    _choose(session, site, lang, model=model, method="full", precision="amp-bf16",
            levers="ckpt", batch=batch, seq=seq)
    p = session.page
    for name in ("model", "method", "precision", "batch", "seq", "gpu"):
        assert p.locator(f".calc [name={name}]").count() == 1
    gpu = next(g for g in data["gpus"] if g["name"] == data["start"]["gpu"])
    shown = verdicts.figures(fit, gpu, batch, seq, data["templates"])
    assert _bytes(session, "allocated") == shown["allocated"]
    assert _bytes(session, "reserved") == shown["reserved"]
    assert p.locator(".calc-outside").count() == 0
    assert p.locator(".calc-bar-part").count() >= 3  # what fills the peak
    assert {"en": "estimated", "zh": "估算"}[lang] in p.inner_text(".calc-kind")
    rows = p.locator(".calc-cards tbody tr")
    assert rows.count() == len(data["gpus"])
    for i, g in enumerate(data["gpus"]):
        row = rows.nth(i)
        assert row.get_attribute("data-gpu") == g["name"]
        expected = verdicts.verdict(fit, g, batch, seq, data["templates"]).word
        assert row.locator(".calc-verdict").get_attribute("data-verdict") == expected
        if expected == "yes":
            assert row.locator(".calc-verdict").inner_text() == FITS_WORD[lang]
        assert int(row.locator(".calc-largest").get_attribute("data-batch")) == \
            verdicts.largest_batch(fit, g, seq, data["templates"])
    p.fill(".calc input[name=batch]", "1")
    p.fill(".calc input[name=seq]", "100")  # below the fitted range
    p.keyboard.press("Tab")
    assert OUTSIDE[lang] in p.inner_text(".calc-outside")
    session.assert_clean(aborts_ok=True)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_widget_opens_on_the_pages_first_answer(lang, site, session, data):
    """With no choice in the address, the widget shows the opening setting (LoRA on bf16
    weights with checkpointing) and the reserved peak the page states without JavaScript."""
    open_page(session, site, PAGE[lang], settle=False)
    p = session.page
    p.wait_for_selector(".calc[data-ready=true]")
    p.wait_for_selector("[data-figure=reserved]")
    start = data["start"]
    assert (start["method"], start["precision"], start["levers"]) == ("lora", "bf16", "ckpt")
    for name in ("model", "method", "precision", "levers", "batch", "seq", "gpu"):
        assert p.input_value(f".calc [name={name}]") == str(start[name]), name
    fit = next(f for f in data["fits"] if all(f[k] == start[k] for k in
                                              ("model", "method", "precision", "levers")))
    gpu = next(g for g in data["gpus"] if g["name"] == start["gpu"])
    shown = verdicts.figures(fit, gpu, start["batch"], start["seq"], data["templates"])
    assert _bytes(session, "reserved") == shown["reserved"]
    said = f"{round(shown['reserved'] / 2**30, 2):.2f} GiB"
    assert said in p.inner_text("article")  # the page's own first answer, before the widget
    session.assert_clean(aborts_ok=True)


def test_the_address_keeps_the_choices(site, session):
    _choose(session, site, "en", model="hf:google/gemma-2b", method="qlora", precision="bf16",
            levers="ckpt", batch=3, seq=4000, gpu="NVIDIA L4")
    p = session.page
    first = (_bytes(session, "allocated"), _bytes(session, "reserved"))
    p.fill(".calc input[name=batch]", "5")
    p.wait_for_function("() => location.search.includes('batch=5')")
    changed = p.url
    open_page(session, site, PAGE["en"], settle=False)  # the plain page opens elsewhere
    p.goto(changed)
    p.wait_for_selector("[data-figure=reserved]")
    assert p.input_value(".calc [name=model]") == "hf:google/gemma-2b"
    assert p.input_value(".calc [name=method]") == "qlora"
    assert p.input_value(".calc [name=gpu]") == "NVIDIA L4"
    assert p.input_value(".calc [name=batch]") == "5"
    assert (_bytes(session, "allocated"), _bytes(session, "reserved")) != first
    session.assert_clean(aborts_ok=True)


CASES = cases()


def test_held_out_sizes_against_fresh_estimates(site, session):
    """Each sampled held-out case (one per family and method), typed into the widget through
    its address."""
    estimates = fresh()
    misses = []
    for case in CASES:
        fit = case["fit"]
        _choose(session, site, "en", model=fit["model"], method=fit["method"],
                precision=fit["precision"], levers=fit["levers"], batch=case["batch"],
                seq=case["seq"])
        truth = estimates[case["id"]]["allocator"]
        for figure, field in (("allocated", "peak_allocated_bytes"),
                              ("reserved", "peak_reserved_bytes")):
            shown = _bytes(session, figure)
            if abs(shown - truth[field]) > WITHIN * truth[field]:
                misses.append(f"{case['id']} {figure}: widget {shown:,.0f}, "
                              f"fresh estimate {truth[field]:,}")
    assert not misses, "\n".join(misses)
    session.assert_clean(aborts_ok=True)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_input_gets_a_message(lang, site, session):
    _choose(session, site, lang, model="hf:Qwen/Qwen2.5-0.5B", method="lora", batch=2, seq=512)
    p = session.page
    for field, values in BAD.items():
        for value in values:
            p.fill(f".calc input[name={field}]", value)
            p.keyboard.press("Tab")
            result = p.inner_text(".calc-result")
            assert p.locator(".calc-invalid").count() >= 1, (field, value, result)
            assert result.strip() and "NaN" not in result and "undefined" not in result, \
                (field, value, result)
        p.fill(f".calc input[name={field}]", {"batch": "2", "seq": "512", "gpu_memory": ""}[field])
        p.keyboard.press("Tab")
        p.wait_for_selector("[data-figure=reserved]")
    p.fill(".calc input[name=gpu_memory]", "24")  # a size instead of a GPU of the catalogue
    p.keyboard.press("Tab")
    assert p.locator(".calc-cards tbody tr[data-gpu=custom]").count() == 1
    session.assert_clean(aborts_ok=True)


@pytest.mark.parametrize("page", ["", "en/"])
def test_the_home_page_leads_to_the_calculator(page, site, session):
    open_page(session, site, page)
    link = session.page.locator("a[href*='calculator/']").first
    link.click()
    session.page.wait_for_selector(".calc[data-ready=true]")
    session.page.wait_for_selector("[data-figure=reserved]")
    session.assert_clean(aborts_ok=True)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_widget_passes_axe(scheme, site, session):
    """The accessibility test's axe run on the calculator with an answer shown, a size
    outside the fitted range warned of, and a bad input's message, in both languages; and
    the form reachable by keyboard alone: Tab moves through its fields in order."""
    from test_accessibility import _axe, _blocking

    axe = _axe()
    session.page.emulate_media(color_scheme=scheme)
    found = []
    for lang in ("en", "zh"):
        _choose(session, site, lang, model="hf:meta-llama/Llama-3.2-1B", method="lora",
                batch=2, seq=100)  # outside the range: its warning shown
        found += _blocking(axe.run(session.page).response, PAGE[lang], scheme)
        session.page.fill(".calc input[name=batch]", "-1")
        session.page.keyboard.press("Tab")
        found += _blocking(axe.run(session.page).response, PAGE[lang] + " (bad input)", scheme)
    assert not found, "\n".join(found)
    p = session.page
    p.focus(".calc select[name=model]")
    order = []
    for _ in range(7):
        p.keyboard.press("Tab")
        order.append(p.evaluate("document.activeElement.name"))
    assert order == ["method", "precision", "levers", "batch", "seq", "gpu", "gpu_memory"]
