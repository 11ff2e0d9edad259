"""Run the examples of a documentation page, and check (or write) what they print.

    python tools/docs_examples.py docs/quickstart.md            # run, report mismatches
    python tools/docs_examples.py --write docs/quickstart.md    # rewrite the outputs shown

The convention (docs/contributing.md; ``tests/root/test_docs.py`` runs every page
of README.md and docs/ with it in ``make test``):

* A ```python block runs. The blocks of one page run top to bottom in one namespace,
  in a temporary working directory of their own. Each block is compiled from a file
  of its own there, so the source engine can read its functions' source.
* A ```text block right after a ```python block (nothing but blank lines between) is
  what that block prints. Trailing spaces are ignored, and ``...`` matches anything
  (doctest's ELLIPSIS): use it for figures that vary from run to run.
* ```python title="NAME.py" also writes the block to NAME.py in the working directory,
  for a later ``import NAME`` or ``wengert show NAME.py:f``, and compiles it from there:
  generated code's headings and tracebacks name ``NAME.py``.
* In a ```console block, a line ``$ wengert ...`` or ``$ python ...`` runs (in the
  working directory, with this Python), and the lines up to the next ``$`` are what
  it prints. Other commands (``make``, ``pip``) are shown, never run.
* ``<!-- excerpt: PATH -->`` on the line before a block: the block is an excerpt of
  PATH (a file of the repository). It does not run; each of its lines must appear in
  PATH, in order, so the excerpt cannot go stale.
* ``<!-- docs-test: numba -->`` anywhere on a page marks its test ``numba``
  (``make test-numba`` runs it; ``make test`` leaves it out).

``--write`` replaces each shown output that does not match by what the block printed
(an output that matches, ``...`` included, is kept as written).
"""
from __future__ import annotations

import argparse
import contextlib
import doctest
import io
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))       # this checkout's wengert, whatever is installed

FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
                   re.M | re.S)
EXCERPT = re.compile(r"<!--\s*excerpt:\s*(?P<path>\S+)\s*-->\s*$")
NUMBA_PAGE = re.compile(r"^<!-- docs-test: numba -->$", re.M)


class PageError(AssertionError):
    """An example that raised, printed something else than its page shows, or an
    excerpt no longer in its file."""


class Block:
    """One fenced block of a page: its language, attributes, text and line; for a
    python block, the ```text block that shows its output (``output``, and where that
    text lies in the page, ``output_span``)."""

    def __init__(self, lang, attrs, text, line, excerpt=None):
        self.lang, self.attrs, self.text, self.line = lang, attrs, text, line
        self.excerpt, self.output, self.output_span = excerpt, None, None


def blocks(text):
    """The fenced blocks of a page, in order, each python block with its output."""
    out = []
    prev_end = None
    for m in FENCE.finditer(text):
        info = m.group("info").strip()
        lang, _, attrs = info.partition(" ")
        body = m.group("body")
        if m.group("indent"):
            body = "\n".join(ln[len(m.group("indent")):] for ln in body.split("\n"))
        line = text.count("\n", 0, m.start()) + 1
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        ex = EXCERPT.search(before)
        block = Block(lang, attrs, body, line, ex.group("path") if ex else None)
        between = text[prev_end:m.start()] if prev_end is not None else None
        if lang == "text" and out and out[-1].lang == "python" and out[-1].excerpt is None \
                and between is not None and not between.strip() and not m.group("indent"):
            out[-1].output = body
            out[-1].output_span = m.span("body")
        else:
            out.append(block)
        prev_end = m.end()
    return out


def same(want, got):
    """Whether ``got`` is the output ``want`` shows (trailing spaces ignored, ``...``
    matching anything)."""
    want = "\n".join(ln.rstrip() for ln in want.strip("\n").split("\n")) + "\n"
    got = "\n".join(ln.rstrip() for ln in got.strip("\n").split("\n")) + "\n"
    return doctest.OutputChecker().check_output(want, got, doctest.ELLIPSIS)


def check_excerpt(block, where, root):
    path = root / block.excerpt
    if not path.exists():
        raise PageError(f"{where}: the excerpt's file {block.excerpt} does not exist")
    source = [ln.strip() for ln in path.read_text().splitlines()]
    k = 0
    for ln in block.text.splitlines():
        ln = ln.strip()
        if not ln or ln == "...":
            continue
        while k < len(source) and source[k] != ln:
            k += 1
        if k == len(source):
            raise PageError(f"{where}: the excerpt's line {ln!r} is not in {block.excerpt} "
                            "(in this order)")
        k += 1


