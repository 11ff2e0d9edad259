"""The ``backend`` option (``wengert/api/backend.py``): it is checked (the
trace engine generates no code, an unknown backend is a ValueError), the
Python backend is the default, and ``backend="numba"`` without numba says
how to install it.
"""
import sys

import numpy as np
import pytest

import wengert as wg
from wengert.core import errors


# --- the backend option -----------------------------------------------------------
def _square_sum(x):
    return np.sum(x * x)


@pytest.mark.parametrize("how", ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "jit"])
def test_numba_backend_without_numba_says_how_to_install_it(how, monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)     # import numba now fails
    with pytest.raises(errors.NumbaMissingError, match=r"pip install 'wengert\[numba\]'"):
        getattr(wg, how)(_square_sum, backend="numba")
    with pytest.raises(ImportError):
        wg.jvp(_square_sum, (np.ones(2),), (np.ones(2),), backend="numba")
    with pytest.raises(ImportError):
        wg.vjp(_square_sum, np.ones(2), backend="numba")


@pytest.mark.parametrize("how", ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian"])
def test_backend_option_is_checked(how):
    with pytest.raises(errors.BackendError, match="trace engine generates none"):
        getattr(wg, how)(_square_sum, engine="trace", backend="numba")
    with pytest.raises(ValueError, match="backend must be one of"):
        getattr(wg, how)(_square_sum, backend="cuda")
    # the Python backend is the default, and says nothing
    np.testing.assert_allclose(getattr(wg, "grad")(_square_sum, backend="python")(np.ones(2)),
                               [2.0, 2.0])
