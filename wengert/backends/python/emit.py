"""Python text for one equation's pieces: literals, params, and the
expression of each primitive (helpers of ``python.codegen``), in a ``Namespace``
(``python.names``: identifiers, and the values the code reads).

Expressions, in order of preference:

* the row's ``emit`` rule, when it has one: a Python operator (``+ - * /
  < == ...``) for arithmetic and comparisons whose impl is that operator,
  a NumPy call when the params map onto a NumPy function's arguments one
  for one (``np.sum(x, axis=(0,))``, ``x[1:3, ::-1]``), and the like
  (``core/pass_rules.py`` holds the common ones);
* a NumPy call when the primitive's impl *is* that NumPy function
  (``np.sin(x)``, ``np.linalg.solve(a, b)``);
* otherwise the primitive's impl, bound under the primitive's name:
  ``broadcast_to(x, shape=(3,))``. This always works, so every registered
  primitive can be emitted.

Layer: backends.
"""
from __future__ import annotations

import math
import re

import numpy as np

from ...core import libraries
from ...core.dims import Dim, Scalar, has_dims
from ...core.lengths import linear_form, render
from ...core.ir import Ident, aval_of
from ...core.errors import ConcretizationError
from ...core.literals import NUMPY_NAMES, PY_SCALARS, array_recipe, ufunc_call
from ...core.primitive import TracerBase
from ...primitives.index import DYN
from .names import CodegenError, Namespace

__all__ = ["CodegenError", "Emitter", "PY_SCALARS", "ufunc_call"]  # (the two from core.literals)


_INLINE_ARRAY_SIZE = 16     # integer/boolean index arrays up to this size are written out


