"""The rule types a row is made of, for the passes after the transforms: ``EmitRule`` (its
Python code, asked by the backends' code writers) and ``LowerRule`` (its imperative form,
asked by ``lower``), with the common lower rules (``FRESH``, ``ElementwiseLower``,
``ScaleLower``); and the makers of elementwise rows that ``arith``, ``ordering``,
``transcendental`` and ``elementwise`` share: ``unary_row`` (a one-operand elementwise row,
registered) and ``python_numbers_kept`` (an impl that keeps Python's number types, as
Python's operators do). Nothing here is a primitive or calls one; the shape rules rows are
built with are in ``shapes``.

Layer: core.
"""
from __future__ import annotations

import math

import numpy as np

from .ir import Eqn, Lit, Var
from .primitive import BROADCASTING, NOT_LINEAR, Primitive, register
from .shapes import elementwise_aval, python_operator


class EmitRule:
    """A row's ``emit`` rule: its Python code, for ``backends/pycodegen.py``
    (which passes ``code``, its code writer: names, literals and the text
    helpers). Each method may answer None: the code generator's default.
    ``asks``: the methods a rule's class writes, so the code generator skips
    the others (most rows write only ``expression``)."""

    asks = frozenset()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.asks = frozenset(m for m in ("statements", "expression", "python_scalars",
                                         "python_floats", "operand_uses", "prepare")
                             if getattr(cls, m) is not getattr(EmitRule, m))

    def statements(self, code, eqn, ins, py, outs, subs):
        """The statements of ``outs = eqn (ins)`` (``py[k]``: operand ``k``
        may be a Python scalar; ``subs``: the code blocks of the
        sub-Programs, by param), or None: ``outs = <expression>``."""
        return None

    def expression(self, code, eqn, ins, py):
        """The right-hand side of ``outs = eqn (ins)``, or None: the
        Emitter's (an operator, a NumPy call, the impl)."""
        return None

    def python_scalars(self, eqn, py_ins, run):
        """Which outputs may be Python scalars, given which operands may
        (``run(prog, flags)`` answers it for a sub-Program), or None: those
        of an impl, which returns NumPy values."""
        return None

    def python_floats(self, eqn, kinds):
        """Where the code may hold a float64 scalar as a Python float (a
        *stand-in*: the interpreter holds an ``np.float64``, and Python's
        float gives the same bits, ``backends/lower_facts.python_floats``):
        given each operand's kind (``"np"``: a NumPy value; ``"py"``: maybe a
        Python scalar, as in the interpreter; ``"float"``: maybe a stand-in),
        ``(accepts, outs)``: ``accepts[k]``, a stand-in at operand ``k`` gives
        this row the interpreter's values and types; ``outs[m]``, output
        ``m`` may be a stand-in (the code makes a Python float or bool where
        the impl makes a NumPy one). None: no operand accepts one (it is
        converted first) and the outputs are NumPy values."""
        return None

    def operand_uses(self, eqn):
        """How each operand is read: ``"trip"`` (a loop's trip count),
        ``"xs"`` (a loop's per-iteration values) or ``"other"``; None: all
        ``"other"``."""
        return None

    def prepare(self, eqn, params, reuse):
        """The params with their sub-Programs rewritten for code generation
        (the code may share values between them; ``verify`` need not accept
        the result)."""
        return params


def either(a, b):
    """The join of two ``python_scalars`` flags: bools (may be a Python
    scalar) or, in the stand-in analysis, sets (where a Python float standing
    in for a NumPy one may come from)."""
    if isinstance(a, bool) and isinstance(b, bool):
        return a or b
    return (a or frozenset()) | (b or frozenset())


def stand_in_flags(flags):
    """Whether ``flags`` are the stand-in analysis' (sets), not bools."""
    return any(isinstance(f, frozenset) for f in flags)


_EXACT_INT = 2 ** 53


def float64_operand(x):
    """Whether a Python float in place of an ``np.float64`` meets operand
    ``x`` as NumPy's own scalar would: ``x`` is float64 (NumPy promotes a
    Python float with float32 or complex64 to those, an ``np.float64`` to
    float64 or complex128), or a Python int literal a float holds exactly
    (Python compares a float and a larger int exactly, NumPy rounds the int)."""
    if x.aval.dtype == np.float64:
        return True
    val = getattr(x, "val", None)
    return type(val) in (int, bool) and abs(val) <= _EXACT_INT


# --- the rows of elementwise primitives --------------------------------
def unary_row(name, impl, jvp, float_out=True, **fields):
    """A one-operand elementwise row, registered: NumPy's broadcasting shape rule, written in
    place where its operand is dead (``elementwise_lower``), batched as it is
    (``BROADCASTING``); ``fields``: its other fields (``complex_ok``, ``differentiable``...)."""
    fields.setdefault("batch", BROADCASTING)
    return register(Primitive(name, nargs=1, impl=impl, jvp=jvp, transpose=NOT_LINEAR,
                              abstract_eval=elementwise_aval(name, float_out=float_out,
                                                             python_scalars=python_operator(impl)),
                              lower=elementwise_lower(impl), **fields))


