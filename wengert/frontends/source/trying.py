"""``try``/``except``/``else``/``finally`` and ``raise`` in converted code.

The converted code runs once, on symbolic values, to stage the Program; the
``try`` statement stays a Python ``try`` there. So its body is staged, and a
handler runs while staging exactly when the body raises while staging: where
that exception is one the plain call raises too (a ``KeyError`` of a dict
lookup, the user's own ``raise`` under a condition on Python values, a NumPy
error about shapes), the handler is what the plain call runs, and the code
holds the path through it. Three cases cannot be decided so, and are refused
with ``UnsupportedSyntax`` naming the ``try``'s line (``engine="auto"`` then
uses the trace engine, which runs the path the values take):

* the body staged without raising, but an operation in it may raise at run
  time what a handler catches (``np.linalg.cholesky``'s ``LinAlgError`` on a
  matrix that is not positive definite, a call made at run time into the
  user's objects, an index that is a traced value): ``done``. A random draw
  of NumPy's generators raises nothing with arguments fixed while staging
  (``ValueError`` with traced ones), a ufunc called at run time nothing:
  ``except KeyError:`` around ``rs.randn()`` is decided while staging;
* the exception was raised by wengert while staging a traced value, not by
  the user's code or by Python on plain values: ``caught``, which the
  converter puts first in every handler (a wengert error, such as
  ``NoDerivativeRule``, is raised on as it is: the plain call would not raise
  it, so no handler of the user's may take it);
* a ``raise`` inside a branch or loop staged on a traced value: both sides
  are staged, so it would raise whichever path the values take (``raising``).

The converter (``rewrite``) writes::

    __wg_try_1 = __wg.try_start()
    try:
        BODY
    except (KeyError) as e:          # every handler gets a name
        __wg.caught(e, "file.py:12")
        HANDLER
    else:
        __wg.done(__wg_try_1, (KeyError,), "file.py:12")
        ELSE

Layer: frontends.
"""
from __future__ import annotations

import linecache

import sys

import numpy as np

from ...core.errors import PACKAGE_DIR, UnsupportedSyntax, WengertError
from ...core.ir import Var, sub_programs
from ...core.staging import StagingTrace
from ...core.trace import TRACE_STATE
from ...primitives.host import EnvRef
from .written import top_trace

__all__ = ["try_start", "done", "caught", "raising", "runtime_raises"]

# the rows' families whose work raises ``LinAlgError`` on some values (a
# singular or indefinite matrix, no convergence): by where their impl lives
_LINALG = ("numpy.linalg", "scipy.linalg", "wengert.primitives.linalg",
           "wengert.primitives.decomp", "wengert.primitives.adjugate", "wengert.primitives.lstsq",
           "wengert.primitives.eig",
           "wengert.primitives.matfuncs", "wengert.primitives.triangular",
           "wengert.primitives.matrix")
# rows that read at positions given as operands (an IndexError out of range)
_INDEXING = frozenset(("getitem", "gather", "take_along_axis"))


def runtime_raises(eqn):
    """The exception classes ``eqn`` may raise when the code runs (besides
    errors of the code itself), its sub-Programs' included."""
    prim = eqn.prim
    found = set()
    if prim.effect and prim.name != "env_write":
        # a call made at run time: anything, but for the calls known to raise less
        found |= _host_raises(eqn) if prim.name == "host_call" else {Exception}
    module = getattr(prim.impl, "__module__", "") or ""
    if module in _LINALG:
        found.add(np.linalg.LinAlgError)
    if prim.name in _INDEXING and any(isinstance(x, Var) and x.aval.dtype.kind in "iu"
                                      for x in eqn.inputs[1:]):
        found.add(IndexError)
    if any(v == "raise" for v in np.geterr().values()) and any(
            v.aval.dtype.kind in "fc" for v in eqn.outputs):
        found.add(FloatingPointError)   # np.seterr(all="raise") is in force
    for sub in sub_programs(eqn):
        for e in sub.eqns:
            found |= runtime_raises(e)
    return found


