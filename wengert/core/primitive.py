"""The Primitive type, the one registry, and the symbolic values rules meet
(``Zero`` tangents, ``Linear`` markers).

A primitive is declared once (see STYLE.md section 2) with these fields:

* ``impl(*args, **params)``      NumPy implementation on concrete values;
* ``abstract_eval(*avals, **params) -> Aval | tuple[Aval]``   shape/dtype rule;
* ``jvp(primals, tangents, **params) -> (out, out_dot)``       written with
  primitive wrappers, so it can itself be differentiated; or ``BY_IMPL``:
  the transform runs ``impl`` (written with primitives) on its own values;
* ``linearize``, ``linearize_for_vjp``, ``jvp_for_grad``: optional rules of
  the same form that one transform uses in place of ``jvp`` (each trace picks
  its rule, see ``transforms/jvp.py``): ``linearize`` where the tangents are
  recorded into a linear Program (control flow splits into a primal and a
  linear part), ``linearize_for_vjp`` where that Program is then transposed
  (checkpoints, custom_vjp's fwd/bwd), ``jvp_for_grad`` where forward mode
  stands in for ``grad``;
* ``transpose(ct, *args, **params) -> tuple``  only for primitives linear in
  some operands; operands being transposed arrive as ``Linear(aval)`` markers
  and the rule returns one cotangent per operand (``None`` where not linear);
  otherwise the explicit ``NOT_LINEAR``;
* ``zero_rule(*args, **params)``  what the primitive gives when an operand is a
  symbolic ``Zero`` tangent (zero propagation), or ``ZERO_IF_ANY``: the row is linear in
  each operand separately (``mul``, ``matmul``, ``reduce_sum``), so a zero operand gives a
  zero of its result's aval;
* ``batch(args, batched, **params)``  how a linear primitive runs on operands
  carrying a leading batch axis (Jacobians in one pass), or ``BROADCASTING``: an
  elementwise row, whose operands broadcast (``transforms/batching.py`` lines their axes
  up); ``None`` falls back to a loop over the batch;
* ``dce(eqn, used, dce) -> eqn``  the equation without the parts (loop
  carries, operands) that its ``used`` outputs (one flag each) do not need
  (``dce``: the pass, for the sub-Programs it prunes);
* ``simplify(eqn, ins, copies) -> (eqns, outs) | None``  a rewrite of the
  equation (operands ``ins``): the equations in its place and an atom for
  each output (a ``cond`` on a literal index is its branch; ``x + 0`` is
  ``x``);
* ``algebra``  its arithmetic, for ``simplify``'s sign rules (an ``Algebra``,
  ``pass_rules.py``: ``-(-x)`` is ``x``, ``a + (-b)`` is ``a - b``);
* ``print(eqn, names)``  the sub-Programs it holds, each with the names its
  read-only inputs take (``names(atoms)``: the names given so far; see
  ``printing.walk``);
* ``emit``  its Python code (``backends/pycodegen.py``): an ``EmitRule``
  (``rules.py``) whose ``statements`` (control flow, calls made at run
  time) or ``expression`` (``abs(x)``, ``a + b``, ``np.sum(x, axis=0)``;
  ``pass_rules.py`` has the common ones) the code generator asks first, with
  ``python_scalars`` for primitives that pass values through;
* ``lower``  its imperative form (``lower/__init__.py``): a ``LowerRule``
  (``rules.py``) saying whether its result is a new array, which operand an
  in-place form overwrites (``x[i] += v``), how a sum into an accumulator
  moves into it, and, for control flow, how ownership of arrays passes
  through its sub-Programs;
* ``sparsity(an, ops, outs, **params)``  which independent variables each element of its
  results depends on, for ``transforms/sparsity.py``: given its operands as ``Abstract``
  values (``deps.py``: shape, the value where known, the index sets ``Deps`` where it depends
  on one) and its results' avals, one ``Deps`` per result (None: it depends on none), or one
  ``Abstract`` per result where the rule computes the values too (control flow runs its
  sub-Programs with ``an.run``; ``an.local``: every value is known). Or a generic rule:
  ``ELEMENTWISE`` (each element depends on the elements its operands broadcast to it, not
  where another operand of a product, a ``ZERO_IF_ANY`` row, is a constant 0: the default
  of a row whose shape rule is elementwise), ``REDUCTION`` (along the ``axes``
  param), ``MOVES`` / ``moves(*k)`` (the impl run on the positions of the operands ``k``,
  by default all, says which element each result element is: reshape, getitem), ``DENSE``
  (each element depends on everything the operands do: always sound; linear algebra),
  ``CONSTANT`` (nothing: ``zeros_like``; the default of a row with ``differentiable=False``).
  The rule must hold for every value an unknown operand may take; ``tests/primitives/
  test_sparsity_rules.py`` checks every row has one;
* ``complex_ok``  its rules were audited for complex operands and results
  (JAX's conventions: complex tangents, the linear transpose without
  conjugation); complex values on any other primitive raise
  ``UnsupportedDtypeError`` naming it (the conventions are in
  ``primitives/arith.py``'s docstring);
* ``numpy_scalar``  True, or a predicate on its params, where NumPy answers
  the operation at a 0-d result with a scalar (``np.float64``), not a 0-d
  array: ufuncs (the rows with an elementwise shape rule, the default),
  reductions, full integer indexing; ``OPERAND_KIND`` where the result is
  of its first operand's kind (a cast: ``s.astype`` of a scalar is one, of
  a 0-d array an array). ``y += v`` rebinds a scalar but writes into a 0-d
  array, which every other name of it sees; a 0-d value of a row that says
  nothing may be an array (``inplace.is_scalar``).

Every field is given in the row's constructor call, next to the rule functions it names;
``register`` enters the row in the table and freezes it: a row assigned to afterwards raises
(a rule set later, from another module, would leave the row's block an incomplete account of
it, and a pass could run before the assignment). Applying a primitive (``bind``) and the
traces that interpret it are in ``trace.py``.

Layer: core.
"""
from __future__ import annotations

