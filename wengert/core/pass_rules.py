"""The common shapes of the passes' rules on a row: ``algebra`` (what
``transforms/simplify.py`` may rewrite), the ``simplify`` rule of an
identity element, and ``emit`` rules that spell a row as a Python operator,
a NumPy call or a SciPy one (``backends/pyemit.py`` asks the row first).

Nothing here is a primitive or names one: each row says which of these it
is, next to its other rules (``add_p.emit = BinaryOperator("+")``).

Layer: core.
"""
from __future__ import annotations

import importlib

import numpy as np

from .ir import Lit
from .rules import EmitRule, float64_operand

__all__ = ["Algebra", "is_scalar_lit", "drops_identity", "BinaryOperator", "UnaryMinus",
           "NumpyAxisCall", "NumpyLike", "PythonNumbersKept", "ScipyCall",
           "scipy_module", "NumpyCall", "DefinedCall", "PartEmit"]


# --- simplify ---------------------------------------------------------------------
class Algebra:
    """A row's arithmetic, for ``simplify`` with ``copies`` (generated code):
    IEEE arithmetic is symmetric in the sign, so moving a sign keeps every
    value, signed zeros included.

    * ``negation``: the row is ``-x``; ``-(-x)`` is ``x``, and the pass knows
      which value each negation negates;
    * ``move_sign(prim, ins, plain, negated, out)``: the equations computing the
      Var ``out`` (the row ``prim``'s result) with the sign of the negated operands (``negated[k]``;
      ``plain[k]``: operand ``k`` without its sign) moved out of the way
      (``a + (-b)`` is ``a - b``), or None; the pass asks it for real floats
      only. A row with one is IEEE arithmetic: a Python int literal against
      a float operand may be the equal float;
    * ``scalar_literals``: an array literal holding one value repeated (what
      a sum's transpose broadcasts) may be that value, broadcasting making
      the rest: ``"always"``, ``"copies"`` (the code's ``+`` broadcasts, the
      row's own shape rule does not) or None;
    * ``offset``: the row is ``a + b`` (``+1``) or ``a - b`` (``-1``). On
      integers an offset by a Python int literal composes exactly (modular
      arithmetic included): ``(k + 1) - 1`` is ``k``, ``(k + 2) - 1`` is
      ``k + 1`` -- what a loop over ``range(1, n)`` leaves in ``x[i - 1]``;
      ``with_offset(k, c, out)`` is the equation computing ``out = k + c``;
    * ``expands``: the row's result is its one operand broadcast to the
      result's shape, and nothing else (``broadcast_to``);
    * ``broadcasts``: the row broadcasts its two operands as NumPy does (its
      shape rule and its impl): an operand that an ``expands`` row made may
      be that row's operand where the other operand has the result's shape
      and all three share a dtype (``ct * broadcast_to(s, (n,))`` is ``ct *
      s``), which skips making the broadcast array (``np.broadcast_to``
      costs about 2 us, a small product 0.3 us).
    """

    __slots__ = ("negation", "move_sign", "scalar_literals", "offset", "with_offset",
                 "expands", "broadcasts")

    def __init__(self, negation=False, move_sign=None, scalar_literals=None, offset=0,
                 with_offset=None, expands=False, broadcasts=False):
        self.negation = negation
        self.move_sign = move_sign
        self.scalar_literals = scalar_literals
        self.offset = offset
        self.with_offset = with_offset
        self.expands = expands
        self.broadcasts = broadcasts


def is_scalar_lit(x, value=None):
    """Whether ``x`` is a scalar literal (equal to ``value`` if given)."""
    if not isinstance(x, Lit) or np.ndim(x.val) != 0 or hasattr(x.val, "_trace"):
        return False
    # a complex literal compares as a complex number (1j is not 0.0 or 1.0)
    return value is None or complex(np.asarray(x.val)) == value


def _same_aval(x, out):
    return tuple(x.aval.shape) == tuple(out.shape) and x.aval.dtype == out.dtype


def drops_identity(left=None, right=None):
    """The ``simplify`` rule of a binary row whose literal ``left`` (on the
    left) or ``right`` (on the right) is an identity (``x + 0`` is ``x``):
    the other operand, where it is a Var of the result's shape and dtype."""
    def simplify(eqn, ins, copies):
        a, b = ins
        out = eqn.outputs[0].aval
        if left is not None and is_scalar_lit(a, left) and _same_aval(b, out) \
                and not isinstance(b, Lit):
            return [], [b]
        if right is not None and is_scalar_lit(b, right) and _same_aval(a, out) \
                and not isinstance(a, Lit):
            return [], [a]
        return None
    simplify.__name__ = f"drops_identity_{left}_{right}"
    return simplify