def run_console(block, where, cwd, root):
    commands = []
    for ln in block.text.split("\n"):
        if ln.startswith("$ "):
            commands.append([ln[2:], []])
        elif commands:
            commands[-1][1].append(ln)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p))
    for cmd, want in commands:
        if cmd.split()[0] not in ("wengert", "python"):
            continue
        argv = shlex.split(cmd, comments=True)
        if argv[0] == "wengert":
            argv = [sys.executable, "-m", "wengert"] + argv[1:]
        elif argv[0] == "python":
            argv = [sys.executable] + argv[1:]
        else:
            continue
        proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=300)
        got = proc.stdout + proc.stderr
        if not same("\n".join(want), got):
            raise PageError(f"{where}: `{cmd}` printed\n{got}\nbut the page shows\n"
                            + "\n".join(want))


def run_page(path, cwd, root=ROOT, outputs=None):
    """Run the page's blocks in ``cwd``; the number of python blocks run. With
    ``outputs`` (a list), collect ``(block, printed)`` instead of comparing."""
    path = pathlib.Path(path).resolve()
    text = path.read_text()
    rel = path.relative_to(root) if path.is_relative_to(root) else pathlib.Path(path.name)
    ns = {"__name__": "__docs__"}
    ran = 0
    for k, block in enumerate(blocks(text)):
        where = f"{rel}:{block.line} (block {k})"
        if block.excerpt is not None:
            check_excerpt(block, where, root)
            continue
        if block.lang == "console":
            run_console(block, where, cwd, root)
            continue
        if block.lang != "python":
            continue
        title = re.search(r'title="([^"]+)"', block.attrs)
        if title:       # compiled from the file it names: tracebacks and code say NAME.py
            file = cwd / title.group(1)
        else:
            file = cwd / f"_block_{rel.as_posix().replace('/', '_').replace('.', '_')}_{k}.py"
        file.write_text(block.text)
        buf = io.StringIO()
        try:
            code = compile(block.text, str(file), "exec", dont_inherit=True)  # no __future__ of this file
            with contextlib.redirect_stdout(buf):
                exec(code, ns)
        except Exception as err:
            raise PageError(f"{where} raised {type(err).__name__}: {err}\n"
                            f"it had printed:\n{buf.getvalue()}") from err
        ran += 1
        if outputs is not None:
            outputs.append((block, buf.getvalue()))
        elif block.output is not None and not same(block.output, buf.getvalue()):
            raise PageError(f"{where} printed\n{buf.getvalue()}\nbut the page shows\n"
                            f"{block.output}")
    return ran


def write_outputs(path):
    """Rewrite the outputs shown on the page that differ from what the blocks print."""
    path = pathlib.Path(path)
    outputs = []
    with tempfile.TemporaryDirectory() as tmp:
        cwd = os.getcwd()
        os.chdir(tmp)
        sys.path.insert(0, tmp)
        try:
            run_page(path, pathlib.Path(tmp), outputs=outputs)
        finally:
            os.chdir(cwd)
            sys.path.remove(tmp)
    text = path.read_text()
    changed = 0
    for block, got in sorted(outputs, key=lambda bo: -(bo[0].output_span or (0, 0))[0]):
        if block.output_span is None or same(block.output, got):
            continue
        start, end = block.output_span
        text = text[:start] + got.rstrip("\n") + "\n" + text[end:]
        changed += 1
    path.write_text(text)
    return changed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="+")
    parser.add_argument("--write", action="store_true",
                        help="rewrite the outputs shown where they differ")
    args = parser.parse_args(argv)
    status = 0
    for page in [pathlib.Path(p).resolve() for p in args.pages]:
        if args.write:
            print(f"{page}: {write_outputs(page)} output(s) rewritten")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            cwd = os.getcwd()
            os.chdir(tmp)
            sys.path.insert(0, tmp)
            try:
                print(f"{page}: {run_page(page, pathlib.Path(tmp))} block(s) ran")
            except PageError as err:
                print(err)
                status = 1
            finally:
                os.chdir(cwd)
                sys.path.remove(tmp)
    return status


if __name__ == "__main__":
    sys.exit(main())