import numpy as np

from . import context as _context, dims as _dims
from .ir import Ident, aval_of
from .atoms import HasAval, TracerBase  # (the tracers' base, which rules test values against)
from .errors import UnsupportedDtypeError, WengertError, user_location

__all__ = ["Primitive", "PRIMITIVES", "register", "NOT_LINEAR", "BY_IMPL", "OPERAND_KIND",
           "ZERO_IF_ANY", "BROADCASTING", "Zero", "Linear", "snapshot", "TracerBase",
           "raise_typed", "rule_error", "is_complex", "refuse_complex", "instantiate", "is_zero",
           "zeros_of", "is_float", "zeros", "ELEMENTWISE", "REDUCTION", "DENSE", "CONSTANT",
           "MOVES", "Moves", "moves"]

PRIMITIVES: dict[str, "Primitive"] = {}


class _NotLinear:
    def __repr__(self):
        return "NOT_LINEAR"


NOT_LINEAR = _NotLinear()


class _ByImpl:
    def __repr__(self):
        return "BY_IMPL"


class _OperandKind:
    def __repr__(self):
        return "OPERAND_KIND"


# ``numpy_scalar`` of a row whose 0-d result is a scalar where its first
# operand is one (``Primitive``)
OPERAND_KIND = _OperandKind()


# a rule slot holding BY_IMPL: the transform differentiates the primitive by
# running its impl (written with primitives) on its own values
BY_IMPL = _ByImpl()


class _Marker:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


# ``zero_rule`` of a row linear in each operand separately: a zero operand gives a zero
ZERO_IF_ANY = _Marker("ZERO_IF_ANY")
# ``batch`` of an elementwise row: batched operands broadcast against the others
BROADCASTING = _Marker("BROADCASTING")
# the generic ``sparsity`` rules (``Primitive``'s docstring; ``transforms/sparsity.py``)
ELEMENTWISE = _Marker("ELEMENTWISE")
REDUCTION = _Marker("REDUCTION")
DENSE = _Marker("DENSE")
CONSTANT = _Marker("CONSTANT")


class Moves:
    """``sparsity`` of a row that moves elements: its impl, run on the flat positions of the
    operands ``data`` (None: all; the others are indices, passed as they are), gives the
    position each result element comes from."""

    __slots__ = ("data",)

    def __init__(self, data=None):
        self.data = data

    def __repr__(self):
        return "MOVES" if self.data is None else f"moves{self.data}"


