"""Every example of README.md and of docs/**/*.md runs, and prints what the page shows.

One test per page: the blocks of a page depend on each other, and the suite runs in
random order on several workers, so a page is the unit. ``tools/docs_examples.py``
runs a page; its docstring (and docs/contributing.md) gives the convention: ```python
blocks run in order in one namespace, a ```text block right after one is what it
prints (``...`` matches anything), ``$ wengert``/``$ python`` lines of a ```console
block run, ``<!-- excerpt: PATH -->`` blocks must be in PATH, and
``<!-- docs-test: numba -->`` puts a page under ``make test-numba``.

Also here: the API reference lists every name of ``wengert.__all__``, and the public
names' docstrings say what they take, return and raise, with an example that runs
(doctest); the error classes' docstrings give a cause and a fix; the navigation holds
every page (``tools/docs_hooks.py``, ``mkdocs.yml``).
"""
from __future__ import annotations

import doctest
import importlib.util
import inspect
import io
import pathlib
import re
import warnings

import pytest

import wengert

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _tool(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


HOOKS = _tool("docs_hooks")
EXAMPLES = _tool("docs_examples")
blocks, run_page = EXAMPLES.blocks, EXAMPLES.run_page


def pages():
    return [ROOT / "README.md"] + sorted(DOCS.rglob("*.md"))


def _page_param(path):
    marks = [pytest.mark.numba] if EXAMPLES.NUMBA_PAGE.search(path.read_text()) else []
    return pytest.param(path, id=path.relative_to(ROOT).as_posix(), marks=marks)


@pytest.mark.parametrize("path", [_page_param(p) for p in pages()])
def test_page_examples_run(path, tmp_path, monkeypatch):
    """Each python block of the page runs after the ones above it; each output shown
    is what the block printed; each excerpt is in its file."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        run_page(path, tmp_path)


def test_readme_keeps_the_set_up_commands_and_its_length():
    """The README says how to set up (`make demo`, `make test`), how to use the
    environment, and stays short: the reference lives in docs/."""
    text = (ROOT / "README.md").read_text()
    for needle in ("make demo", "make test", ".venv/bin/python", 'pip install -e ".[scipy]"'):
        assert needle in text, needle
    assert len(text.splitlines()) <= 260, "README.md grew: move reference text into docs/"


# --- the convention itself ---------------------------------------------------------
def test_blocks_pair_outputs_and_excerpts():
    page = ("```python\nprint(1)\n```\n\n```text\n1\n```\n"
            "<!-- excerpt: wengert/demo.py -->\n```python\ndef seed000(x, y):\n```\n"
            "```python\nx = 2\n```\ntext\n```text\nnot an output\n```\n")
    got = blocks(page)
    assert [(b.lang, b.output, b.excerpt) for b in got] == [
        ("python", "1\n", None), ("python", None, "wengert/demo.py"), ("python", None, None),
        ("text", None, None)]


def test_a_stale_output_or_excerpt_fails(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\nprint(1 + 1)\n```\n\n```text\n3\n```\n")
    (tmp_path / "README.md").write_text("")
    with pytest.raises(EXAMPLES.PageError, match="printed"):
        run_page(page, tmp_path, root=tmp_path)
    page.write_text("```python\nprint('a b c')\n```\n\n```text\na ...\n```\n")
    assert run_page(page, tmp_path, root=tmp_path) == 1
    (tmp_path / "src.py").write_text("def f(x):\n    return x\n")
    page.write_text("<!-- excerpt: src.py -->\n```python\ndef f(x):\n    return x\n```\n")
    assert run_page(page, tmp_path, root=tmp_path) == 0
    page.write_text("<!-- excerpt: src.py -->\n```python\ndef g(x):\n```\n")
    with pytest.raises(EXAMPLES.PageError, match="not in src.py"):
        run_page(page, tmp_path, root=tmp_path)


# --- the generated reference -------------------------------------------------------
def test_api_page_lists_every_public_name():
    """Every name of wengert.__all__ is on the API page (a ::: directive) or, for an
    error class, linked to the errors page, which documents it."""
    page = HOOKS.api_page()
    errors = HOOKS.errors_page()
    for name in wengert.__all__:
        obj = getattr(wengert, name)
        if HOOKS.is_error(obj):
            assert f"(errors.md#{name.lower()})" in page, name
            assert f"## {name}\n" in errors, name
        else:
            assert f"::: wengert.{name}\n" in page, name


SECTIONS = ("Args:", "Returns:", "Raises:", "Example:")


def _public_functions():
    out = []
    for name in wengert.__all__:
        obj = getattr(wengert, name)
        if HOOKS.is_error(obj):
            continue
        if inspect.ismodule(obj):
            out += [(f"{name}.{n}", getattr(obj, n)) for n in getattr(obj, "__all__", ())]
        else:
            out.append((name, obj))
    return out


@pytest.mark.parametrize("name,obj", _public_functions(), ids=[n for n, _ in _public_functions()])
def test_public_docstrings_say_args_returns_raises_and_show_an_example(name, obj):
    """The API page shows each public name's parameters, result, exceptions and an
    example (Google style, read by mkdocstrings); the example runs and prints what
    it shows (doctest)."""
    doc = inspect.getdoc(obj) or ""
    missing = [s for s in SECTIONS if s not in doc]
    if inspect.isclass(obj):
        # a class documents its constructor's parameters; what it returns is itself
        missing = [s for s in missing if s != "Returns:"]
    assert not missing, f"wengert.{name}'s docstring lacks {missing}"
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(obj, name, globs={})
    assert tests and any(t.examples for t in tests), f"wengert.{name}: no >>> example"
    out = io.StringIO()
    for t in tests:
        runner.run(t, out=out.write)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, out.getvalue()


@pytest.mark.parametrize("cls", HOOKS.error_classes(), ids=lambda c: c.__name__)
def test_error_docstrings_give_a_cause_and_a_fix(cls):
    """The errors page (generated from these docstrings) says, for each error,
    why it is raised and what to do."""
    doc = inspect.getdoc(cls) or ""
    if cls.__name__ == "WengertError":
        return
    assert "Cause:" in doc and "Fix:" in doc, f"{cls.__name__}'s docstring lacks Cause:/Fix:"


def test_navigation_holds_every_page():
    """mkdocs.yml's nav (with the Guides filled by the hook, and the generated pages)
    names every page under docs/, and every page it names exists or is generated."""
    nav = re.findall(r"^\s*-\s*(?:[^:\n]+:\s*)?([\w./-]+\.md)\s*$",
                     (ROOT / "mkdocs.yml").read_text(), re.M)
    named = set(nav) | set(HOOKS.guide_pages())
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert on_disk <= named, f"pages missing from mkdocs.yml's nav: {sorted(on_disk - named)}"
    assert named <= on_disk | set(HOOKS.GENERATED), sorted(named - on_disk - set(HOOKS.GENERATED))


def test_guides_section_lists_every_guide(tmp_path):
    guide = tmp_path / "guide"
    (guide / "sub").mkdir(parents=True)
    for name in ("zeta.md", "index.md", "alpha.md", "sub/deep.md"):
        (guide / name).write_text("# x\n")
    assert HOOKS.guide_pages(tmp_path) == ["guide/index.md", "guide/alpha.md",
                                           "guide/sub/deep.md", "guide/zeta.md"]