def _host_raises(eqn):
    """What a call made at run time may raise: a NumPy or SciPy ufunc nothing
    (its arithmetic gives nan or inf; ``np.seterr`` is read below); a random
    draw of a NumPy ``RandomState`` or ``Generator`` (``rs.randn(3)``,
    ``np.random.normal``) nothing with arguments fixed when the code was
    generated, ``ValueError`` with traced ones (a negative scale); any other
    call (the user's objects, I/O) anything."""
    fn = eqn.params.get("fn")
    if isinstance(fn, EnvRef):
        try:
            fn = fn.resolve()
        except Exception:           # gone now: it may be anything when the code runs
            return {Exception}
    if isinstance(fn, np.ufunc):
        return set()
    if _is_generator(getattr(fn, "__self__", None)):
        return {ValueError} if any(isinstance(x, Var) for x in eqn.inputs) else set()
    return {Exception}


def _is_generator(obj):
    """A NumPy random generator (looked up where one can exist: numpy.random
    is imported once a generator was made, and wengert's import leaves it out)."""
    random = sys.modules.get("numpy.random")
    return random is not None and isinstance(obj, (random.RandomState, random.Generator))


def try_start():
    """Where the ``try``'s body begins: (the trace recording it, how many
    equations it held), or None where nothing is recorded."""
    trace = TRACE_STATE.current
    return (trace, len(trace.eqns)) if type(trace) is StagingTrace else None


def _catches(handlers, raised):
    for t in handlers:
        if isinstance(t, tuple):
            if _catches(t, raised):
                return True
        elif isinstance(t, type) and (issubclass(raised, t) or issubclass(t, raised)):
            return True
    return False


def done(token, handlers, where):
    """The body staged without raising: refuse where an operation it staged
    may raise, at run time, what a handler catches."""
    if token is None:
        return
    trace, start = token
    for eqn in trace.eqns[start:]:
        for raised in sorted(runtime_raises(eqn), key=lambda c: c.__name__):
            if _catches(handlers, raised):
                raise UnsupportedSyntax(
                    f"{where}: try: whether {eqn.prim.name} raises {raised.__name__} depends on "
                    "the values when the code runs, so the source engine cannot tell whether "
                    "the plain call takes the except clause; compute it outside the "
                    "differentiated function, make the condition explicit (an if on the "
                    "values), or use engine='trace' (engine='auto' does so by itself)",
                    construct="try around an operation that may raise at run time")


def _raised_by_wengert(exc):
    """Whether ``exc`` was raised by wengert's own ``raise`` (while staging a
    traced value), not by Python or the user's code on plain values."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return False
    filename = last.tb_frame.f_code.co_filename
    if not filename.startswith(PACKAGE_DIR):
        return False
    line = linecache.getline(filename, last.tb_lineno).strip()
    return line.startswith("raise")


def caught(exc, where):
    """A handler's first statement: raise ``exc`` on where no handler of the
    plain call would see it (a wengert error), or refuse where the exception
    came of staging a traced value."""
    if isinstance(exc, WengertError):
        raise exc
    if _raised_by_wengert(exc):
        raise UnsupportedSyntax(
            f"{where}: try: the except clause would catch {type(exc).__name__} ({exc}), raised "
            "while the source engine staged a traced value, which the plain call may not "
            "raise: it cannot tell whether the plain call takes the except clause; use "
            "engine='trace' (engine='auto' does so by itself)",
            construct="except clause of an error of staging") from exc


def raising(where):
    """Before a ``raise``: refused inside a branch or loop staged on a traced
    value (its other path is staged too, and would raise as well)."""
    top = top_trace()
    if top is not None and TRACE_STATE.current is not top:
        raise UnsupportedSyntax(
            f"{where}: raise inside a branch or loop that depends on a traced value: the "
            "source engine stages every path, so it would raise on each; check the values "
            "before calling the differentiated function, or use engine='trace'",
            construct="raise in a traced block")
