"""Fixtures of the primitives' tests."""
from __future__ import annotations

import warnings

import pytest


@pytest.fixture
def quiet_singular():
    """Silence NumPy's RuntimeWarnings: at a singular point the derivative's
    residuals are themselves infinite (``1 / (2 sqrt(0))``), which is what the
    tests of the guarded products are about."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
