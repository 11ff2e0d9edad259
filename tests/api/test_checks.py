"""The checks the public API makes at a transform's entry
(``wengert/api/checks.py``): bad input is a typed error at the transform's
entry, naming the argument (and the line that passed it), in every engine
and every transform it applies to.
"""

import numpy as np
import pytest

import wengert as wg
from wengert.core import errors
from wengert.core.pytree import MAX_DEPTH

import robust_cases as R


ENGINES = ("trace", "source", "auto")
TRANSFORMS = ("grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "hessian")


def nest(kind, depth, leaf=0.5, side=1.5):
    """``depth`` containers inside each other; each holds the next and a leaf."""
    t = leaf
    for k in range(depth):
        v = side + 0.01 * k
        t = {"a": t, "b": v} if kind == "dict" else [t, v] if kind == "list" else (t, v)
    return t


def derivative(transform, fn, x, engine, **kw):
    """One call of ``transform`` of ``fn`` at ``x``: its values."""
    # a tangent of ones (x itself where x is not an array: a bad argument)
    tangent = np.ones_like(x) if isinstance(x, np.ndarray) else x
    if transform == "jvp":
        return wg.jvp(fn, (x,), (tangent,), engine=engine, **kw)
    if transform == "vjp":
        out, pullback = wg.vjp(fn, x, engine=engine, **kw)[:2]
        return out, pullback(1.0)
    if transform == "linearize":
        out, linear = wg.linearize(fn, x, engine=engine, **kw)
        return out, linear(tangent)
    return getattr(wg, transform)(fn, engine=engine, **kw)(x)


# --- typed errors for bad input ------------------------------------------------------
def where(fn):
    return f"robust_cases.py:{fn.__code__.co_firstlineno}"


X2 = np.array([0.3, -0.7])
AUX = ("grad", "value_and_grad", "vjp")


# (id, function, argument, transforms, has_aux, class, builtin base, message fragments)
BAD = [
    ("str", R.simple, "abc", TRANSFORMS, False, errors.NonDifferentiableInputError, TypeError,
     ["argument 0 (x) is a str", "pass floats or NumPy float arrays"]),
    ("none", R.simple, None, TRANSFORMS, False, errors.NonDifferentiableInputError, TypeError,
     ["argument 0 (x) is None", "Pass a float or a NumPy float array"]),
    # complex inputs are differentiated (JAX's conventions, primitives/test_complex.py); a
    # complex output without holomorphic=True is refused by grad and jacrev,
    # a complex input by jacfwd and hessian
    ("complex", R.simple, 1.0 + 2.0j, ("grad", "value_and_grad", "jacrev"), False,
     errors.UnsupportedDtypeError, TypeError,
     ["simple has a complex output (c128[])", "holomorphic=True"]),
    ("complex-array", R.simple, np.ones(2, np.complex64), ("jacfwd", "hessian"), False,
     errors.UnsupportedDtypeError, TypeError,
     ["simple has a complex input (c64[2])", "holomorphic=True"]),
    ("int", R.simple, 3, TRANSFORMS, False, errors.NonDifferentiableInputError, TypeError,
     ["argument 0 (x) is i64[]", "pass it as a float"]),
    ("str-in-tree", R.simple, {"a": X2, "b": [1.0, "s"]}, TRANSFORMS, False,
     errors.NonDifferentiableInputError, TypeError,
     ["argument 0 (x) at ['b'][1] is a str", "pass floats"]),
    ("too-deep", R.simple, nest("list", MAX_DEPTH + 1), TRANSFORMS, False,
     errors.PytreeDepthError, ValueError,
     ["argument 0 (x) at [0][0]", f"deeper than {MAX_DEPTH} levels", "a flatter structure"]),
    ("generator", R.yields, X2, TRANSFORMS + ("make_program",), False,
     errors.InvalidFunctionError, TypeError,
     [where(R.yields), "yields is a generator function", "instead of yielding"]),
    ("aux-one-value", R.aux_one, X2, AUX, True, errors.OutputStructureError, TypeError,
     [where(R.aux_one), "(has_aux=True): aux_one returned one f64[] value",
      "return (output, aux)"]),
    ("aux-three-values", R.aux_three, X2, AUX, True, errors.OutputStructureError, TypeError,
     [where(R.aux_three), "returned a tuple of 3 values", "return (output, aux)"]),
    ("non-scalar", R.vector_out, X2, ("grad", "value_and_grad"), False,
     errors.NonScalarOutputError, TypeError,
     [where(R.vector_out), "vector_out returns output shapes [(2,)]", "use jacrev or vjp"]),
]
BAD_CASES = [(fn, x, tr, aux, cls, base, frags, e)
             for _, fn, x, trs, aux, cls, base, frags in BAD for tr in trs for e in ENGINES]
BAD_IDS = [f"{name}-{tr}-{e}" for name, _, _, trs, *_ in BAD for tr in trs for e in ENGINES]


def _call_with(transform, fn, x, engine, has_aux):
    if transform == "make_program":
        return wg.make_program(fn, x, engine=engine)
    return derivative(transform, fn, x, engine, **({"has_aux": True} if has_aux else {}))


@pytest.mark.parametrize("fn, x, transform, has_aux, cls, base, fragments, engine", BAD_CASES,
                         ids=BAD_IDS)
def test_bad_input_is_a_typed_error_naming_it(fn, x, transform, has_aux, cls, base, fragments,
                                             engine):
    assert issubclass(cls, errors.WengertError) and issubclass(cls, base)
    with pytest.raises(cls) as info:
        _call_with(transform, fn, x, engine, has_aux)
    message = str(info.value)
    name = f"{transform}(has_aux=True)" if has_aux else f"{transform}:"
    for fragment in fragments + [name]:
        assert fragment in message, f"{fragment!r} not in: {message}"
    if cls not in (errors.InvalidFunctionError, errors.OutputStructureError,
                   errors.NonScalarOutputError):
        # a bad argument names the line that passed it
        assert message.startswith(__file__ + ":"), message
