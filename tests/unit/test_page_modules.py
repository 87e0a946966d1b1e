"""Every page module registers itself as one typed record (pages.PageModule), which is all the
render reads of it: no part of a page is looked up by name, and none a module defines is
left out of its record."""

from __future__ import annotations

import importlib
import pkgutil

from generator.site import pages
from generator.site.pages import PageModule, all_pages

#: A module's function by name, and the part of its record that should hold it.
PARTS = {"context": "context", "figures": "figures", "tables": "tables",
         "pages": "derived_pages", "data_files": "data_files", "own_results": "own_results"}


def test_every_page_module_is_a_page_module() -> None:
    names = [m.name for m in pkgutil.iter_modules(pages.__path__) if not m.name.startswith("_")]
    registered = all_pages()
    assert sorted(registered) == sorted(names)
    for name in names:
        module = importlib.import_module(f"{pages.__name__}.{name}")
        record = registered[name]
        assert isinstance(record, PageModule), name
        assert record is module.PAGE_MODULE
        assert all(callable(getattr(record, part)) for part in PARTS.values()), name
        assert all(isinstance(page, pages.Page) for page in record.pages), name
        assert set(record.reads_own_results_of) <= set(names), name
        for function, part in PARTS.items():  # what a module defines, its record holds
            if function in vars(module):
                assert getattr(record, part) is vars(module)[function], (name, function)
        assert record.pages or record.derived_pages is not PageModule.derived_pages, \
            f"{name} writes no page"
