"""``backend="numba"``'s ``.source`` runs in a fresh interpreter with NumPy alone (issue 27).

The corpus of the Python backend's test (``fresh_checks.functions``: every function of
the test suite's derivative cases, its primal, jvp and vjp) written as numba compiles
it, each text run as Python in a new ``python -I`` process where ``wengert`` cannot be
imported: the results must be the Python backend's (to rounding: numba's spellings sum
and multiply in other orders, ``batched_matmul`` for ``np.matmul``). The texts are
numba's exactly (``numba_source``), with the extra parameters numba's code takes (the
values passed at each call, the buffers kept between calls).

Once the text bound wengert's helpers (``reuse_empty``, ``batched_matmul``,
``max_last_axis``...) in its header: it ran nowhere without wengert. Now it defines them
(``backends/numba/standalone.py``); and the goldens' texts, helpers ``numba.njit``-ed in
that process, compile and give the values of numba run by wengert.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fresh_checks as F
from wengert.backends.numba.codegen import NumbaUnsupported, NumbaWriter, numba_source
from wengert.backends.numba.rewrite import rewritten
from wengert.backends.numba.standalone import finish
from wengert.backends.python.codegen import generate_source
from wengert.lower import lower

pytestmark = pytest.mark.numba
pytest.importorskip("numba")


def numba_text(prog):
    """``payload``'s writer for numba: its text, and the arguments its code takes after
    the Program's inputs (refused: None)."""
    low = lower(prog, **NumbaWriter.LOWERING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shown = numba_source(low)
    except NumbaUnsupported:
        return None, None, None, False
    source, namespace, fname, passed = generate_source(low, None, writer=NumbaWriter)
    source, scratch = finish(rewritten(source, namespace), namespace, fname)
    assert source == shown
    extra = [get() for get in passed.values()]
    extra = [a[()] if type(a) is np.ndarray and a.ndim == 0 else a for a in extra]
    if scratch:
        extra.append(tuple(np.empty((0,) * ndim, dt) for dt, ndim in scratch))
    return source, namespace, extra, bool(scratch)


def test_every_numba_code_runs_in_a_fresh_interpreter(tmp_path):
    model, _ = F.GL.load_model(str(tmp_path))
    items, refused = F.payload(model, numba_text)
    assert len(items) > 1200, (len(items), len(refused))
    assert "reuse_" in "".join(i["source"] for i in items)
    F.run_fresh(items, tmp_path, rtol=1e-10)


def test_the_golden_programs_numba_code_compiles_without_wengert(tmp_path):
    """The texts of ``docs/generated-code-numba.md``'s programs (their primal, jvp and
    vjp), each function they define ``numba.njit``-ed in the fresh process: numba
    compiles them as written, and they give the Python backend's values."""
    model, _ = F.GL.load_model(str(tmp_path))
    items, refused = F.payload(model, numba_text, keep=lambda pid: pid.startswith("golden-"))
    assert len(items) >= 20 and any("def reuse_" in i["source"] for i in items), refused
    F.run_fresh(items, tmp_path, rtol=1e-10, jit=True)
