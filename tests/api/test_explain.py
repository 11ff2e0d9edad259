"""``wg.explain`` (``wengert/api/explain.py``; issue 27): the program, the gradient's code
with its line map, each differentiated argument's gradient against finite differences,
the inputs the output does not depend on, and the gradient's cost over the function's,
printed and returned.
"""
import io

import numpy as np
import pytest

import wengert as wg


def loss(w, b, x):
    h = np.tanh(x @ w + b)
    return np.sum(h * h)


def ignores(x, y, z):
    return np.sum(x ** 2) + 0.0 * y


@wg.custom_vjp
def wrong_square(x):
    return x * x


def _fwd(x):
    return x * x, x


def _bwd(x, ct):
    return (3.0 * x * ct,)          # should be 2 x: a wrong rule


wrong_square.defvjp(_fwd, _bwd)


def uses_wrong(x):
    return np.sum(wrong_square(x))


W = np.linspace(-0.5, 0.5, 6).reshape(3, 2)
B = np.array([0.1, -0.2])
X = np.linspace(0.0, 1.0, 12).reshape(4, 3)


def test_explain_reports_everything_and_returns_it():
    out = io.StringIO()
    e = wg.explain(loss, W, B, X, argnums=(0, 1), out=out)
    text = out.getvalue()
    assert text == str(e) + "\n"
    assert e.program is not None and "tanh" in str(e.program)
    assert "def loss_grad(w, b, x):" in e.code and "# grad of: h = np.tanh(x @ w + b)" in e.code
    assert e.line_map and all(f.endswith("test_explain.py") for f, _ in e.line_map.values())
    assert [c.name for c in e.checks] == ["w", "b"] and e.ok
    assert all(c.error < 1e-6 for c in e.checks)
    assert e.unused == [] and e.cost > 0
    np.testing.assert_allclose(e.gradient[0], wg.grad(loss, (0, 1))(W, B, X)[0])
    assert e.value == pytest.approx(loss(W, B, X))
    assert "gradient against finite differences" in text and "cost:" in text
    assert repr(e).startswith("<Explanation of loss: 2 gradient check(s) ok")


def test_explain_names_the_inputs_the_output_does_not_read():
    e = wg.explain(ignores, np.ones(3), 2.0, np.ones(2), argnums=(0, 1), out=False)
    assert e.unused == ["z"]
    assert e.checks[1].ad == 0.0 and e.ok


def test_explain_finds_a_wrong_custom_rule():
    e = wg.explain(uses_wrong, np.array([0.5, -1.0]), out=False)
    assert not e.ok and "MISMATCH" in str(e)
    assert e.checks[0].ad == pytest.approx(1.5 * e.checks[0].fd, rel=1e-6)
