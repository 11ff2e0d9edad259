"""The function table's cases: what test_functions.py runs every library
function on (``wengert.primitives.library``: NumPy's and SciPy's functions,
ufuncs and calls).

Each family of functions has its own module ``tests/fn_cases_<family>.py``
defining ``CASES``, a list of ``FnCase``; this module gathers them all.
A case's ``fun`` is a module-level ``def`` in that module (the source engine
reads its source; errors name its line there), taking every operand in
``args`` positionally; operands whose ``Arg.diff`` is False (masks, integer
arguments, constants) are held fixed, the others are differentiated.

``name`` is the library name the case covers, as ``library.display_name``
gives it (``np.repeat``, ``np.linalg.svd``, ``scipy.special.gammaln``,
``scipy.stats.norm.logpdf``): test_functions.py fails for a library entry
that no case names.
"""
from __future__ import annotations

import importlib
import pathlib
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

import numpy as np

from cases import DIFF, F32, F64, NONDIFF, ZERO_DERIV  # noqa: F401  (for the family modules)

ENGINES = ("trace", "source")


@dataclass(frozen=True)
class FnCase:
    """One call of one library function, checked in every engine:

    * ``dtypes``: float dtypes the float operands are drawn in (float32 is
      checked to stay float32 where NumPy keeps it: the output dtype must be
      the plain call's);
    * ``mode``: ``DIFF`` (jvp against finite differences, the dot-product
      test, and second order if ``order`` is 2), ``ZERO_DERIV`` (piecewise
      constant: the derivative is zero) or ``NONDIFF`` (no derivative:
      values only, and a jvp through it carries a zero tangent);
    * ``complex``: also drawn as complex values (complex64/complex128), with
      finite differences in the real and the imaginary directions;
    * ``engines``: the engines it runs in; an engine left out needs a
      comment in the family module saying why (the trace engine does not
      see ``CALLS`` entries such as ``np.array``);
    * ``rtol``: a looser tolerance where the function is ill-conditioned at
      the drawn operands, with a comment saying why.
    """
    name: str
    fun: Callable
    args: tuple
    id: str = ""
    dtypes: tuple = (F64, F32)
    mode: str = DIFF
    order: int = 2
    complex: bool = False
    engines: tuple = ENGINES
    rtol: Optional[float] = None
    seed: int = 0
    extra: Any = None

    @property
    def test_id(self):
        return self.name + (f"[{self.id}]" if self.id else "")


def _gather():
    """Every family's cases; a case whose id another family already took is
    told apart by its family's name (``np.clip[arrays@math]``)."""
    here = pathlib.Path(__file__).parent
    out, seen = [], set()
    for path in sorted(here.glob("fn_cases_*.py")):
        family = path.stem[len("fn_cases_"):]
        for case in importlib.import_module(path.stem).CASES:
            if case.test_id in seen:
                case = replace(case, id=f"{case.id}@{family}")
            assert case.test_id not in seen, f"{path.name}: two cases with the id {case.test_id}"
            seen.add(case.test_id)
            out.append(case)
    return out


def _complex_twins(cases):
    """Every function the library takes complex values in (``library.complex_ok``)
    runs complex operands in its first case that differentiates (or, for a
    function without a derivative, its first case), unless a case of it
    already does or NumPy itself refuses complex operands there (``rfft``):
    "a complex case for every function that accepts complex input", kept
    true by the table as functions are added."""
    from wengert.numpy import library
    library.load_scipy()
    accepting = {library.display_name(f) for f in library.complex_callables()}
    have = {c.name for c in cases if c.complex}
    chosen = {}
    for k, c in enumerate(cases):
        if c.name in accepting and c.name not in have and all(
                np.dtype(d).kind == "f" for d in c.dtypes):
            best = chosen.get(c.name)
            if best is None or (cases[best].mode != DIFF and c.mode == DIFF):
                chosen[c.name] = k
    return [replace(c, complex=True) if k in chosen.values() and _numpy_takes_complex(c) else c
            for k, c in enumerate(cases)]


def _numpy_takes_complex(case):
    rng = np.random.default_rng(0)
    args = [np.asarray(a.draw(rng, F64)) * (1 + 0.5j) if a.diff else a.draw(rng, F64)
            for a in case.args]
    try:
        case.fun(*args)
    except TypeError:
        return False
    return True


ALL_CASES = _complex_twins(_gather())
