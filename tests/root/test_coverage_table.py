"""The documentation's table of supported functions (docs/reference/coverage.md)
is the one ``tools/coverage_table.py`` generates from the library table
(``wengert/numpy/library.py``) and its cases: a function added (or a case
that changes what is checked) without regenerating it fails here.
"""
from __future__ import annotations

import importlib.util
import pathlib

from wengert.numpy import library

import fn_cases

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _tool():
    spec = importlib.util.spec_from_file_location("coverage_table",
                                                  ROOT / "tools" / "coverage_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TOOL = _tool()


def _numpy_rows(text):
    return [ln for ln in text.splitlines() if ln.startswith("| `np.")]


def test_docs_table_is_current():
    page = TOOL.block((ROOT / TOOL.PAGE).read_text())
    want = TOOL.render(TOOL.rows(library, fn_cases))
    if not library.load_scipy():
        # without SciPy its rows (and the count) cannot be regenerated: NumPy's must match
        page, want = _numpy_rows(page), _numpy_rows(want)
    assert page == want, \
        f"{TOOL.PAGE}'s coverage table is stale: run python tools/coverage_table.py --write"


def test_table_has_a_row_per_entry_saying_what_its_cases_check():
    """Every entry of the library table is a row, and each row reads its
    cases: the engines, derivatives and dtypes they check."""
    rows = {r[0]: r[1:] for r in TOOL.rows(library, fn_cases)}
    assert sorted(rows) == sorted(name for name, _, _ in library.entries())
    by_name = {}
    for c in fn_cases.ALL_CASES:
        by_name.setdefault(c.name, []).append(c)
    for name, (engines, derivs, dtypes, count) in rows.items():
        cases = by_name.get(name, [])
        assert count == len(cases), name
        if not cases:
            continue
        both = {e for c in cases for e in c.engines} == {"trace", "source"}
        assert engines.startswith("both engines") == both, (name, engines)
        for e in ("trace", "source"):
            one = any(tuple(c.engines) == (e,) for c in cases)
            assert (f"{e} only" in engines or engines == f"{e} engine only") == one, \
                (name, engines)
        diff = [c for c in cases if c.mode == fn_cases.DIFF]
        assert derivs.startswith("forward and reverse") == bool(diff), (name, derivs)
        if diff:
            assert derivs.endswith(f"order {max(c.order for c in diff)}"), (name, derivs)
        for c in cases:
            for dt in c.dtypes:
                assert str(dt) in dtypes, (name, dt, dtypes)
        assert ("complex" in dtypes) == any(c.complex for c in cases), (name, dtypes)


def test_write_replaces_only_the_text_between_the_markers(tmp_path):
    path = tmp_path / "page.md"
    path.write_text(f"# title\n\nbefore\n{TOOL.START}\nold table\n{TOOL.END}\nafter\n")
    assert TOOL.main(["--write", str(path)]) == 0
    text = path.read_text()
    assert text.startswith("# title\n\nbefore\n") and text.endswith(f"{TOOL.END}\nafter\n")
    assert "old table" not in text
    assert TOOL.block(text) == TOOL.render(TOOL.rows(library, fn_cases))
    path.write_text("# no markers\n")
    assert TOOL.main(["--write", str(path)]) == 1
    assert path.read_text() == "# no markers\n"
