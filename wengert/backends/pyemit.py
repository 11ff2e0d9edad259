"""Python text for one equation's pieces: names, literals, params, and the
expression of each primitive (helpers of ``pycodegen``).

An ``Emitter`` owns the namespace the generated code runs in: ``np``, the
impls of primitives called by name, and named constants. Every name it binds
is listed in the generated file's header, so a reader knows where each comes
from; helper names yield to variable names (a variable called ``np`` makes
the module ``numpy``), never the reverse, so the code keeps the listing's
names.

Expressions, in order of preference:

* a Python operator (``+ - * / ** < == ...``) for arithmetic and comparisons,
  when an operand is a NumPy value; on two Python scalars (a caller's
  ``2.0``, a loop counter) the ufunc itself, ``np.multiply(x, 2.0)``, since
  Python's arithmetic differs from the interpreter's there;
* a NumPy call when the primitive's impl *is* that NumPy function
  (``np.sin(x)``, ``np.linalg.solve(a, b)``), or when its params map onto a
  NumPy function's arguments one for one (``np.sum(x, axis=(0,))``,
  ``x[1:3, ::-1]``);
* otherwise the primitive's impl, bound under the primitive's name:
  ``broadcast_to(x, shape=(3,))``. This always works, so every registered
  primitive can be emitted.
"""
from __future__ import annotations

import builtins
import keyword
import math
import re
import sys

import numpy as np

from ..context import recipe_of as dims_recipe
from ..dims import Dim, Scalar, has_dims, render
from ..errors import WengertError
from ..ir import Ident, aval_of
from ..primitives.core import TracerBase
from ..primitives.host import check_value
from ..primitives.index import DYN

__all__ = ["CodegenError", "Emitter", "BINARY_OPS", "PY_SCALARS"]


class CodegenError(WengertError, ValueError):
    """A Program that cannot be turned into Python source."""


# primitives whose impl is Python's operator (``python_operator``), written
# as the operator: on NumPy operands it *is* the ufunc (NumPy's __mul__ calls
# np.multiply), on two Python scalars it is what the impl does too.
BINARY_OPS = {"add": "+", "add_any": "+", "sub": "-", "mul": "*", "div": "/",
              "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=",
              "equal": "==", "not_equal": "!="}
PY_SCALARS = (bool, int, float, complex, Dim)

# names the generated code reads from builtins: a variable may not shadow them
_BUILTINS_USED = {"range", "int", "slice", "abs", "float", "bool", "complex"}


def _numpy_names():
    """NumPy function -> its shortest public name (``np.abs``, not
    ``np.absolute``): how an impl that *is* a NumPy function is spelled."""
    found = {}
    cands = [(n, getattr(np, n)) for n in dir(np) if isinstance(getattr(np, n, None), np.ufunc)]
    cands += [("where", np.where)]
    cands += [(f"linalg.{n}", getattr(np.linalg, n)) for n in np.linalg.__all__
              if callable(getattr(np.linalg, n)) and not isinstance(getattr(np.linalg, n), type)]
    for name, fn in sorted(cands, key=lambda c: (len(c[0]), c[0])):
        found.setdefault(Ident(fn), name)
    return found


_NUMPY_NAMES = _numpy_names()

_INLINE_ARRAY_SIZE = 16     # integer/boolean index arrays up to this size are written out


def _sanitize(name):
    ident = re.sub(r"\W", "_", name) or "_"
    if ident[0].isdigit():
        ident = "_" + ident
    if keyword.iskeyword(ident) or ident in _BUILTINS_USED:
        ident += "_"
    return ident


