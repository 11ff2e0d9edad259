"""The listings of ``docs/generated-code.md`` and the code wengert generates for them.

The page holds the user's file (``model.py``, after ``<!-- golden-model -->``) and, after
each ``<!-- golden: NAME KIND -->``, the code a person wrote for ``NAME``'s reverse or
forward derivative. ``CALLS`` says how each is generated (the page says the same in
prose): ``wg.grad(f, argnums)`` called once for a reverse listing (``wengert show --mode
vjp`` for ``damped``, whose ``grad`` is forward mode), ``wengert show --mode jvp`` for a
forward one. ``same_code`` compares two texts token for token (comments included, their
spacing normalised), the listing's free names -- a role prefix and a counter, ``v3``,
``ct12``, ``r9``, ``x20``, ``t3`` -- mapped one to one onto the generated text's; every
other name must be equal. ``statements`` counts a function's statements (an ``if``, a
``for`` and each statement inside them, the ``return``; no comments), the figure the
page's table gives.

Read by ``backends/python/test_golden_code.py`` and ``backends/numba/test_golden_code.py``.
"""
from __future__ import annotations

import ast
import importlib.util
import io
import os
import re
import sys
import tokenize
import warnings

import numpy as np

import wengert as wg
from wengert import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "generated-code.md")
# the same programs' code for ``backend="numba"`` (the model is the first page's)
DOCS = {"python": DOC, "numba": os.path.join(ROOT, "docs", "generated-code-numba.md")}
# the listings whose numba code is the Python backend's, after one ``NumbaFallbackWarning``:
# none (the checkpointed loop's schedule, once: its sweeps are numba twins now)
NUMBA_FALLS_BACK = set()

_ONES = "np.ones((3, 4)), np.ones(4), np.ones(4), np.ones((5, 3)), np.ones(5)"

# name -> (argnums, the arguments as a Python expression (``np`` bound), the reverse
# listing's entry point: "grad" or "vjp" (``wengert show --mode vjp``))
CALLS = {
    "seed000": ((0, 1), "2.0, 3.0", "grad"),
    "branchy": ((0,), "np.array([0.5, -1.0, 2.0]), 3", "grad"),
    "damped": ((0,), "0.7, 4", "vjp"),
    "euler": ((0, 1), "0.5, np.linspace(0.1, 1.0, 5)", "grad"),
    "prefix_products": ((0,), "np.linspace(0.5, 1.5, 5)", "grad"),
    "mlp": ((0, 1, 2), _ONES, "grad"),
    "newton": ((0, 1), "2.0, 1.0", "grad"),
    "stiff": ((0, 1), "np.array([0.3, 0.5]), 0.1, 6", "grad"),
}

_BLOCK = re.compile(r"<!-- (golden-model|golden: (\w+) (reverse|forward)) -->\n```python\n"
                    r"(.*?)```", re.S)


def listings(backend="python"):
    """(model.py's text, {(name, kind): listing}) of ``backend``'s page."""
    model, found = None, {}
    for path in {DOC, DOCS[backend]}:
        with open(path) as f:
            text = f.read()
        for m in _BLOCK.finditer(text):
            if m.group(1) == "golden-model":
                model = m.group(4)
            elif path == DOCS[backend]:
                found[(m.group(2), m.group(3))] = m.group(4)
    return model, found