MOVES = Moves()


def moves(*data):
    """The ``Moves`` rule of a row whose operands ``data`` are moved, the others indices."""
    return Moves(data)


class Primitive:
    """One row of the primitive table."""

    __slots__ = ("name", "nargs", "impl", "abstract_eval", "jvp", "transpose",
                 "zero_rule", "batch", "multiple_results", "inline", "differentiable",
                 "linearize", "linearize_for_vjp", "jvp_for_grad", "runtime", "effect",
                 "complex_ok", "dce", "simplify", "algebra", "print", "emit", "lower",
                 "numpy_scalar", "sparsity", "_frozen")

    def __init__(self, name, *, nargs, impl, abstract_eval, jvp, transpose,
                 zero_rule=None, batch=None, multiple_results=False, inline=False,
                 differentiable=True, linearize=None, linearize_for_vjp=None,
                 jvp_for_grad=None, runtime=False, effect=False, complex_ok=False,
                 dce=None, simplify=None, algebra=None, print=None, emit=None, lower=None,
                 numpy_scalar=None, sparsity=None):
        self.name = name
        self.nargs = nargs                  # None: variadic
        self.impl = impl
        self.abstract_eval = abstract_eval
        self.jvp = jvp
        self.transpose = transpose
        self.zero_rule = zero_rule
        self.batch = batch
        self.multiple_results = multiple_results
        self.inline = inline                # staging runs impl on tracers (custom rules)
        self.differentiable = differentiable  # False: outputs carry no tangent
        self.linearize = linearize                  # None: jvp
        self.linearize_for_vjp = linearize_for_vjp  # None: linearize
        self.jvp_for_grad = jvp_for_grad            # None: jvp
        # runtime: its value is known only when the code runs (a global's
        # array now, a random draw), so staging records it and never computes
        # it (``bind``); effect: it also acts outside (draws, prints), so it is
        # never merged, dropped or run twice (``host``)
        self.runtime = runtime or effect
        self.effect = effect
        self.complex_ok = complex_ok        # rules right for complex values (see above)
        # the passes' rules (None: the pass's default), see ``Primitive``'s docstring
        self.dce = dce
        self.simplify = simplify
        self.algebra = algebra
        self.print = print
        self.emit = emit
        self.lower = lower                  # its imperative form (``lower/__init__.py``)
        # a ufunc's 0-d result is a NumPy scalar (``elementwise_aval`` marks its rule)
        self.numpy_scalar = (getattr(abstract_eval, "ufunc", False) if numpy_scalar is None
                             else numpy_scalar)
        # which inputs its results depend on (see above): by default, from its shape rule
        if sparsity is None:
            sparsity = (ELEMENTWISE if getattr(abstract_eval, "elementwise", False)
                        else None if differentiable else CONSTANT)
        self.sparsity = sparsity
        self._frozen = False

    def __setattr__(self, name, value):
        if getattr(self, "_frozen", False):
            raise AttributeError(f"primitive {self.name!r} is registered: its fields are "
                                 "given in its constructor call, not assigned afterwards")
        object.__setattr__(self, name, value)

    @property
    def linear(self):
        return self.transpose is not NOT_LINEAR

    def __repr__(self):
        return f"<primitive {self.name}>"


def register(prim):
    if prim.name in PRIMITIVES:
        raise ValueError(f"primitive {prim.name!r} registered twice")
    PRIMITIVES[prim.name] = prim
    prim._frozen = True
    return prim


# --- symbolic zeros and linear markers -------------------------------------

class Zero(HasAval):
    """A symbolic zero tangent or cotangent of a known aval.

    ``Zero.like(value)`` defers computing the aval until a rule asks for it:
    most zero tangents (those of constants) are only tested for, never read."""

    __slots__ = ("_aval", "_like")

    def __init__(self, aval):
        self._aval = aval

    @classmethod
    def like(cls, value):
        z = cls.__new__(cls)
        z._aval = None
        z._like = value
        return z

    @property
    def aval(self):
        if self._aval is None:
            self._aval = aval_of(self._like)
            self._like = None
        return self._aval

    def __repr__(self):
        return f"Zero({self.aval.short()})"


