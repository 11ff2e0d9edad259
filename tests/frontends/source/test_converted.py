"""Converted functions (``wengert/frontends/source/converted.py``): the
rewritten code is compiled once per code object, in caches that stay
bounded; code objects compare equal without their file, yet each file's
function runs its own conversion, whose traceback names that file.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import wengert as wg


def test_caches_stay_bounded():
    """Converting many distinct functions (made at run time, as a loop that
    builds lambdas does) and many matmul shapes keeps the caches at their
    bounds, so converted functions and their modules are not kept alive."""
    import functools as ft
    from wengert.frontends.source import converted as source_convert
    from wengert.primitives import linalg
    for cache in (source_convert._converted_code, linalg._concrete_matmul_aval):
        assert isinstance(cache, ft._lru_cache_wrapper) and cache.cache_info().maxsize
    bound = linalg._concrete_matmul_aval.cache_info().maxsize
    for n in range(1, bound + 50):
        wg.grad(lambda a: np.sum(a @ np.ones((n, 1))), engine="trace")(np.ones((1, n)))
    assert linalg._concrete_matmul_aval.cache_info().currsize <= bound


def test_equal_functions_of_two_files_report_their_own_file():
    """Code objects compare equal without their file: each file's function
    still runs its own conversion, whose traceback names that file."""
    src = "def f(x, n):\n    k = 1 // n\n    return x * k\n"
    for _ in range(2):
        mod = _module_from_source(src)
        with pytest.raises(ZeroDivisionError) as info:
            wg.grad(mod.f, engine="source")(1.0, 0)
        assert mod.__file__ in {str(entry.path) for entry in info.traceback}


def _module_from_source(text):
    import importlib.util
    import tempfile
    path = pathlib.Path(tempfile.mkdtemp()) / "trust_written.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("trust_written", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