# --- emit -------------------------------------------------------------------------
class BinaryOperator(EmitRule):
    """``a + b``: a row whose impl is Python's operator (``python_operator``):
    on a NumPy operand it *is* the ufunc (NumPy's ``__add__`` calls
    ``np.add``), on two Python scalars it is what the impl does too. Its
    result is a new value (``fresh``: never a view of an operand)."""

    fresh = True

    # Python's float operators that give NumPy's float64 bits, signed
    # zeros, inf and nan included, and raise nothing; ``/`` raises on a zero
    # divisor, where NumPy gives inf (``**``, ``%``, ``//`` are NumPy calls)
    EXACT = frozenset(("+", "-", "*", "<", "<=", ">", ">=", "==", "!="))

    def __init__(self, op):
        self.op = op

    def expression(self, code, eqn, ins, py):
        if eqn.params or len(ins) != 2:
            return None
        return f"{ins[0]} {self.op} {ins[1]}"

    def python_floats(self, eqn, kinds):
        """Python floats in, the same bits out as float64 NumPy scalars; a
        result of Python floats alone is one. ``/`` takes a Python float
        only beside a NumPy operand (NumPy's division then) or over a
        nonzero literal (Python's division is IEEE's but for a zero divisor)."""
        if eqn.params or len(kinds) != 2 or not all(map(float64_operand, eqn.inputs)):
            return None
        divisor = eqn.inputs[1]
        exact = self.op in self.EXACT or (self.op == "/" and is_scalar_lit(divisor)
                                          and type(divisor.val) is float and divisor.val != 0.0)
        accepts = tuple(exact or kinds[1 - k] == "np" for k in range(2))
        out = eqn.outputs[0].aval.shape == () and "np" not in kinds and "float" in kinds
        return accepts, (out,)


class UnaryMinus(EmitRule):
    """``-x`` (``-(-x)`` for an operand that starts with a minus): a new value."""

    fresh = True

    def expression(self, code, eqn, ins, py):
        if eqn.params or len(ins) != 1:
            return None
        return f"-({ins[0]})" if ins[0].startswith("-") else f"-{ins[0]}"

    def python_floats(self, eqn, kinds):
        """A Python float's sign flips as an ``np.float64``'s does."""
        if eqn.params or len(kinds) != 1 or eqn.inputs[0].aval.dtype != np.float64:
            return None
        return (True,), (kinds[0] == "float",)


class NumpyAxisCall(EmitRule):
    """``x.sum(axis=(0,))``: a row whose one param (``key``) is the ``axis``
    argument of the NumPy function ``fn``, which is also a method of NumPy
    arrays and scalars with the same meaning. The method is C; ``np.sum`` is
    a Python wrapper that dispatches to it, about 0.7 us more a call (half
    the cost of a sum of a small array). ``np.sum(x, axis=...)`` where ``x``
    may be a Python scalar, which has no methods."""

    def __init__(self, fn, key):
        self.fn, self.key = fn, key

    def expression(self, code, eqn, ins, py):
        if set(eqn.params) != {self.key}:
            return None
        return code.axis_call(self.fn, ins[0], eqn.params[self.key], eqn.inputs[0].aval.ndim,
                              py[0])


class NumpyLike(EmitRule):
    """``np.zeros_like(x)``: a row without params that is the NumPy function ``fn``."""

    def __init__(self, fn):
        self.fn = fn

    def expression(self, code, eqn, ins, py):
        return None if eqn.params else f"{code.np}.{self.fn}({ins[0]})"


class PythonNumbersKept(EmitRule):
    """``pow``, ``remainder``, ``floor_divide``: their impl checks at each
    call whether both operands are Python numbers, to give one back; the
    avals already say so, so the code does the call it needs and no check."""

    def __init__(self, fn):
        self.fn = fn

    def expression(self, code, eqn, ins, py):
        if eqn.params:
            return None
        call = f"{code.np}.{self.fn}({', '.join(ins)})"
        return f"{call}.item()" if eqn.outputs[0].aval.weak else call

    def python_floats(self, eqn, kinds):
        """The NumPy call: a Python float is converted as NumPy converts an
        ``np.float64`` where no operand is narrower (weak promotion keeps a
        float32's precision); the result is a NumPy scalar (the output is
        not weak: an operand was a NumPy value)."""
        if eqn.params or eqn.outputs[0].aval.weak \
                or not all(x.aval.weak or x.aval.dtype == np.float64 for x in eqn.inputs):
            return None
        return (True,) * len(kinds), (False,) * len(eqn.outputs)


class ScipyCall(EmitRule):
    """``scipy.special.gammaln(x)``: a row without params whose impl calls
    that SciPy function on its operands; ``scipy`` is bound as a module
    (the header says so), so the code runs with NumPy and SciPy alone."""

    def __init__(self, path):
        self.path = path            # below scipy: "special.gammaln"

    def expression(self, code, eqn, ins, py):
        if eqn.params:
            return None
        return f"{scipy_module(code)}.{self.path}({', '.join(ins)})"


def scipy_module(code):
    """The name of the ``scipy`` module in the code (bound when first used)."""
    return code.bind(("scipy", "scipy_"), importlib.import_module("scipy"), "module scipy")