class Linear(HasAval):
    """Marks the operand a transpose rule is transposing with respect to."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Linear({self.aval.short()})"


def snapshot(x, memo=None):
    """``x`` as a value a derivative may keep: a writeable ndarray is copied
    (its owner may write to it before the derivative is used: ``w *= 0.25``
    after ``y = w * x``), read-only arrays, scalars and tracers are kept as
    they are, and so are constants of symbolic shape (``context``), which
    staging made and nobody else holds. ``memo`` (a dict that lives as long
    as one derivative's recording) keeps one copy of an array while it holds
    the same bytes: a loop that reads a global array at each step keeps one
    copy, not one per step."""
    if type(x) is not np.ndarray or not x.flags.writeable or _context.shape_of(x) is not None:
        return x
    if memo is None:
        return x.copy()
    key = Ident(x)          # holds x: its id is not reused while the memo lives
    kept = memo.get(key)
    if kept is None or not _same_bytes(kept, x):
        kept = memo[key] = x.copy()
    return kept


def _same_bytes(a, b):
    """Same shape, dtype and bytes (NaN equal to itself, 0.0 not -0.0)."""
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(
        np.ascontiguousarray(a).reshape(-1).view(np.uint8),
        np.ascontiguousarray(b).reshape(-1).view(np.uint8))


def is_zero(x):
    return isinstance(x, Zero)


def is_float(aval):
    return aval.dtype.kind in "fc"


def instantiate(x):
    """A Zero becomes a concrete array of zeros (a Python 0.0 for the tangent
    of a Python float, which stays weakly typed); anything else is returned."""
    return zeros(x.aval) if isinstance(x, Zero) else x


def zeros(aval):
    """Concrete zeros of ``aval``: a Python 0.0 for a Python float's. Of a
    symbolic shape (``dims``), an array remembered as having that shape."""
    if aval.weak and aval.shape == () and aval.dtype == np.float64:
        return 0.0
    return _dims.zeros(aval.shape, aval.dtype)


def _out_avals(prim, args, params):
    avals = [aval_of(a) for a in args]
    return prim.abstract_eval(*avals, **params)


def zeros_of(prim, args, params):
    """What a row whose ``zero_rule`` is ``ZERO_IF_ANY`` gives when an operand is a ``Zero``:
    a zero of each result's aval."""
    out = _out_avals(prim, args, params)
    return tuple(Zero(a) for a in out) if prim.multiple_results else Zero(out)


# --- typed errors of a row's impl on concrete values ----------------------
def raise_typed(prim, args, params, err):
    """Raise, for NumPy's ValueError ``err`` from ``prim.impl`` on ``args``,
    the typed error the shape rule gives (``rule_error``), or ``err`` itself
    where the rule has nothing to add. (Callers keep the ``try`` around the
    impl call themselves: the path that succeeds costs no extra frame.)"""
    typed = rule_error(prim, args, params)
    if typed is None:
        raise err
    raise typed from err


def rule_error(prim, args, params):
    """Why ``prim`` refuses ``args``, in wengert's terms: the typed error its
    shape rule raises on their avals (with the user's file:line), or None.

    Concrete values skip the shape rule (NumPy checks them as it computes),
    so where NumPy refuses them (a ValueError of its own wording) the rule is
    asked: the error is then the same as where the rule runs first (staging,
    the source engine), whichever way the value was computed."""
    if prim.abstract_eval is None:
        return None
    try:
        avals = [aval_of(a) for a in args]
        prim.abstract_eval(*avals, **params)
    except WengertError as err:
        where = user_location()
        return err if str(err).startswith(where) else type(err)(f"{where}: {err}")
    except Exception:   # noqa: BLE001 -- the rule has nothing to add; NumPy's error stands
        return None
    return None


def is_complex(x):
    """Whether ``x`` is a complex value: a Python complex, or of a complex dtype."""
    return type(x) is complex or getattr(getattr(x, "dtype", None), "kind", "") == "c"


def refuse_complex(prim, operands):
    """A complex operand of a primitive whose rules were not audited for
    complex values (``Primitive.complex_ok``) is a typed error naming it: a
    rule written for reals can be silently wrong on them (a cast to float
    drops the imaginary part)."""
    if not prim.complex_ok and any(is_complex(p) for p in operands):
        raise UnsupportedDtypeError.complex_operand(prim.name)
