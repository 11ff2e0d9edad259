"""Where a function's source is (``wengert/frontends/source/text.py``):
lambdas as default arguments and several on one line (told apart by their
parameters, then by the position of their code or the code they compile
to), and a decorated function (``inspect`` follows ``functools.wraps``'s
``__wrapped__`` to the undecorated source; the engine converts the
wrapper's own code).
"""
from __future__ import annotations

import ast
import inspect
import textwrap

import numpy as np
import pytest

import wengert as wg

import trust_cases as tc
from checks import assert_close, rtol


# --- the function converted ------------------------------------------------------------
def test_lambda_as_default_argument():
    """Issue 10: a lambda given as a default argument is converted as itself."""
    h = wg.hessian(tc.make_with_default(), engine="source")(np.array([1.0, 2.0]))
    assert_close(h, np.eye(2), rtol("exact", np.float64))


def test_lambdas_on_one_line():
    """Lambdas on one line are told apart by their parameters, then by the
    position of their code (Python 3.11+) or the code they compile to (3.10)."""
    fs = [lambda x: 3.0 * x, lambda x, y: x * y]; k = lambda z: np.sin(z) * 2.0  # noqa: E702,E731
    assert wg.grad(fs[0], engine="source")(1.0) == 3.0
    assert wg.grad(fs[1], argnums=1, engine="source")(2.0, 5.0) == 2.0
    assert_close(wg.grad(k, engine="source")(0.3), 2.0 * np.cos(0.3), rtol("exact", np.float64))
    outer = lambda t: wg.grad(lambda x: 10.0 * x * x, engine="source")(t)  # noqa: E731
    assert outer(1.5) == 30.0
    same = [lambda x: 3.0 * x, lambda x: 5.0 * x]
    assert [wg.grad(f, engine="source")(1.0) for f in same] == [3.0, 5.0]


# lambdas that share a line and their parameters, and differ by a constant, a
# closure variable against a global, a nested lambda or comprehension, a default
def _one_line_lambdas():
    a = 2.0
    return [lambda x: 3.0 * x, lambda x: 5.0 * x, lambda x: -0.0 * x, lambda x: 0.0 * x, lambda x: a * x, lambda x: np.sin(x) * x, lambda x: (lambda y: y * a)(x), lambda x: sum([x * k for k in (1.0, 2.0)]), lambda x, b=1.0: x * b]  # noqa: E501


@pytest.mark.parametrize("k", range(len(_one_line_lambdas())))
def test_lambda_found_by_the_code_it_compiles_to(k):
    """Without column positions (Python 3.10), the lambda a code object came
    from is the one that compiles to the same code: exactly one of a line's."""
    from wengert.frontends.source.text import _compile_lambda, _same_code
    fns = _one_line_lambdas()
    code = fns[k].__code__
    source = ast.parse(textwrap.dedent(inspect.getsource(_one_line_lambdas)))
    nodes = source.body[0].body[-1].value.elts            # the returned list's lambdas
    assert len(nodes) == len(fns) and all(isinstance(n, ast.Lambda) for n in nodes)
    matches = [j for j, n in enumerate(nodes) if _same_code(_compile_lambda(n, code), code)]
    assert matches == [k]


def test_decorated_function_keeps_its_decorator():
    """``inspect`` follows ``functools.wraps``'s ``__wrapped__`` to the
    undecorated source; the engine converts the wrapper's own code."""
    assert wg.grad(tc.doubled_square, engine="source")(1.5) == 6.0