class Emitter(Namespace):
    """Literals, params and expressions as Python text, in a ``Namespace``
    (the identifiers and the values the text needs)."""

    def __init__(self, var_names):
        super().__init__(var_names)
        self.inputs = None                     # the function's parameters, for lengths
        self.lengths = {}                      # a length's text -> its name
        self.prologue = []                     # ``name = text``, at the function's entry
        # the Vars held as Python floats standing in for float64 NumPy
        # scalars (``lower.facts.python_floats``): a row spells its operands
        # and results accordingly (``x.item(i)`` for an element read)
        self.floats = frozenset()
        # the name of an input of another array library (Dask, CuPy) when the
        # code runs on one: the arrays the code makes are made ``like=`` it,
        # and no value is read to decide what to compute (``foreign``); ``lazy``:
        # that library computes only when asked (Dask): no branch on a value
        self.like = None
        self.lazy = False

    def library(self, like, lazy):
        """Code on arrays of another library: ``like`` the position of an input of it, or the
        place outside the function (``host.EnvRef``) of one (``api.source.outside_library``),
        read there; ``lazy``: Dask's."""
        if like is not None:
            self.like = self.inputs[like] if type(like) is int else self.outside(like)
        self.lazy = lazy

    @property
    def foreign(self):
        """Whether the code runs on arrays of another library: no test of a
        value in the code (a Dask array's exist only when computed, a GPU's
        would be copied back)."""
        return self.like is not None

    def refuse_lazy(self, eqn, what):
        """Raise, when the code runs on a lazy library's arrays (Dask), for ``what``
        (a branch, a loop's test) whose choice needs a value of one: the user's line."""
        where = "<unknown>" if eqn.where is None else f"{eqn.where[0]}:{eqn.where[1]}"
        raise ConcretizationError(
            f"{where}: {what} depends on the value of an array of another library "
            "(a Dask array is computed only at .compute()); the derivative cannot stay "
            "lazy. Write it with array functions (a choice with np.where), or compute the "
            "input first and differentiate on its NumPy array")

    def made(self):
        """The ``like=`` argument of a call that makes a new array (``np.zeros``,
        ``np.full``...): of the inputs' library, "" for NumPy's."""
        return "" if self.like is None else f", like={self.like}"

    def dim(self, d):
        """A length: for a symbolic one (``dims``), a name given once at the
        function's entry (``x_shape0 = x.shape[0]``, ``size = 3 * x_shape0``)
        when it is a sum of multiples of input lengths, else its expression
        (``x.shape[0] // 2``, read where it is used: a division is not
        evaluated where the code would not reach it); ``n`` for an int input
        staged symbolically. Loops read their lengths' names, not the
        attribute lookups and arithmetic at every step."""
        if type(d) is Scalar and self.inputs is not None:
            return render(d, self._input_dim)
        if type(d) is not Dim or self.inputs is None:
            return repr(int(d))
        form = linear_form(d)
        if form is None:
            return render(d, self._input_dim)
        terms, const = form
        parts = []
        for (k, axis), coef in terms.items():
            name = self._input_dim(k, axis)
            parts.append((coef, name if coef in (1, -1) else f"{abs(coef)} * {name}"))
        if const or not parts:
            parts.append((const, str(abs(const))))
        if len(parts) == 1 and parts[0][0] >= 0 and not const:
            return parts[0][1]
        text = ("-" if parts[0][0] < 0 else "") + parts[0][1]
        for coef, part in parts[1:]:
            text += f" - {part}" if coef < 0 else f" + {part}"
        return self._named(text, "size")

    def _named(self, text, preferred):
        """The name of the length ``text``, assigned in the prologue once."""
        if text not in self.lengths:
            name = self.fresh(preferred)
            self.lengths[text] = name
            self.prologue.append(f"{name} = {text}")
        return self.lengths[text]

    def _input_dim(self, k, axis):
        """An input's length: an int input's name, or an array input's axis,
        named once (``x_shape0 = x.shape[0]``)."""
        if axis is None:
            return self.inputs[k]
        return self._named(f"{self.inputs[k]}.shape[{axis}]", f"{self.inputs[k]}_shape{axis}")

    # --- values --------------------------------------------------------------
    def dtype(self, dt):
        dt = np.dtype(dt)
        for spelling in (dt.name, dt.str):
            try:
                if np.dtype(spelling) == dt:
                    return f"{self.np}.dtype({spelling!r})"
            except TypeError:
                pass
        return self.const(dt)

    def dtype_argument(self, dt):
        """``dt`` as the dtype argument of a call that makes an array (``np.zeros(shape,
        dt)``): by keyword in another library's code (Dask's ``np.zeros(shape, dt, like=x)``
        drops a dtype given by position: a float64 array)."""
        return f"dtype={self.dtype(dt)}" if self.foreign else self.dtype(dt)

    def _float(self, x):
        if math.isnan(x):
            return f"{self.np}.nan"
        if math.isinf(x):
            return f"{self.np}.inf" if x > 0 else f"-{self.np}.inf"
        return repr(x)

    def scalar(self, x):
        """Python and NumPy scalars; NumPy ones keep their type (a float32
        literal stays float32: ``np.float32(2.0)``)."""
        if isinstance(x, np.generic):      # before float: np.float64 is a float
            if x.dtype.kind not in "biufc" or not x.dtype.isnative or x.dtype == np.longdouble \
                    or (x.dtype.kind == "c" and not np.isfinite(x)):
                return None
            item = x.item()
            text = self._float(item) if isinstance(item, float) else repr(item)
            return f"{self.np}.{type(x).__name__}({text})"
        if type(x) is Dim:        # an operand: a compound length in parentheses
            return self.dim(x) if x.expr[0] == "in" else f"({self.dim(x)})"
        if type(x) is Scalar:     # a number computed from lengths
            if self.inputs is None:
                return self._float(float(x))
            aval = getattr(x, "aval", None)
            if aval is not None and not aval.weak:
                return f"{self.np}.float64({self.dim(x)})"
            return f"({self.dim(x)})"
        if isinstance(x, (bool, int)):
            return repr(x)
        if isinstance(x, float):
            return self._float(x)
        if isinstance(x, complex) and math.isfinite(abs(x)):
            return repr(x)
        return None

    def shape(self, shape):
        """A shape tuple, its symbolic lengths as expressions."""
        items = [self.dim(d) for d in shape]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    def literal(self, val, aval=None):
        """A ``Lit``'s value as an expression; ``aval``: the Lit's, whose
        shape may be symbolic (a constant the code makes at every shape)."""
        if isinstance(val, TracerBase) or hasattr(val, "_trace"):
            raise CodegenError(
                f"a literal holds a traced value ({type(val).__name__}): the Program was staged "
                "inside another transformation and closes over its variables; generate code "
                "for the outer Program, or make the value an input (closure conversion)")
        symbolic = aval is not None and has_dims(aval.shape) and None not in aval.shape
        if isinstance(val, np.ndarray) and val.ndim == 0:
            val = val[()]
        text = self.scalar(val)
        if text is not None:
            return text
        if isinstance(val, np.ndarray) and val.dtype.kind in "biuf":
            # zeros (an instantiated symbolic zero) read best written out; so
            # must a constant of symbolic shape, which the code makes at every shape
            text = self._made(val, self.shape(aval.shape if symbolic else val.shape), symbolic)
            if text is not None:
                return text
        if self.foreign and isinstance(val, np.ndarray) and val.ndim:
            # another library's code: a NumPy constant as one of its arrays (CuPy refuses
            # NumPy operands), ``.copy()`` free: the code never writes into a constant
            return f"{self.np}.asarray({self.const(val)}{self.made()})"
        return self.const(val)

    def _made(self, val, shape, symbolic):
        """A constant array as the NumPy call that makes it at ``shape``
        (``literals.array_recipe``), or None."""
        recipe = array_recipe(val, symbolic)
        if recipe is None:
            return None
        dtype = "" if val.dtype == np.float64 else f", {self.dtype_argument(val.dtype)}"
        if recipe[0] == "zeros":
            return f"{self.np}.zeros({shape}{dtype}{self.made()})"
        if recipe[0] == "full":
            return f"{self.np}.full({shape}, {self.dim(recipe[1])}{self.made()})"
        if recipe[0] == "arange":
            return f"{self.np}.arange({self.dim(recipe[1])}{self.made()}).reshape({shape})"
        if recipe[0] == "eye":
            rows, cols, k = recipe[1:4]
            eye = f"{self.np}.eye({self.dim(rows)}, {self.dim(cols)}, {self.dim(k)}{dtype})"
            if self.like is not None:       # (Dask's eye takes no like=: NumPy's, converted)
                eye = f"{self.np}.asarray({eye}{self.made()})"
            scale = recipe[4] if len(recipe) > 4 else 1.0     # a multiple of the identity
            if scale != 1.0:
                return f"({eye}.reshape({shape}) * {self.scalar(scale)})"
            return f"{eye}.reshape({shape})"
        if recipe[0] == "broadcast":
            src = recipe[1]
            return f"{self.np}.broadcast_to({self.literal(src, aval_of(src))}, {shape})"
        first = recipe[1]
        fill = self.scalar(float(first) if val.dtype == np.float64 else first)
        return f"{self.np}.full({shape}, {fill}{self.made()})"   # a NumPy scalar fill keeps its dtype


    def small_array(self, a):
        """A small integer or boolean array written out, else a constant."""
        if a.dtype.kind in "biu" and a.size <= _INLINE_ARRAY_SIZE:
            text = f"{self.np}.array({a.tolist()!r})"
            plain = np.array(a.tolist())
            if plain.dtype != a.dtype or plain.shape != a.shape:
                text = f"{self.np}.array({a.tolist()!r}, {self.dtype(a.dtype)})"
            return text
        return self.const(a)

    def param(self, v):
        """A param value as a Python literal (a named constant if it has none)."""
        if v is None or type(v) in (bool, int, str):
            return repr(v)
        if type(v) is Dim:
            return self.dim(v)
        if v is Ellipsis:
            return "..."
        if v is DYN:
            return self.bind("DYN", DYN, "wengert.primitives.index.DYN")
        if isinstance(v, (float, complex, np.generic)):
            return self.scalar(v) or self.const(v)
        if isinstance(v, slice):
            return f"slice({self.param(v.start)}, {self.param(v.stop)}, {self.param(v.step)})"
        if isinstance(v, tuple):
            items = [self.param(e) for e in v]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if isinstance(v, list):
            return "[" + ", ".join(self.param(e) for e in v) + "]"
        if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
            return self.dtype(v)
        if isinstance(v, np.ndarray):
            return self.small_array(v)
        return self.const(v)

    def params(self, params):
        return [f"{k}={self.param(params[k])}" for k in sorted(params)]

    def subscript(self, idx, dyn):
        """``idx`` (a normalized index tuple) in subscript syntax, its ``DYN``
        positions filled by the operands ``dyn``; None if it has none."""
        if not isinstance(idx, tuple) or sum(p is DYN for p in idx) != len(dyn):
            return None
        parts, dyn = [], iter(dyn)
        for p in idx:
            if p is DYN:
                parts.append(next(dyn))
            elif isinstance(p, (bool, np.bool_)):
                return None
            elif isinstance(p, (int, np.integer)):
                parts.append(self.dim(p))
            elif p is None:
                parts.append("None")
            elif p is Ellipsis:
                parts.append("...")
            elif isinstance(p, slice):
                ends = [p.start, p.stop, p.step]
                if not all(e is None or isinstance(e, (int, np.integer)) for e in ends):
                    return None
                text = ":".join("" if e is None else self.dim(e) for e in ends[:2])
                parts.append(text if p.step is None else f"{text}:{self.dim(p.step)}")
            elif isinstance(p, np.ndarray) and p.dtype.kind in "biu":
                parts.append(self.small_array(p))
            else:
                return None
        return ", ".join(parts) if parts else "()"

    def add_at(self, target, where, value, rows):
        """``np.add.at(target, where, value)``: ``value`` added at the
        positions ``where``, a repeated one as often as it occurs; ``rows``:
        for ``where`` one 1-D index array, (the shape of one row per index,
        ``value``'s shape), else None. On another library's arrays
        (``foreign``), ``core.libraries.add_at``, which Dask runs lazily too: a
        new array, bound to ``target``."""
        if self.foreign:
            helper = self.bind("library_add_at", libraries.add_at, "core.libraries.add_at")
            return [f"{target} = {helper}({target}, {where}, {value})"]
        return [f"{self.np}.add.at({target}, {where}, {value})"]

    def task(self, fn, eqn, args):
        """``fn(*args)`` (texts: a NumPy function of wengert's own, the row ``eqn``'s impl, and
        its arguments) as one task of a Dask graph (``core.libraries.task``), for code on
        Dask's arrays (``lazy``); refused (``refuse_lazy``) where a result's length is known
        only from the values."""
        if any(d is None for o in eqn.outputs for d in o.aval.shape):
            self.refuse_lazy(eqn, f"the length of {eqn.prim.name}'s result")
        helper = self.bind("library_task", libraries.task, "core.libraries.task")
        avals = "".join(f"({self.shape(o.aval.shape)}, {self.dtype(o.aval.dtype)}), "
                        for o in eqn.outputs)
        return f"{helper}({fn}, ({avals}), {eqn.prim.multiple_results}, {', '.join(args)})"

    def gather(self, x, sub, eqn):
        """``x[sub]``, the subscript of the getitem ``eqn``; on another library's arrays
        (``foreign``) an index with index arrays is ``core.libraries.getitem``'s (Dask
        indexes with one at most; CuPy with its own arrays)."""
        idx, dyn = eqn.params["idx"], eqn.inputs[1:]
        if self.foreign and (any(isinstance(p, np.ndarray) and p.ndim for p in idx)
                             or any(d.aval.shape for d in dyn)):
            helper = self.bind("library_getitem", libraries.getitem, "core.libraries.getitem")
            return f"{helper}({x}, {self.np}.s_[{sub}])"
        return f"{x}[{sub}]"

    def reshape_call(self, x, shape, scalar, py=False):
        """``x.reshape(shape)``: the array method is C, ``np.reshape`` a Python
        wrapper (about 0.5 us more a call); ``np.reshape(x, shape)`` where
        ``x`` may be a Python scalar (``py``), which has no methods
        (``scalar``: ``x`` is 0-d)."""
        if py:
            return f"{self.np}.reshape({x}, {shape})"
        return f"{self.atom(x)}.reshape({shape})"

    @staticmethod
    def abs_call(x):
        """Python's ``abs``: ``np.absolute`` on arrays, and a Python float
        stays one."""
        return f"abs({x})"

    def numpy_call(self, fn, ins, eqn=None):
        """``np.sin(x)``: the NumPy function named ``fn`` (``linalg.solve``)
        of the operands ``ins`` (``eqn``: the equation, for a writer whose
        spelling depends on its avals: ``numba.codegen``)."""
        return f"{self.np}.{fn}({', '.join(ins)})"

    def einsum_call(self, spec, ins):
        """``np.einsum(spec, *ins)`` (an explicit spec), NumPy's contraction order chosen
        for three operands or more."""
        extra = [f"optimize={len(ins) > 2}"] if len(ins) > 2 else []
        return f"{self.np}.einsum({', '.join([repr(spec)] + list(ins) + extra)})"

    def ufunc_into(self, fn, ins, target):
        """``np.exp(t, out=t)``: the ufunc named ``fn`` of ``ins``, written into ``target``."""
        return f"{self.np}.{fn}({', '.join(ins)}, out={target})"

    def running_call(self, fn, x, axis, aval):
        """``np.cumprod(x, axis=1)``: the running function ``fn`` of ``x`` (of ``aval``)
        along ``axis`` (an int in range), as NumPy spells it."""
        return f"{self.np}.{fn}({x}, axis={self.param(axis)})"

    def axis_call(self, fn, x, axis, ndim, py=False):
        """``x.sum(axis=(0,))``: the NumPy reduction ``fn`` of ``x`` (of
        ``ndim`` dimensions) over ``axis`` (an int or a tuple), as the array
        method (C; ``np.sum`` is a Python wrapper, about 0.7 us more a call),
        or ``np.sum(x, axis=...)`` where ``x`` may be a Python scalar (``py``)."""
        if py:
            return f"{self.np}.{fn}({x}, axis={self.param(axis)})"
        return f"{self.atom(x)}.{fn}(axis={self.param(axis)})"

    @staticmethod
    def atom(text):
        """``text`` as the base of a subscript: in parentheses unless it is a
        (dotted) name or a number."""
        return text if re.fullmatch(r"[\w.]+", text) else f"({text})"

    # --- one primitive application -------------------------------------------
    def expression(self, eqn, ins, py):
        """The right-hand side of ``outs = prim (ins)``; ``py[k]``: operand
        ``k`` may be a Python scalar when the code runs."""
        prim, params = eqn.prim, eqn.params
        if prim.inline:
            raise CodegenError(
                f"equation {prim.name} is an inline primitive (a custom rule), which staging "
                "runs through and never records; a Program holding one was built by hand")
        rule = prim.emit
        if self.lazy and libraries.own_numpy(prim):     # would compute Dask's: one task
            return self.task(self.impl(prim), eqn, ins + self.params(params))
        if self.foreign and not self.lazy and libraries.numpy_only(prim):
            where = "<unknown>" if eqn.where is None else f"{eqn.where[0]}:{eqn.where[1]}"
            libraries.refuse_numpy_only(prim, None, where)
        text = rule.expression(self, eqn, ins, py) if rule is not None else None
        if text is not None:
            return text
        if not params and Ident(prim.impl) in NUMPY_NAMES:
            return self.numpy_call(NUMPY_NAMES[Ident(prim.impl)], ins, eqn)
        return f"{self.impl(prim)}({', '.join(ins + self.params(params))})"