def constant_row(name, impl, abstract_eval, nargs=1, **fields):
    """A row whose outputs carry no derivative (``differentiable=False``), registered:
    predicates, counts, positions, orderings and integer parts of traced values. It has no
    jvp rule and no transpose: every transform runs it on the primal values alone and its
    outputs are constants of the derivative (``transforms/jvp.py``), so code that only
    *inspects* the values it differentiates (``np.isnan``, ``np.nonzero``, ``(w > 0).all()``)
    runs unchanged. This is the one way wengert lets a value flow through without a
    derivative; a row that would be wrong as a constant (a value the result depends on
    smoothly) must not be made with it."""
    return register(Primitive(name, nargs=nargs, impl=impl, jvp=None, transpose=NOT_LINEAR,
                              abstract_eval=abstract_eval, differentiable=False, **fields))


def python_numbers_kept(ufunc):
    """``ufunc`` as an impl that gives two Python numbers a Python number, as
    Python's own ``**``, ``%`` and ``//`` do (``s ** 2`` of a Python float
    is one, weakly typed: NEP 50): NumPy's value, Python's type."""
    def impl(x, y):
        out = ufunc(x, y)
        if type(x) in PY_NUMBERS and type(y) in PY_NUMBERS:
            return out.item()
        return out
    impl.__name__ = f"{ufunc.__name__}_impl"
    return impl


# Python's number types: a value of one is weakly typed (NEP 50)
PY_NUMBERS = (int, float, complex)


class LowerRule:
    """A row's ``lower`` rule: what ``lower/__init__.py`` needs to write the
    row's application imperatively. Every method has the default of a row
    that says nothing: its result may share memory with any operand, it
    updates nothing in place, absorbs no sum and holds no sub-Program whose
    ownership it knows.

    ``fresh(eqn)``: the results are new arrays, never views of an operand.
    ``update(eqn)``: the operands an in-place form may overwrite (the result
    is that operand, changed); ``inplace(code, eqn, ins, py, outs, p)`` writes
    it for operand ``p``, which nothing reads afterwards, or answers None
    (then the code is the functional form).
    ``sums(eqn)``: the result is the sum of its two operands (same aval).
    ``absorb(eqn, k, acc, out, sink)``: equations computing ``acc +
    eqn.outputs[k]`` into ``out`` without the dense temporary, replacing
    ``eqn`` (its other outputs unchanged), or None.
    ``accumulates(eqn)``: the operands the result is, plus values that do
    not read them (a sum's two, a scatter-add's target); ``additive(eqn, m,
    p, check)`` the same of output ``m`` and operand ``p`` of a holder of
    sub-Programs (``check(prog, input, output)`` answers it for one).
    ``ownership(eqn, ctx)``: the roots of the outputs of a holder of
    sub-Programs, analysing them through ``ctx`` (``lower.Ownership``).
    ``placed(eqn, sink)``: the operand position of the value the result
    holds at some positions, with zeros at the others (``index_add(0, v,
    i)``: ``v``), or None; a scaling of the result is then the scaling of
    that value, placed (``ScaleLower``).
    ``region(eqn)``: ``(start, stop)`` when the row adds its value to whole
    rows ``start:stop`` of its first operand, else None; ``assemble(pieces,
    out)``: equations making ``out`` of such values that tile its first
    axis (``(start, stop, value)`` in order), or None.
    ``element(eqn)``: for a row that reads, sets or adds to one element of an
    array (``x[i]``, ``x[i] = v``, ``x[i] += v``; every axis indexed by one
    int), ``(kind, value, positions)``: ``kind`` "read", "set" or "add", the
    value operand (None for a read), the positions (per axis, an operand, an
    int Var or literal, or a Python int); the array is operand 0; else None.
    ``element_sum(a, b, out)`` / ``element_store(x, v, position, out)``:
    the equation of the sum the row's ``x[i] += v`` performs on one element,
    and of ``out = x`` with ``v`` stored at ``position`` (one axis).
    ``promote(eqn, carried)``: a loop's equations with elements carried from
    step to step held in scalars (``lower.carry``), or None."""

    def fresh(self, eqn):
        return False

    def update(self, eqn):
        return None

    def inplace(self, code, eqn, ins, py, outs, p):
        return None

    def sums(self, eqn):
        return False

    def absorb(self, eqn, k, acc, out, sink):
        return None

    def ownership(self, eqn, ctx):
        return None

    def accumulates(self, eqn):
        return ()

    def operand_inputs(self, eqn):
        """Per sub-Program, {input: operand position} of the inputs that are
        the operands as given (a branch's), or None."""
        return None

    def with_operands(self, eqn, extra, programs):
        """``eqn`` given ``extra`` operands, read by ``programs`` (the new
        sub-Programs) as extra inputs after their own."""
        return None

    def additive(self, eqn, m, p, check):
        return False

    def placed(self, eqn, sink):
        return None

    def region(self, eqn):
        return None

    def assemble(self, pieces, out):
        return None

    def element(self, eqn):
        return None

    def promote(self, eqn, carried):
        return None


