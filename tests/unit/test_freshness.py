"""The render stamp: a warm `build` renders nothing when results, generated pages, data and
the nav are as the stamp recorded them, and renders again after any change (the build that
skips the render: slow/test_build_pages.py)."""

from __future__ import annotations

from pathlib import Path

from generator.site import freshness


def test_freshness_notices_every_change(tmp_path: Path) -> None:
    results, docs = tmp_path / "results", tmp_path / "docs"
    (results / "estimate").mkdir(parents=True)
    (results / "estimate" / "a.json").write_text("{}", encoding="utf-8")
    for lang in ("zh", "en"):
        (docs / lang).mkdir(parents=True)
        (docs / lang / "index.md").write_text(f"# {lang}\n", encoding="utf-8")
    (docs / ".nav.yml").write_text("nav: []\n", encoding="utf-8")
    (docs / "data").mkdir()
    (docs / "data" / "a.json").write_text("{}", encoding="utf-8")
    assert not freshness.is_fresh(results, docs)  # no stamp yet
    freshness.record(results, docs)
    assert freshness.is_fresh(results, docs)
    changes = [
        lambda: (results / "estimate" / "a.json").write_text('{"x": 1}', encoding="utf-8"),
        lambda: (results / "estimate" / "b.json").write_text("{}", encoding="utf-8"),
        lambda: (docs / "en" / "index.md").write_text("# edited\n", encoding="utf-8"),
        lambda: (docs / "zh" / "index.md").unlink(),
        lambda: (docs / ".nav.yml").write_text("nav: [x]\n", encoding="utf-8"),
        lambda: (docs / "data" / "a.json").write_text('{"y": 2}', encoding="utf-8"),
        lambda: (docs / freshness.STAMP).write_text("{", encoding="utf-8"),
    ]
    for number, change in enumerate(changes):
        change()
        assert not freshness.is_fresh(results, docs), number
        freshness.record(results, docs)
        assert freshness.is_fresh(results, docs), number
