"""Converted functions (``wengert/frontends/source/converted.py``): the
rewritten code is compiled once per code object, in caches that stay
bounded; code objects compare equal without their file, yet each file's
function runs its own conversion, whose traceback names that file. A lambda
whose own lines do not parse alone (on a later line of a statement, on a line
that leaves a call or a ``try`` open) is found in the whole file (once refused:
"a lambda inside an expression that spans several lines").
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


X2 = np.array([1.0, 2.0])


def lambda_on_a_try_line():
    out = None
    try: out = wg.grad(lambda x: np.sum(x ** 2), engine="source")(X2)  # noqa: E701
    except KeyError: pass  # noqa: E701
    return out


def lambda_on_a_call_s_second_line():
    return wg.grad(
        lambda x: np.sum(np.sin(x)), engine="source")(X2)


def lambda_in_a_list_of_several_lines():
    return [wg.grad(lambda x: np.sum(x ** 3), engine="source")(X2),
            wg.grad(lambda x: np.sum(x ** 4),
                    engine="source")(X2)]


def lambda_whose_body_continues():
    f = (lambda x:
         np.sum(x * 5.0))
    return wg.grad(f, engine="source")(X2)


def test_a_lambda_inside_a_statement_of_several_lines_is_converted():
    np.testing.assert_allclose(lambda_on_a_try_line(), 2.0 * X2)
    np.testing.assert_allclose(lambda_on_a_call_s_second_line(), np.cos(X2))
    third, fourth = lambda_in_a_list_of_several_lines()
    np.testing.assert_allclose(third, 3.0 * X2 ** 2)
    np.testing.assert_allclose(fourth, 4.0 * X2 ** 3)
    np.testing.assert_allclose(lambda_whose_body_continues(), [5.0, 5.0])


def test_a_refusal_inside_such_a_lambda_names_its_file_line():
    """Positions come from the whole file: an error names the lambda's own line."""
    with pytest.raises(wg.UnsupportedSyntax) as info:
        wg.grad(
            lambda x: {1, 2} and np.sum(x), engine="source")(X2)
    err = info.value
    assert err.lineno == _this_line() - 2 and err.filename == __file__
    assert "set" in str(err)


def _this_line():
    import inspect
    return inspect.currentframe().f_back.f_lineno