class Emitter:
    """Identifiers, literals and params as Python text, and the namespace
    (with its header comment) that the text needs."""

    def __init__(self, var_names):
        self.idents = {}                       # listing name -> identifier
        self.taken = set(var_names) | _BUILTINS_USED
        self.namespace = {}                    # holds every bound value, so ids stay valid
        self.header = []
        self._bound = {}                       # Ident(value) -> name, for reuse
        self._consts = 0
        self.inputs = None                     # the function's parameters, for lengths

    def dim(self, d):
        """A length: ``x.shape[0]`` when it is a symbolic one (``dims``)."""
        if type(d) is Scalar and self.inputs is not None:
            return render(d, lambda k, axis: f"{self.inputs[k]}.shape[{axis}]")
        if type(d) is not Dim or self.inputs is None:
            return repr(int(d))
        return render(d, lambda k, axis: f"{self.inputs[k]}.shape[{axis}]")

    @property
    def np(self):
        """The name of the numpy module, bound when first used."""
        return self.bind(("np", "numpy", "np_"), np, "numpy")

    # --- names ---------------------------------------------------------------
    def ident(self, name):
        """The identifier of a listing name: the name itself when it is a
        valid one (almost always), else a sanitized, still unique form."""
        ident = self.idents.get(name)
        if ident is None:
            ident = _sanitize(name)
            if ident != name:
                base, k = ident, 0
                while ident in self.taken:
                    k += 1
                    ident = f"{base}_{k}"
            self.taken.add(ident)
            self.idents[name] = ident
        return ident

    def fresh(self, *preferred):
        """The first of ``preferred`` (then ``preferred[0]_1``...) that no
        variable, earlier binding, keyword or builtin uses."""
        cands = [_sanitize(p) for p in preferred]
        k = 0
        while True:
            for name in cands:
                if not (name in self.taken or keyword.iskeyword(name) or hasattr(builtins, name)):
                    self.taken.add(name)
                    return name
            k += 1
            cands = [f"{_sanitize(preferred[0])}_{k}"]

    def bind(self, preferred, value, note):
        """Bind ``value`` in the namespace (once) and return its name; the
        name is the first free one of ``preferred`` (a tuple, or one name)."""
        name = self._bound.get(Ident(value))
        if name is None:
            name = self.fresh(*((preferred,) if isinstance(preferred, str) else preferred))
            self.namespace[name] = value
            self._bound[Ident(value)] = name
            self.header.append(f"#   {name} = {note}")
        return name

    # --- the outside world (primitives/host.py) ----------------------------------
    def outside(self, ref):
        """The text reading ``ref`` (a ``host.EnvRef``) when the code runs:
        ``items.W`` for a global of module ``items``, ``cell_W.cell_contents``
        for a closure variable, ``rng.normal`` for an argument's method."""
        if ref.kind == "globals" and ref.label:
            module = sys.modules[ref.label]
            root = self.bind((ref.label.split(".")[-1], f"module_{ref.label.split('.')[-1]}"),
                             module, f"module {ref.label}")
        elif ref.kind == "globals":
            root = self.bind("globals_", ref.root, "the function's globals")
            return ref.text(root)
        elif ref.kind == "cell":
            root = self.bind(f"cell_{ref.label}", ref.root, f"closure cell of {ref.label}")
        else:
            root = self.bind(ref.label, ref.root, f"argument {ref.label} "
                             f"({type(ref.root).__name__}, the same object at every call)")
        return ref.text(root)

    def host_call(self, eqn, ins):
        """``fn(args...)`` of a ``host_call``, made when the code runs; a
        result whose shape and dtype the code assumes is checked
        (``checked(value, aval)``)."""
        p = eqn.params
        fn = p["fn"]
        if hasattr(fn, "resolve"):
            callee = self.outside(fn)
        elif fn is builtins.print:
            callee = "print"
        elif getattr(np.random, getattr(fn, "__name__", ""), None) is fn:
            callee = f"{self.np}.random.{fn.__name__}"
        else:
            callee = self.bind(getattr(fn, "__name__", "host_fn"), fn,
                               f"{getattr(fn, '__qualname__', repr(fn))}, called at each call")

        def arg(spec):
            return ins[spec[1]] if spec[0] == "op" else self.param(spec[1])
        args = [arg(a) for a in p["args"]] + [f"{k}={arg(a)}" for k, a in p["kwargs"]]
        text = f"{callee}({', '.join(args)})"
        if p["checked"] and p["outs"]:
            checked = self.bind("checked", check_value, "wengert.primitives.host.check_value")
            text = f"{checked}({text}, {self.const(p['outs'][0])})"
        return text

    def impl(self, prim):
        return self.bind((prim.name, f"{prim.name}_impl"), prim.impl,
                         f"PRIMITIVES[{prim.name!r}].impl")

    def const(self, value):
        name = self._bound.get(Ident(value))
        if name is not None:
            return name
        while f"c{self._consts}" in self.taken:
            self._consts += 1
        note = (f"constant {aval_of(value).short()}" if isinstance(value, np.ndarray)
                else f"constant {getattr(value, '__qualname__', type(value).__name__)}")
        name = self.bind(f"c{self._consts}", value, note)
        self._consts += 1
        return name

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
        return self.const(val)

    def _made(self, val, shape, symbolic):
        """A constant array as the NumPy call that makes it at ``shape``:
        zeros; or, of a symbolic shape (``dims``), one value repeated or its
        recipe (a number computed from lengths, an identity); else None."""
        dtype = "" if val.dtype == np.float64 else f", {self.dtype(val.dtype)}"
        if not val.any() and not (val.dtype.kind == "f" and np.signbit(val).any()):
            return f"{self.np}.zeros({shape}{dtype})"
        if not symbolic:
            return None
        recipe = dims_recipe(val)
        if recipe is not None and recipe[0] == "full" and val.dtype == np.float64:
            return f"{self.np}.full({shape}, {self.dim(recipe[1])})"
        if recipe is not None and recipe[0] == "eye":
            _, rows, cols, k = recipe
            return (f"{self.np}.eye({self.dim(rows)}, {self.dim(cols)}, {self.dim(k)}{dtype})"
                    f".reshape({shape})")
        first = val.flat[0]
        fill = self.scalar(float(first) if val.dtype == np.float64 else first)
        if fill is None or np.isnan(first) or not (val == first).all():
            return None
        return f"{self.np}.full({shape}, {fill})"     # a NumPy scalar fill keeps its dtype

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
        text = rule.expression(self, eqn, ins, py) if rule is not None else None
        if text is not None:
            return text
        op = BINARY_OPS.get(prim.name) if len(ins) == 2 else "-" if prim.name == "neg" else None
        if op is not None and not params:
            if len(ins) == 1:
                return f"-({ins[0]})" if ins[0].startswith("-") else f"-{ins[0]}"
            return f"{ins[0]} {op} {ins[1]}"
        if not params and Ident(prim.impl) in _NUMPY_NAMES:
            return f"{self.np}.{_NUMPY_NAMES[Ident(prim.impl)]}({', '.join(ins)})"
        special = _DIRECT.get(prim.name)
        text = special(self, eqn, ins, params, py) if special else None
        if text is None:
            text = f"{self.impl(prim)}({', '.join(ins + self.params(params))})"
        return text


