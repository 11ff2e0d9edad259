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
import linecache
import pathlib
import textwrap
import types

import numpy as np
import pytest

import wengert as wg
from wengert.frontends.source import text

import trust_cases as tc
from checks import assert_close, fd_jacobian, rtol


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


# --- a definition's lines, found by indentation ---------------------------------------
def margin_docstring(x):
    """A docstring whose second line
reaches the margin: cutting the block there leaves a string open."""
    y = x * x
    return np.sum(y)


def margin_bracket(x):
    y = np.sum(x *
x)
    return 3.0 * y


def margin_backslash(x):
    y = np.sum(x) * \
np.sum(x)
    return y


@pytest.mark.parametrize("f", [margin_docstring, margin_bracket, margin_backslash])
def test_a_line_at_the_margin_inside_the_body_is_part_of_it(f):
    """A body line at the margin (inside a string, a bracket, after a backslash) does
    not end the definition: the source engine converts the whole function (cut there,
    it would have converted half of it, or failed to parse)."""
    x = np.array([0.5, -1.5, 2.0])
    g = wg.grad(f, engine="source")(x)
    assert_close(g, fd_jacobian(f, (x,))[0], rtol("jvp", np.float64))


def _codes(code):
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield c
            yield from _codes(c)


def test_definitions_found_by_indentation_are_those_inspect_finds():
    """``text._def_block`` (the indentation scan that spares the tokenizer) gives the
    very lines ``inspect.getblock`` gives, for every function of wengert and of this
    test-suite that it takes; the rest it leaves to ``inspect``."""
    root = pathlib.Path(wg.__file__).parent.parent
    taken = 0
    for path in sorted(root.glob("wengert/**/*.py")) + sorted(root.glob("tests/**/*.py")):
        lines = linecache.getlines(str(path))
        for code in _codes(compile("".join(lines), str(path), "exec")):
            if code.co_name.startswith("<"):
                continue
            block = text._def_block(lines[code.co_firstlineno - 1:], code.co_name)
            if block is not None:
                taken += 1
                assert block == inspect.getblock(lines[code.co_firstlineno - 1:]), \
                    (path, code.co_firstlineno)
    assert taken > 1000
    for f in (margin_docstring, margin_bracket, margin_backslash):
        lines = linecache.getlines(f.__code__.co_filename)
        assert text._def_block(lines[f.__code__.co_firstlineno - 1:], f.__name__) is None
