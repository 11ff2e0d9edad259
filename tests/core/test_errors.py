"""Typed errors (``wengert/core/errors.py``): bad input gets a typed error
that says what happened, where, and what to do, and every error is a
``WengertError`` (a warning class is a ``UserWarning``).
"""
import math

import re

import numpy as np
import pytest

import wengert as wg
from wengert.core import errors


def test_grad_of_non_scalar_output():
    with pytest.raises(errors.NonScalarOutputError, match=r"scalar output.*jacrev or vjp"):
        wg.grad(lambda x: x * 2.0)(np.ones(3))


@pytest.mark.parametrize("value", [3, np.arange(3), np.array([True, False])],
                         ids=["python-int", "int-array", "bool-array"])
def test_differentiating_integer_or_boolean_input(value):
    with pytest.raises(errors.NonDifferentiableInputError, match=r"integer and boolean.*float"):
        wg.grad(lambda x: np.sum(x * 1.0))(value)


def test_integer_argument_outside_argnums_is_fine():
    def f(x, n):
        return x ** n

    assert wg.grad(f)(2.0, 3) == pytest.approx(12.0)


def test_numpy_function_without_rule_names_it_and_the_line():
    def f(x):
        return np.sum(np.histogram2d(x, x)[0])

    with pytest.raises(errors.NoDerivativeRule, match=r"test_errors.py:\d+: np.histogram2d has no deriv"):
        wg.grad(f)(np.array([3.0, 1.0]))


def test_ufunc_without_rule():
    # np.nextafter: a ufunc the library table has no entry for
    with pytest.raises(errors.NoDerivativeRule, match=r"np.nextafter has no derivative rule"):
        wg.grad(lambda x: np.sum(np.nextafter(x, 2.0)))(np.array([1.0, 8.0]))


def math_sin_twice(x):
    return math.sin(x) * 2.0


def test_math_function_on_traced_value_says_use_numpy():
    with pytest.raises(errors.UnsupportedFunctionError,
                       match=r"test_errors.py:\d+: math.sin was called.*Use np.sin"):
        wg.grad(math_sin_twice, engine="trace")(0.3)
    # the source engine maps math functions to NumPy's
    assert wg.grad(math_sin_twice, engine="source")(0.3) == pytest.approx(2 * math.cos(0.3))


def float_twice(x):
    return float(x) * 2.0


def test_float_of_traced_value_would_drop_the_derivative():
    with pytest.raises(errors.ConcretizationError, match=r"float\(\) of a traced value"):
        wg.grad(float_twice, engine="trace")(0.3)
    # in the source engine float() of a differentiated scalar is a conversion
    assert wg.grad(float_twice, engine="source")(0.3) == pytest.approx(2.0)


def test_mismatched_shapes_inside_the_function():
    def f(x):
        return np.sum(x * np.ones(4))

    with pytest.raises(errors.ShapeMismatchError, match=r"test_errors.py:\d+: .*\(3,\).*\(4,\)"):
        wg.grad(f)(np.ones(3))


def test_tangent_of_wrong_shape():
    with pytest.raises(errors.ShapeMismatchError, match=r"tangent of shape \(2,\).*\(3,\)"):
        wg.jvp(np.sin, (np.ones(3),), (np.ones(2),))


def test_cotangent_of_wrong_shape():
    _, pullback = wg.vjp(np.sin, np.ones(3))
    with pytest.raises(errors.ShapeMismatchError, match=r"cotangent of shape \(4,\)"):
        pullback(np.ones(4))


def assign_first(x):
    x[0] = 1.0
    return np.sum(x * x)


def test_in_place_assignment_on_traced_array_is_an_update_of_the_value():
    """``x[0] = 1.0`` on a traced array: x becomes the updated value in both engines (the
    trace engine once refused it), and the caller's array is never written."""
    x = np.array([3.0, 2.0])
    for engine in ("trace", "source"):
        # x[0] no longer matters
        np.testing.assert_allclose(wg.grad(assign_first, engine=engine)(x), [0.0, 4.0])
        np.testing.assert_array_equal(x, [3.0, 2.0])


def uses_try(x):
    try:
        y = np.sin(x)
    except ValueError:
        y = x
    return y


def test_unsupported_syntax_names_file_line_column_and_construct():
    with pytest.raises(errors.UnsupportedSyntax) as info:
        wg.grad(uses_try, engine="source")(0.3)
    err = info.value
    assert err.construct == "try" and err.filename.endswith("test_errors.py")
    assert err.lineno == uses_try.__code__.co_firstlineno + 1 and err.col == 5
    assert "handle errors outside" in str(err)


def test_auto_engine_falls_back_to_tracing_with_one_warning():
    import wengert.api.fallback as api_fallback
    api_fallback.WARNED.discard(api_fallback.fallback_key(uses_try))
    with pytest.warns(UserWarning, match=r"uses try at .*test_errors.py:\d+.*trace engine"):
        g = wg.grad(uses_try)(0.3)
    assert g == pytest.approx(np.cos(0.3))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert wg.grad(uses_try)(0.4) == pytest.approx(np.cos(0.4))   # no second warning


def test_unknown_engine():
    with pytest.raises(ValueError, match="engine must be one of"):
        wg.grad(np.sin, engine="fast")


def test_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums 3 out of range"):
        wg.grad(lambda x, y: x * y, argnums=3)(1.0, 2.0)


def test_has_aux_requires_a_pair():
    with pytest.raises(TypeError, match=r"pair \(output, aux\)"):
        wg.grad(lambda x: x * 2.0, has_aux=True)(1.0)


def test_every_error_is_a_wengert_error():
    for name in errors.__all__:
        cls = getattr(errors, name)
        # a warning class (numba's fallback) is a UserWarning, never an error
        assert issubclass(cls, UserWarning if issubclass(cls, Warning) else errors.WengertError)


def test_the_users_line_in_a_folder_named_numpy(tmp_path):
    """Errors name the user's file:line, found as the innermost frame outside wengert, NumPy
    and SciPy. Those were recognised by ``/numpy/`` and ``/scipy/`` in a file's path, so code
    in a user's folder of that name was never the user's line (the error named a frame
    further out, or none); they are recognised by where NumPy and SciPy are installed."""
    import importlib.util
    folder = tmp_path / "numpy"
    folder.mkdir()
    src = folder / "user_model.py"
    src.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(x[:2] * x)\n")
    spec = importlib.util.spec_from_file_location("user_model_in_numpy_folder", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for engine in ("trace", "source"):
        with pytest.raises(errors.ShapeMismatchError, match=re.escape(f"{src}:5")):
            wg.grad(mod.f, engine=engine)(np.ones(3))
