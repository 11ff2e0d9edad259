"""Generated code against the interpreter: ``assert_same`` runs a Program
through ``api.backend.python_function`` (the Python code generator) and
through ``backends.interpret`` and asserts the same arrays (values, shapes,
dtypes); ``VARIANTS`` are the Programs derived from one (jvp, vjp,
simplified); ``random_inputs`` draws the inputs a derived Program adds
(tangents, cotangents), seeded by ``rng_for(*key)``; ``one_equation`` is a
Program of one primitive application.

Read by the code generator's tests (``backends/python/``), the control-flow
rows' (``control/test_for_loop.py``, ``test_cond.py``, ``test_while_loop.py``:
each row writes its own statements) and lowering's (``lower/test_facts.py``).
"""
from __future__ import annotations

import zlib

import numpy as np

from wengert.api.backend import python_function
from wengert.backends.interpret import interpret
from wengert.backends.python.codegen import GeneratedFunction
from wengert.core.ir import Eqn, Lit, Program, Var, aval_of
from wengert.transforms.jvp import jvp_program
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program


def assert_same(prog, args):
    """python_function(prog)(*args) == interpret(prog, *args), array for array."""
    want = interpret(prog, *args)
    gen = python_function(prog)
    got = gen(*args)
    assert isinstance(gen, GeneratedFunction) and gen.program is prog
    assert isinstance(got, tuple) and len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        where = f"output {k} of\n{gen.source}"
        assert np.shape(g) == np.shape(w), where
        assert np.asarray(g).dtype == np.asarray(w).dtype, where
        np.testing.assert_array_equal(g, w, err_msg=where)
    return gen, got


def random_inputs(avals, rng):
    """Inputs of these avals: Python floats for weak scalars, else arrays."""
    out = []
    for a in avals:
        if a.dtype.kind in "fc":
            x = rng.standard_normal(a.shape)
            out.append(float(x) if a.weak and a.shape == () else np.asarray(x, a.dtype))
        elif a.dtype.kind == "b":
            out.append(np.asarray(rng.random(a.shape) < 0.5))
        else:
            out.append(np.asarray(rng.integers(0, 3, a.shape), a.dtype))
    return out


def rng_for(*key):
    """A generator seeded by ``key`` (crc32 of its text: the same at every run, as
    ``hash`` of a string is not)."""
    return np.random.default_rng(zlib.crc32(":".join(map(str, key)).encode()))


def one_equation(prim, operands, params, as_literals):
    """``outs = prim[params] (operands)``, the operands as inputs or literals."""
    ins = [Lit(x) if as_literals else Var(aval_of(x)) for x in operands]
    out_avals = prim.abstract_eval(*[aval_of(x) for x in operands], **params)
    outs = [Var(a) for a in (out_avals if prim.multiple_results else [out_avals])]
    inputs = [] if as_literals else ins
    return Program(inputs, [Eqn(prim, ins, outs, params)], outs, name=prim.name)


# the Programs derived from a traced one, as the backends meet them
VARIANTS = {
    "traced": lambda p: p,
    "jvp": jvp_program,
    "vjp": vjp_program,
    "simplified": simplify,
    "jvp_simplified": lambda p: simplify(jvp_program(p)),
    "vjp_simplified": lambda p: simplify(vjp_program(p)),
}
