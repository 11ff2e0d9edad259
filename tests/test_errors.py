"""Bad input gets a typed error that says what happened, where, and what to do."""
import math

import numpy as np
import pytest

import wengert as wg
from wengert import errors


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
        return np.sum(np.sort(x))

    with pytest.raises(errors.NoDerivativeRule, match=r"test_errors.py:\d+: numpy.sort has no derivative"):
        wg.grad(f)(np.array([3.0, 1.0]))


def test_ufunc_without_rule():
    with pytest.raises(errors.NoDerivativeRule, match=r"np.cbrt has no derivative rule"):
        wg.grad(lambda x: np.sum(np.cbrt(x)))(np.array([1.0, 8.0]))


def test_math_function_on_traced_value_says_use_numpy():
    def f(x):
        return math.sin(x) * 2.0

    with pytest.raises(errors.UnsupportedFunctionError,
                       match=r"test_errors.py:\d+: math.sin was called.*Use np.sin"):
        wg.grad(f)(0.3)


def test_float_of_traced_value_would_drop_the_derivative():
    with pytest.raises(errors.ConcretizationError, match=r"float\(\) of a traced value"):
        wg.grad(lambda x: float(x) * 2.0)(0.3)


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


def test_in_place_assignment_on_traced_array_points_to_functional_update():
    def f(x):
        x[0] = 1.0
        return np.sum(x)

    x = np.array([1.0, 2.0])
    with pytest.raises(TypeError, match=r"wg.at\(x\)\[i\].set\(v\)"):
        wg.grad(f)(x)
    np.testing.assert_array_equal(x, [1.0, 2.0])


def test_source_engine_not_yet_available():
    with pytest.raises(NotImplementedError, match="engine='source'"):
        wg.grad(np.sin, engine="source")


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
        assert issubclass(cls, errors.WengertError)