class NumpyCall(EmitRule):
    """``np.fft.rfft(x, axis=-1, norm=None)``: a row whose impl is the NumPy function at
    ``path`` (below ``np``; below ``scipy`` with ``scipy=True``) of its operands and its
    params, passed by keyword (``keywords``: param -> keyword; all of them by default),
    its one result cast to the row's dtype where ``cast`` (``astype(..., copy=False)``:
    ``eigvals`` of a real matrix is real where all its eigenvalues are); ``chosen_by``:
    params that pick the function, ``path`` then a function of them (``dft``'s
    ``inverse``: ``fft`` or ``ifft``)."""

    def __init__(self, path, keywords=None, cast=False, scipy=False, chosen_by=(), fixed=None):
        self.path, self.keywords, self.cast, self.scipy = path, keywords, cast, scipy
        self.chosen_by = chosen_by      # params that pick the function: ``path(**them)``
        self.fixed = fixed or {}        # keyword arguments the impl always passes

    def expression(self, code, eqn, ins, py):
        params = {k: v for k, v in eqn.params.items() if k not in self.chosen_by}
        keywords = self.keywords if self.keywords is not None else {k: k for k in params}
        if set(keywords) != set(params):
            return None
        path = self.path if not self.chosen_by else self.path(
            **{k: eqn.params[k] for k in self.chosen_by})
        module = scipy_module(code) if self.scipy else code.np
        args = list(ins) + [f"{k}={code.param(eqn.params[p])}"
                            for p, k in sorted(keywords.items(), key=lambda kv: kv[1])]
        args += [f"{k}={code.param(v)}" for k, v in self.fixed.items()]
        text = f"{module}.{path}({', '.join(args)})"
        if self.cast and not eqn.prim.multiple_results:
            text += f".astype({code.dtype(eqn.outputs[0].aval.dtype)}, copy=False)"
        return text

    def statements(self, code, eqn, ins, py, outs, subs):
        """Several results, each cast: ``w, v = np.linalg.eig(a)``, then ``w =
        w.astype(...)`` for each."""
        if not (self.cast and eqn.prim.multiple_results):
            return None
        text = self.expression(code, eqn, ins, py)
        if text is None:
            return None
        return [f"{', '.join(outs)}{',' if len(outs) == 1 else ''} = {text}"] + [
            f"{o} = {o}.astype({code.dtype(v.aval.dtype)}, copy=False)"
            for o, v in zip(outs, eqn.outputs)]


class DefinedCall(EmitRule):
    """``linrec_numpy(a, b, axis=0, reverse=False)``: a row whose impl is NumPy code with
    logic of its own: ``fn``, a function of wengert's that reads only ``np`` (``math``,
    ``scipy``) and the functions ``deps``, defined in the generated file above the code
    (``code.define``, its text taken from wengert's source) and called there with the
    row's params by keyword; so the code runs with NumPy (and SciPy) alone. The row's
    impl calls the same function. On a lazy library's arrays (Dask's: ``code.lazy``), whose
    values that NumPy code would compute, the call is one task of the graph (``code.task``),
    as the trace engine runs the row's impl there (``own_numpy``)."""

    own_numpy = True    # the impl is NumPy code: one task on Dask's (``core.trace``)

    def __init__(self, fn, deps=(), any_library=False, numba=None):
        # ``any_library``: ``fn`` hands its arrays to their own library's functions (no
        # ``np.asarray``), so it runs on CuPy's as on NumPy's (``libraries.numpy_only``);
        # ``numba``: a twin of ``fn`` in numba's subset (loops), which a writer for numba
        # calls compiled (``backends.numba``), or None where numba has none
        self.fn, self.deps, self.any_library, self.numba = fn, tuple(deps), any_library, numba

    def expression(self, code, eqn, ins, py):
        name = code.define(self.fn, self.deps, self.numba)
        args = list(ins) + [f"{k}={code.param(v)}" for k, v in sorted(eqn.params.items())]
        if self.own_numpy and code.lazy:
            return code.task(name, eqn, args)
        return f"{name}({', '.join(args)})"


class PartEmit(EmitRule):
    """``np.real(x).copy()[()]`` (a copy: NumPy's part is a view; a 0-d result a
    scalar), and a Python number's part, ``float(x.real)``, where the operand may be
    one: the impl's two cases, chosen when the code runs."""

    def __init__(self, numpy_text, python_text):
        self.numpy_text, self.python_text = numpy_text, python_text

    def expression(self, code, eqn, ins, py):
        x = code.atom(ins[0])
        numpy_text = self.numpy_text.format(np=code.np, x=ins[0])
        if not py[0]:
            return numpy_text
        return (f"({self.python_text.format(x=x)} if type({ins[0]}) in (int, float, complex) "
                f"else {numpy_text})")

    def python_scalars(self, eqn, py_ins, run):
        """A Python number's part (or conjugate) is one, as the impl gives it."""
        return [py_ins[0]]
