"""An interrupted numba compile (``wengert/backends/numba/compiled.py``) leaves
nothing broken.

The GradBench bench's 30 s call limit interrupted lstm's compile; the next call
then raised ``RuntimeError: no compiled object yet`` (numba's state half made,
the interrupt swallowed inside llvmlite). Now: an exception out of the compile
(a ``KeyboardInterrupt``, a timeout's) reaches the caller, and the next call
compiles again, on a new dispatcher, and gives the right value; where numba's
state stays broken (a ``RuntimeError`` out of the compile), the call runs the
Python backend with one fallback warning, and ``fallback=False`` raises the
typed error.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import wengert as wg

from checks import assert_close, rtol
from numba_checks import fallbacks


pytestmark = pytest.mark.numba


def smooth(x):
    return np.sum(np.tanh(x) * x[::-1])


def smooth_too(x):              # another function: its own code, compiled afresh
    return np.sum(np.tanh(x) * x[::-1]) * 2.0


def smooth_three(x):
    return np.sum(np.tanh(x) * x[::-1]) * 3.0


def smooth_four(x):
    return np.sum(np.tanh(x) * x[::-1]) * 4.0


def _interrupting(monkeypatch, raises):
    """numba's ``Dispatcher.compile`` of the generated code of a ``smooth*`` raising each
    of ``raises`` in turn, then compiling as it does. The calls it saw."""
    import numba.core.dispatcher as dispatcher
    real = dispatcher.Dispatcher.compile
    pending, seen = list(raises), []

    def compile_(self, sig):
        if not (self.py_func.__module__.startswith("wengert_numba_")
                and self.py_func.__name__.startswith("smooth")):
            return real(self, sig)          # numba's own functions, the code's helpers
        seen.append(sig)
        if pending:
            raise pending.pop(0)
        return real(self, sig)
    monkeypatch.setattr(dispatcher.Dispatcher, "compile", compile_)
    return seen


@pytest.mark.parametrize("interrupt, fn",
                         [(KeyboardInterrupt, smooth), (TimeoutError, smooth_too)],
                         ids=["KeyboardInterrupt", "TimeoutError"])
def test_the_call_after_an_interrupted_compile_compiles_again(monkeypatch, interrupt, fn):
    x = np.linspace(-1.0, 2.0, 7)
    want = wg.grad(fn, engine="source")(x)
    g = wg.grad(fn, engine="source", backend="numba", fallback=False)
    seen = _interrupting(monkeypatch, [interrupt()])
    with pytest.raises(interrupt):
        g(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = g(x)
    assert not fallbacks(caught)
    assert len(seen) == 2                   # compiled again
    assert_close(got, want, rtol("exact", want))
    assert_close(g(x * 2), wg.grad(fn, engine="source")(x * 2), rtol("exact", want))


def test_a_broken_numba_after_an_interrupt_runs_the_python_backend(monkeypatch):
    x = np.linspace(-1.0, 2.0, 7)
    want = wg.grad(smooth_three, engine="source")(x)
    broken = RuntimeError("no compiled object yet for <Library 'smooth_grad'>")
    _interrupting(monkeypatch, [KeyboardInterrupt(), broken])
    g = wg.grad(smooth_three, engine="source", backend="numba")
    with pytest.raises(KeyboardInterrupt):
        g(x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = g(x)
    fell = fallbacks(caught)
    assert len(fell) == 1 and "no compiled object" in str(fell[0].message)
    assert_close(got, want, rtol("exact", want))

    _interrupting(monkeypatch, [KeyboardInterrupt(), broken])
    strict = wg.grad(smooth_four, engine="source", backend="numba", fallback=False)
    with pytest.raises(KeyboardInterrupt):
        strict(x)
    with pytest.raises(wg.NumbaCompileError, match="no compiled object"):
        strict(x)