def load_model(folder):
    """``model.py`` written into ``folder`` and imported as the module ``model``."""
    model, _ = listings()
    path = os.path.join(folder, "model.py")
    with open(path, "w") as f:
        f.write(model)
    spec = importlib.util.spec_from_file_location("model", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["model"] = module       # the generated code reads its globals by name
    spec.loader.exec_module(module)
    return module, path


def arguments(name):
    """The example arguments of ``name`` (a tuple: ``wengert show --args`` reads one value
    as the only argument)."""
    args = eval(CALLS[name][1], {"np": np})      # noqa: S307 -- the table's own literals
    return args if isinstance(args, tuple) else (args,)


def generate(module, path, name, kind, backend="python"):
    """The code wengert generates for listing ``(name, kind)`` of ``module`` (loaded from
    ``path``)."""
    argnums, args_text, reverse = CALLS[name]
    fn = getattr(module, name)
    if kind == "reverse" and reverse == "grad":
        g = wg.grad(fn, argnums=argnums if len(argnums) > 1 else argnums[0], backend=backend)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            g(*arguments(name))
        fell = [w for w in caught if issubclass(w.category, wg.NumbaFallbackWarning)]
        traced = [w for w in caught if str(w.message).startswith("wengert: ")
                  and not issubclass(w.category, wg.NumbaFallbackWarning)]
        assert not traced, traced              # no fallback to tracing
        falls = backend == "numba" and (name, kind) in NUMBA_FALLS_BACK
        assert bool(fell) == falls or (falls and not caught), (name, kind, fell)
        return g.source
    out = io.StringIO()
    mode = "vjp" if kind == "reverse" else "jvp"
    here = os.getcwd()
    os.chdir(os.path.dirname(path))     # the comments name the file as the user gave it
    try:
        cli.show("model.py:" + name, mode=mode, argnums=argnums, args=args_text, out=out,
                 backend=backend)
    finally:
        os.chdir(here)
    return out.getvalue()


# --- comparing ---------------------------------------------------------------------------
_FREE = re.compile(r"(v|ct|r|x|t)[0-9]+")


def _tokens(text):
    toks = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type in (tokenize.NL, tokenize.ENDMARKER):
            continue
        value = " ".join(tok.string.split()) if tok.type == tokenize.COMMENT else tok.string
        toks.append((tok.type, value, tok.start[0]))
    return toks


def _params(text):
    fn = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)][-1]
    return {a.arg for a in fn.args.args}


def same_code(want, got):
    """None when ``got`` is ``want`` token for token, up to ``want``'s free names (mapped
    one to one); else a message naming the first difference and its lines."""
    fixed = _params(want) | _params(got)
    a, b = _tokens(want), _tokens(got)
    fwd, back = {}, {}
    for k, ((ta, va, la), (tb, vb, lb)) in enumerate(zip(a, b)):
        if ta == tb == tokenize.NAME and _FREE.fullmatch(va) and va not in fixed \
                and _FREE.fullmatch(vb) and vb not in fixed and va[0] == vb[0]:
            if fwd.setdefault(va, vb) == vb and back.setdefault(vb, va) == va:
                continue
        elif (ta, va) == (tb, vb):
            continue
        return (f"first difference at token {k}: listing line {la} "
                f"{want.splitlines()[la - 1].strip()!r}, generated line {lb} "
                f"{got.splitlines()[lb - 1].strip()!r}")
    if len(a) != len(b):
        return f"the listing has {len(a)} tokens, the generated code {len(b)}"
    return None


def statements(text):
    """The statements of the function in ``text`` (its last: the code; the functions it
    defines above it, a schedule's sweeps, are not counted), nested ones included."""
    fn = [n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)][-1]
    return sum(1 for n in ast.walk(fn) if isinstance(n, ast.stmt)) - 1


def main(backends=("python", "numba")):
    """Print, for each listing of each backend's page, the statements written by hand and
    generated, and whether the code is the listing's (``python tests/golden_listings.py
    [python|numba]``; both pages by default)."""
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        module, path = load_model(folder)
        print(f"{'backend':<9}{'program':<18}{'listing':<10}{'by hand':>8}{'generated':>11}"
              "  same code")
        for backend in backends:
            for (name, kind), want in listings(backend)[1].items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")     # numba's own
                    got = generate(module, path, name, kind, backend=backend)
                print(f"{backend:<9}{name:<18}{kind:<10}{statements(want):>8}"
                      f"{statements(got):>11}  {'yes' if same_code(want, got) is None else 'NO'}")


if __name__ == "__main__":
    main(tuple(sys.argv[1:]) or ("python", "numba"))