# --- primitives whose params map onto a NumPy call one for one --------------
def _np_call(fn, axis_key):
    def emit(em, eqn, ins, params, py):
        if set(params) != {axis_key}:
            return None
        return f"{em.np}.{fn}({ins[0]}, axis={em.param(params[axis_key])})"
    return emit


def _reshape(em, eqn, ins, params, py):
    if set(params) == {"shape"}:
        return f"{em.np}.reshape({ins[0]}, {em.param(params['shape'])})"


def _transpose(em, eqn, ins, params, py):
    if set(params) == {"perm"}:
        return f"{em.np}.transpose({ins[0]}, {em.param(params['perm'])})"


def _concatenate(em, eqn, ins, params, py):
    if set(params) == {"axis"}:
        ops = ", ".join(ins) + ("," if len(ins) == 1 else "")
        return f"{em.np}.concatenate(({ops}), axis={em.param(params['axis'])})"


def _cumsum(em, eqn, ins, params, py):
    if set(params) == {"axis", "reverse"} and params["reverse"] is False:
        return f"{em.np}.cumsum({ins[0]}, axis={em.param(params['axis'])})"


def _round(em, eqn, ins, params, py):
    if set(params) <= {"decimals"}:
        return f"{em.np}.round({', '.join(ins + [em.param(params.get('decimals', 0))])})"


def _convert(em, eqn, ins, params, py):
    if set(params) == {"dtype"}:
        dt = np.dtype(params["dtype"])
        if eqn.outputs[0].aval.shape == () and dt.kind in "fiub" and dt.isnative:
            return f"{em.np}.{dt.name}({ins[0]})"     # a NumPy scalar, as NumPy gives
        return f"{em.np}.asarray({ins[0]}).astype({em.dtype(dt)})"
    if params == {"dtype": np.dtype(np.float64), "weak": True}:
        return f"float({ins[0]})"           # a Python float, as math functions return


def _einsum(em, eqn, ins, params, py):
    if set(params) == {"spec"} and isinstance(params["spec"], str):
        extra = [f"optimize={len(ins) > 2}"] if len(ins) > 2 else []
        return f"{em.np}.einsum({', '.join([repr(params['spec'])] + ins + extra)})"


def _getitem(em, eqn, ins, params, py):
    # a Python scalar cannot be subscripted, and the impl takes int() of a
    # dynamic position: other cases go through the impl
    if set(params) == {"idx"} and not py[0] \
            and all(x.aval.dtype.kind in "iu" for x in eqn.inputs[1:]):
        sub = em.subscript(params["idx"], ins[1:])
        if sub is not None:
            base = ins[0] if re.fullmatch(r"[\w.]+", ins[0]) else f"({ins[0]})"
            return f"{base}[{sub}]"


def _like(fn):
    def emit(em, eqn, ins, params, py):
        if not params:
            return f"{em.np}.{fn}({ins[0]})"
    return emit


def _env_read(em, eqn, ins, params, py):
    return em.outside(params["ref"])


def _python_kept(fn):
    """``pow``, ``remainder``, ``floor_divide``: their impl checks at each
    call whether both operands are Python numbers, to give one back; the
    avals already say so, so the code does the call it needs and no check."""
    def emit(em, eqn, ins, params, py):
        if params:
            return None
        call = f"{em.np}.{fn}({', '.join(ins)})"
        return f"{call}.item()" if eqn.outputs[0].aval.weak else call
    return emit


_DIRECT = {
    "pow": _python_kept("power"), "remainder": _python_kept("remainder"),
    "floor_divide": _python_kept("floor_divide"),
    "env_read": _env_read,
    "reduce_sum": _np_call("sum", "axes"), "reduce_max": _np_call("max", "axes"),
    "reduce_min": _np_call("min", "axes"), "reduce_prod": _np_call("prod", "axes"),
    "argmax": _np_call("argmax", "axis"), "argmin": _np_call("argmin", "axis"),
    "reshape": _reshape, "transpose": _transpose, "concatenate": _concatenate,
    "cumsum": _cumsum, "round": _round, "convert": _convert, "einsum": _einsum,
    "getitem": _getitem, "zeros_like": _like("zeros_like"), "ones_like": _like("ones_like"),
    "slogdet": _like("linalg.slogdet"),
}
