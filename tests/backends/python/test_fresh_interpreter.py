"""Generated ``.source`` runs in a fresh interpreter with NumPy (and SciPy) alone (issue 27).

Every function of the test suite's derivative cases -- the corpus (``cases.CORPUS``,
through both engines), the source engine's functions (``source_corpus.CASES``), the demo's
seeds, every library function of ``fn_cases*.py`` (the source engine, float64 operands)
and the programs of ``docs/generated-code.md`` -- is staged, differentiated (the primal,
its jvp and its vjp, simplified as the API simplifies them) and written by the Python
backend. Each text, its inputs and the values the code gives here travel (pickled) to a
new ``python -I`` process, in which importing ``wengert`` (or a test module) raises. It
binds only what the header lists -- ``numpy``, ``scipy``, ``math``, constants, and for a
user module whose globals the code reads (or a closure cell, or an object argument) a
stand-in holding those values --
execs the text and calls the function: the results must be the ones computed here, and
the process must end with no ``wengert`` module loaded.

The check, in a reverse sweep, that a function does not depend on the basis a
decomposition chooses (``gauge_check``) is NumPy defined in the text too
(``basis_turned``): where wengert is absent its error is ``NotImplementedError``.

Before, 33 rows (``np.fft``'s, ``np.linalg.eig``'s, ``scipy.linalg.expm``'s...) and a
checkpointed loop's schedule were the header's ``name = PRIMITIVES['...'].impl`` and
``ctz = ctz (wengert...)``: wengert's own objects; until issue 27's last part, 33 reverse
sweeps of decompositions bound ``PRIMITIVES['gauge_check'].impl``. The corpus and the
runner are ``fresh_checks.py``'s (numba's text runs there too).
"""
from __future__ import annotations

import fresh_checks as F


def test_every_derivative_code_runs_in_a_fresh_interpreter(tmp_path):
    model, _ = F.GL.load_model(str(tmp_path))
    items, refused = F.payload(model, F.python_text)
    assert not refused
    assert len(items) > 1500, len(items)
    # the decompositions' reverse sweeps check the chosen basis, in NumPy (no wengert)
    assert sum("def basis_turned(" in i["source"] for i in items) >= 5
    F.run_fresh(items, tmp_path)
