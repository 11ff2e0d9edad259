"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks:``).

Three things are made at build time, so that they follow the package without
anyone regenerating them:

* the **Guides** section of the navigation lists every page under
  ``docs/guide/`` (``guide/index.md`` first, the others by file name), so a
  guide added by anyone appears without editing ``mkdocs.yml``;
* ``reference/api.md`` (replacing the stub of that name in docs/): one ``::: wengert.NAME`` (mkdocstrings) per name of
  ``wengert.__all__``, grouped by ``GROUPS``; a name no group lists goes
  under "More", so a new public name appears as soon as it is exported;
* ``reference/errors.md`` (likewise): every error class wengert raises on purpose
  (``WengertError``'s subclasses, wherever they are defined, and the
  warnings it issues), each with its docstring: what it means, its cause
  and its fix.

The functions are plain (``api_page``, ``errors_page``, ``guide_pages``) so the
tests (``tests/root/test_docs.py``) check them without MkDocs.
"""
from __future__ import annotations

import importlib
import inspect
import pathlib
import re
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# the API page's sections, in order; names of wengert.__all__ not listed here
# go under "More" (and the error classes to the errors page)
GROUPS = [
    ("Derivatives", "Functions that take a function and return its derivative.",
     ["grad", "value_and_grad", "jvp", "vjp", "linearize", "linear_transpose", "jacfwd",
      "jacrev", "hessian"]),
    ("Programs and compiled code", "The Program of a function, and the function compiled.",
     ["make_program", "jit"]),
    ("Loops, memory and updates", "Structured loops, checkpointing, functional updates.",
     ["fori_loop", "checkpointed", "checkpoint", "at"]),
    ("Custom rules", "Your own derivative for a function.", ["custom_jvp", "custom_vjp"]),
    ("Testing", "Check a function's derivatives against finite differences.", ["testing"]),
]

# modules that define error classes outside wengert.core.errors (imported so
# that their classes are subclasses of WengertError the walk can find)
ERROR_MODULES = ["wengert", "wengert.cli"]


def _wengert():
    import wengert
    return wengert


def error_classes():
    """Every class wengert raises or warns with on purpose: ``WengertError``
    and its subclasses (depth first, by name), then the warnings of
    ``wengert.core.errors``."""
    for name in ERROR_MODULES:
        importlib.import_module(name)
    from wengert.core import errors
    seen, out = set(), []

    def walk(cls):
        if cls in seen:
            return
        seen.add(cls)
        out.append(cls)
        for sub in sorted(cls.__subclasses__(), key=lambda c: c.__name__):
            walk(sub)

    walk(errors.WengertError)
    warnings = [obj for _, obj in sorted(vars(errors).items())
                if inspect.isclass(obj) and issubclass(obj, Warning)
                and obj.__module__ == errors.__name__]
    return out + warnings


def is_error(obj):
    return inspect.isclass(obj) and issubclass(obj, (BaseException, Warning))


def public_names():
    """``wengert.__all__`` split into (documented on the API page, error classes)."""
    wg = _wengert()
    api, errs = [], []
    for name in wg.__all__:
        (errs if is_error(getattr(wg, name)) else api).append(name)
    return api, errs


def api_page():
    """The Markdown of ``reference/api.md``."""
    api, errs = public_names()
    lines = ["# API reference", "",
             "Every public name of `wengert` (`wengert.__all__`), generated from the docstrings. "
             "`import wengert as wg`, then `wg.grad`, `wg.jvp`... "
             "Names and meanings follow JAX where JAX has the name.", ""]
    listed = set()
    groups = [(title, intro, [n for n in names if n in api]) for title, intro, names in GROUPS]
    more = [n for n in api if not any(n in names for _, _, names in GROUPS)]
    if more:
        groups.append(("More", "Names exported since this page's groups were written.", more))
    for title, intro, names in groups:
        if not names:
            continue
        lines += [f"## {title}", "", intro, ""]
        for name in names:
            listed.add(name)
            lines += [f"::: wengert.{name}", "    options:", "      heading_level: 3",
                      f"      heading: \"wg.{name}\"" if name != "testing" else
                      "      heading: \"wg.testing\"", ""]
    lines += ["## Errors", "",
              "The typed errors wengert raises are on [Errors](errors.md), each with its cause "
              "and fix. Exported from `wengert`:", ""]
    lines += [f"- [`wg.{n}`](errors.md#{n.lower()})" for n in errs]
    lines.append("")
    return "\n".join(lines)


def _markdown_docstring(doc):
    """A class docstring as Markdown: ``Cause:``/``Fix:``/``Example:``
    paragraphs get bold labels; an Example's ``>>>`` lines a code block."""
    doc = inspect.cleandoc(doc or "")
    out, in_example = [], False
    for para in re.split(r"\n\s*\n", doc):
        m = re.match(r"(Cause|Fix|Example|Attributes):\s*", para)
        if m and m.group(1) == "Example":
            body = textwrap.dedent(para[m.end():].lstrip("\n"))
            out.append("**Example.**\n\n```pycon\n" + body.strip("\n") + "\n```")
            in_example = True
            continue
        if in_example and para.lstrip().startswith(">>>"):
            out[-1] = out[-1][:-4] + "\n" + textwrap.dedent(para) + "\n```"
            continue
        in_example = False
        if m:
            para = f"**{m.group(1)}.** " + para[m.end():]
        out.append(para)
    return "\n\n".join(out)