class Fresh(LowerRule):
    """A row whose results are always new arrays (a ufunc, a reduction)."""

    def fresh(self, eqn):
        return True


FRESH = Fresh()


class ElementwiseLower(Fresh):
    """An elementwise ufunc's row (``op``: its Python operator, if its impl
    is one): a new array, or written into an operand that nothing reads
    afterwards (``np.exp(v, out=v)``, ``t *= s``) where that operand has the
    result's shape and dtype and every other operand has that dtype too (or
    is a Python number): the values are then those of the functional form,
    without a new array of the result's size."""

    _COMMUTES = ("+", "*")
    # NumPy computes a new array of one element faster than it writes into
    # one (its one-element path: ``t *= s`` takes 3x ``t * s``); from two
    # elements on writing is as fast, and far faster where a new array costs
    # page faults. Judged at the sizes the code is staged at (a symbolic
    # length's value there): code staged at one element holds there only
    # (``api.source``: the text differs when staged again at n + 1)
    SMALLEST = 2

    def __init__(self, ufunc, op=None):
        self.ufunc, self.op = ufunc, op

    def update(self, eqn):
        out = eqn.outputs[0].aval
        if eqn.params or len(eqn.outputs) != 1 or not out.shape:
            return ()
        # (a length known only at run time, None, is taken to be large)
        if math.prod(self.SMALLEST if d is None else int.__int__(d) for d in out.shape) \
                < self.SMALLEST:
            return ()
        if any(x.aval.dtype != out.dtype and not x.aval.weak for x in eqn.inputs):
            return ()
        return tuple(p for p, x in enumerate(eqn.inputs)
                     if not isinstance(x, Lit) and not x.aval.weak
                     and tuple(x.aval.shape) == tuple(out.shape))

    def inplace(self, code, eqn, ins, py, outs, p):
        target = ins[p]
        if self.op is not None and len(ins) == 2 and (p == 0 or self.op in self._COMMUTES):
            line = f"{target} {self.op}= {ins[1 - p]}"
        else:
            line = code.ufunc_into(self.ufunc.__name__, ins, target)
        return [line, f"{outs[0]} = {target}"]


def elementwise_lower(impl):
    """The ``lower`` rule of a row whose impl is ``impl``: ``ElementwiseLower``
    for an elementwise ufunc of one output, else None."""
    if isinstance(impl, np.ufunc) and impl.nout == 1 and impl.signature is None:
        return ElementwiseLower(impl)
    return None


class ScaleLower(ElementwiseLower):
    """A product or quotient by a finite scalar literal ``c`` (a new array):
    ``acc + c * y``, where ``y`` holds a value ``v`` at some positions and
    zeros elsewhere (its row's ``placed``: a transposed slice, ``index_add(0,
    v, i)``), is ``acc + index_add(0, c * v, i)``, which ``acc`` absorbs:
    ``acc[i] += c * v``, without the dense zeros, their scaling and the
    dense sum. At the placed positions ``c * (0 + v)`` is ``0 + c * v``
    (for one placement; repeated positions are summed in another order, to
    rounding, as ``UpdateLower``'s absorption sums them); elsewhere ``acc +
    c * 0`` is ``acc`` (a finite ``c``; a -0.0 entry of ``acc`` stays -0.0
    where the dense sum gave +0.0, a cotangent's sign of zero). ``y``
    stays while something else reads it (then its other reader may absorb
    it in turn). ``operands``: the positions ``y`` may take (a quotient's
    numerator only). As an elementwise ufunc's row (``ufunc``, ``op``), it
    also writes into a dead operand (``ElementwiseLower``)."""

    def __init__(self, ufunc, op, operands):
        super().__init__(ufunc, op)
        self.operands = operands

    def absorb(self, eqn, k, acc, out, sink):
        for q in self.operands:
            y, c = eqn.inputs[q], eqn.inputs[1 - q]
            if not (isinstance(c, Lit) and np.ndim(c.val) == 0 and c.aval.dtype.kind == "f"
                    and np.isfinite(c.val)) or not isinstance(y, Var) \
                    or y not in sink.producers or not sink.fits(y, out):
                continue
            pe = sink.producers[y]
            rule = pe.prim.lower
            p = rule.placed(pe, sink) if rule is not None else None
            if p is None:
                continue
            v = pe.inputs[p]
            ins = [v, c] if q == 0 else [c, v]
            if eqn.prim.abstract_eval(*[x.aval for x in ins]).dtype != out.aval.dtype:
                continue
            if acc is None:
                return []
            t = Var(eqn.prim.abstract_eval(*[x.aval for x in ins]), "", out.role)
            scaled = pe.replace([t if j == p else x for j, x in enumerate(pe.inputs)],
                         [Var(y.aval, "", y.role)], pe.params)
            absorbed = rule.absorb(scaled, 0, acc, out, sink)
            if absorbed is None:
                continue
            return [eqn.replace(ins, [t], eqn.params)] + absorbed
        return None