def errors_page():
    """The Markdown of ``reference/errors.md``."""
    wg = _wengert()
    exported = set(wg.__all__)
    lines = ["# Errors", "",
             "wengert never returns a derivative it is not sure of: where it cannot be sure, it "
             "raises one of these. Each message names your file and line and says what to do. "
             "Each class also subclasses the builtin you would catch for the same mistake, so "
             "`except TypeError` still works. Generated from the classes' docstrings.", "",
             "| error | also a | exported as |", "|---|---|---|"]
    classes = error_classes()
    for cls in classes:
        bases = ", ".join(f"`{b.__name__}`" for b in cls.__mro__[1:]
                          if not b.__module__.startswith("wengert")
                          and b not in (object, BaseException, Exception)) or "-"
        where = f"`wg.{cls.__name__}`" if cls.__name__ in exported else f"`{cls.__module__}`"
        lines.append(f"| [`{cls.__name__}`](#{cls.__name__.lower()}) | {bases} | {where} |")
    lines.append("")
    for cls in classes:
        parents = [b.__name__ for b in cls.__bases__]
        lines += [f"## {cls.__name__}", "",
                  f"`{cls.__module__}.{cls.__name__}({', '.join(parents)})`", "",
                  _markdown_docstring(cls.__doc__), ""]
    return "\n".join(lines)


def guide_pages(docs=DOCS):
    """The pages of the Guides section: ``guide/index.md`` first, then every
    other page under ``docs/guide/`` by path."""
    folder = docs / "guide"
    pages = sorted(p.relative_to(docs).as_posix() for p in folder.rglob("*.md"))
    first = [p for p in pages if p == "guide/index.md"]
    return first + [p for p in pages if p != "guide/index.md"]


GENERATED = {"reference/api.md": api_page, "reference/errors.md": errors_page}


# --- the hooks ---------------------------------------------------------------
def on_config(config):
    """Fill the navigation's ``Guides`` entry with the pages of ``docs/guide/``."""
    docs = pathlib.Path(config["docs_dir"])
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and "Guides" in entry:
            entry["Guides"] = guide_pages(docs)
    return config


def on_files(files, config):
    """Add the generated reference pages, in place of the stubs of the same
    name in docs/ (which say, for readers of the repository, how to see them)."""
    from mkdocs.structure.files import File
    for path, make in GENERATED.items():
        stub = files.get_file_from_path(path)
        if stub is not None:
            files.remove(stub)
        files.append(File.generated(config, path, content=make()))
    return files
