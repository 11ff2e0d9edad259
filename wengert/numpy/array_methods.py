"""NumPy's face for traced values: operators, ``__array_ufunc__``,
``__array_function__``, array methods and attributes.

``np.sin`` on a tracer becomes ``sin``, ``x.sum(axis=0)`` becomes
``reduce_sum``: plain ``import numpy as np`` code runs unchanged on tracers.
The maps from NumPy's callables to primitive wrappers are
``numpy.functions`` and ``numpy.ufuncs``; a NumPy function with no entry
raises ``NoDerivativeRule`` naming it. Array methods take NumPy's parameter
names (``x.swapaxes(axis1, axis2)``).

Layer: numpy.
"""
from __future__ import annotations

import dis
import linecache
import re
import sys
import types

import numpy as np

from ..primitives import arith, index, linalg, ordering, scatter, shape, transcendental
from . import answers, arrayargs
from ..core import inplace
from . import functions as npf
from . import complex as npc
from ..core.tracer import TracerBase, provide_face
from .callsite import raise_for_called_function, resolve
from .math_twins import numpy_name
from .arrayargs import NO_VALUE
from .select import DESCENDING
from .lists import as_array
from .array_queries import QueryMethods
from . import writes
from . import library
from .ufuncs import ufunc_call
from ..core.errors import (PACKAGE_DIR, library_file, 
    ConcretizationError, InPlaceUpdateError, NoDerivativeRule, UnsupportedFunctionError,
    no_rule_message, user_location)


def _holds_tracer(x):
    """Whether ``x`` (a call's arguments: tuples, lists and dicts of them) holds a traced
    value."""
    if isinstance(x, TracerBase):
        return True
    if isinstance(x, (tuple, list)):        # (a named tuple too: NumPy reads it as one)
        return any(_holds_tracer(e) for e in x)
    return isinstance(x, dict) and any(_holds_tracer(e) for e in x.values())


# ``a[i] = v``; ``a[i:j] = v`` is STORE_SLICE from Python 3.12 on
# (the depths below count the frames up from a method of ``ArrayMethods``, which the tracer's
# forwarder (``core.tracer``) calls: the caller of the conversion is one frame above that)
_STORES = frozenset(dis.opmap[op] for op in ("STORE_SUBSCR", "STORE_SLICE") if op in dis.opmap)


def _caller_math_function(depth):
    """``math.sin(x)`` calls ``x.__float__`` from C, with no frame of its own:
    the function is found among the callables named on the caller's source
    line (``math.sin(``, or ``sin(`` after ``from math import sin``) that are
    ``math`` builtins, so the error can say what to use instead. Returns
    (the builtin or None, the caller's file:line)."""
    frame = sys._getframe(depth)
    if frame.f_code.co_filename.startswith(PACKAGE_DIR):
        return None, user_location()        # wengert's own call: name the user's line
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}"
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    for name in re.findall(r"([A-Za-z_][\w.]*)\s*\(", line):
        fn = resolve(name, frame)
        if isinstance(fn, types.BuiltinFunctionType) and getattr(fn, "__module__", "") == "math":
            return fn, where
    return None, where


def _stores_item(depth):
    """Whether the frame ``depth`` levels up is executing ``a[i] = v``:
    NumPy converts ``v`` (``float()``, ``np.asarray``) as it stores it into
    a plain array, which is how a traced value reaches a conversion there."""
    frame = sys._getframe(depth)
    code, at = frame.f_code.co_code, frame.f_lasti
    return 0 <= at < len(code) and code[at] in _STORES


def _stored_error(where):
    return InPlaceUpdateError(
        f"{where}: a traced value is written into an array in place (a[i] = v); the array "
        "would keep its value and drop its derivative. Use engine='source' (or 'auto'), which "
        "turns subscripted assignment into a functional update, or write "
        "a = wg.at(a)[i].set(v)")


def _concrete(self, what):
    val = self.concrete_value
    if hasattr(val, "__dask_graph__"):      # a Dask array: known at .compute() only
        raise ConcretizationError(
            f"{user_location()}: {what} needs the value of a Dask array, which is computed "
            "only at .compute(): the derivative cannot stay lazy. Write the choice with "
            "np.where, or compute the input first and differentiate on its NumPy array")
    if val is None:
        batched = self.batched_error(what)
        if batched is not None:
            raise batched
        raise ConcretizationError(
            f"{user_location()}: {what} needs a concrete value, but this traced value is "
            "symbolic here: code is being generated for it (a trace-engine derivative "
            "called inside a source-engine function, or a linear function being "
            "transposed). Use engine='source' for the inner function too (it keeps the "
            "control flow), or avoid Python control flow on the value")
    return val



def _float_error(self, kind):
    fn, where = _caller_math_function(depth=4)
    if _stores_item(depth=4):
        raise _stored_error(where)
    raise_for_called_function(lists=False)
    if fn is not None:
        twin = numpy_name(fn)
        instead = (f"Use {twin} instead (engine='source' maps math functions "
                   "automatically)" if twin else "NumPy has no twin of it with a "
                   "derivative rule: write it with NumPy functions")
        raise UnsupportedFunctionError(
            f"{where}: math.{fn.__name__} was called on a traced value; math functions "
            f"work on Python floats only and would drop the derivative. {instead}")
    raise ConcretizationError(
        f"{where}: {kind}() of a traced value would drop its derivative; keep it an "
        "array (use np functions), or convert only values you do not differentiate")



_SEQUENCES = (list, tuple)


def _operand(o):
    """The other operand of an operator as NumPy takes it: a list or tuple is an array
    (``x - [3.0, 5.0]``, ``x ** [1.0, 2.0]``), of traced values too (``lists.as_array``)."""
    return as_array(o) if type(o) in _SEQUENCES else o


def _sort_in_place():
    raise InPlaceUpdateError(f"{user_location()}: x.sort() sorts a traced array in place, "
                             "which would keep the old value's derivative; write "
                             "x = np.sort(x)")


class ArrayMethods(QueryMethods):
    """NumPy arrays' operators, protocols, methods and attributes on a traced value: each
    takes the tracer as ``self`` (``core.tracer.Tracer`` forwards to them)."""

    # --- abstract attributes (shape, ndim, size, dtype come from HasAval)
    @property
    def T(self):
        return shape.transpose(self)

    # complex parts, as np.real / np.imag / np.conj give them (numpy.complex)
    @property
    def real(self):
        return npc.FUNCTIONS[np.real](self)

    @property
    def imag(self):
        return npc.FUNCTIONS[np.imag](self)

    def conj(self):
        return npc.UFUNCS[np.conjugate](self)

    conjugate = conj

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of a 0-d traced array")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (index.getitem(self, i) for i in range(self.aval.shape[0]))

    # --- operators
    def __add__(self, o): return arith.add(self, _operand(o))
    def __radd__(self, o): return arith.add(_operand(o), self)
    def __sub__(self, o): return arith.sub(self, _operand(o))
    def __rsub__(self, o): return arith.sub(_operand(o), self)
    def __mul__(self, o): return arith.mul(self, _operand(o))
    def __rmul__(self, o): return arith.mul(_operand(o), self)
    def __truediv__(self, o): return arith.div(self, _operand(o))
    def __rtruediv__(self, o): return arith.div(_operand(o), self)
    def __pow__(self, o): return transcendental.pow(self, _operand(o))
    def __rpow__(self, o): return transcendental.pow(_operand(o), self)
    def __matmul__(self, o): return linalg.matmul(self, _operand(o))
    def __rmatmul__(self, o): return linalg.matmul(_operand(o), self)
    def __mod__(self, o): return ordering.remainder(self, _operand(o))
    def __rmod__(self, o): return ordering.remainder(_operand(o), self)
    def __floordiv__(self, o): return ordering.floor_divide(self, _operand(o))
    def __rfloordiv__(self, o): return ordering.floor_divide(_operand(o), self)
    def __neg__(self): return arith.neg(self)
    def __pos__(self): return inplace.scalar_result(inplace.fresh(self))  # as np.positive
    def __abs__(self): return ordering.abs(self)
    def __lt__(self, o): return ordering.less(self, _operand(o))
    def __le__(self, o): return ordering.less_equal(self, _operand(o))
    def __gt__(self, o): return ordering.greater(self, _operand(o))
    def __ge__(self, o): return ordering.greater_equal(self, _operand(o))
    def __eq__(self, o): return ordering.equal(self, _operand(o))
    def __ne__(self, o): return ordering.not_equal(self, _operand(o))
    def __and__(self, o): return ordering.logical_and(self, _operand(o))
    def __or__(self, o): return ordering.logical_or(self, _operand(o))
    def __invert__(self): return ordering.logical_not(self)

    # ``y += v`` writes into y, as NumPy does (``inplace``)
    __iadd__ = inplace.augmented("+", "add", arith.add)
    __isub__ = inplace.augmented("-", "sub", arith.sub)
    __imul__ = inplace.augmented("*", "mul", arith.mul)
    __itruediv__ = inplace.augmented("/", "truediv", arith.div)
    __ipow__ = inplace.augmented("**", "pow", transcendental.pow)
    __imatmul__ = inplace.augmented("@", "matmul", linalg.matmul)
    __imod__ = inplace.augmented("%", "mod", ordering.remainder)
    __ifloordiv__ = inplace.augmented("//", "floordiv", ordering.floor_divide)

    def __getitem__(self, idx):
        return index.getitem(self, idx)

    def __setitem__(self, idx, v):
        # NumPy writes into x: the tracer becomes the updated value, which every name of it
        # sees (``inplace.assign``; a write a view would have to see is refused)
        inplace.assign(self, idx, _operand(v), scatter.index_set)

    # --- conversion to Python values: control flow is taken at the concrete
    # value; a float/array conversion would drop the derivative, so it raises
    def __bool__(self):
        return bool(_concrete(self, "bool() / if / while on a traced value"))

    def __index__(self):
        if self.aval.dtype.kind not in "iub":
            raise TypeError(f"a traced {self.aval.short()} value cannot be used as an index")
        return int(_concrete(self, "using a traced integer as an index"))

    def __int__(self):
        # an integer part is piecewise constant: its derivative is zero wherever it has one,
        # so int() of a float is a constant of the derivative, as np.trunc is
        if self.aval.dtype.kind in "iubf":
            return int(_concrete(self, "int() of a traced value"))
        return _float_error(self, "int")

    def __float__(self):
        if self.aval.dtype.kind in "iub":       # a count or a truth value carries no derivative
            return float(_concrete(self, "float() of a traced value"))
        return _float_error(self, "float")

    def __complex__(self):
        return _float_error(self, "complex")

    def __array__(self, dtype=None, copy=None):
        from_scipy = library_file(sys._getframe(2).f_code.co_filename, "scipy")
        _, where = _caller_math_function(depth=3)
        if not from_scipy and _stores_item(depth=3):
            raise _stored_error(where)
        raise_for_called_function()         # the call on the user's line, named
        if from_scipy:
            # a SciPy function converting its argument: name the user's line
            raise ConcretizationError(
                f"{user_location()}: a SciPy function converted a traced value to a NumPy "
                "array, which would drop its derivative. scipy.stats and scipy.special's "
                "Python functions (logsumexp, softmax...) are differentiated by the source "
                "engine (engine='source' or 'auto'), which calls their rules instead; other "
                "SciPy functions have no rule: write them with NumPy functions")
        raise ConcretizationError(
            f"{where}: a traced value was converted to a NumPy array (np.asarray, np.array, "
            "or a NumPy function without a rule); this would drop its derivative. Pass the "
            "value on as it is: NumPy functions called on it are traced")

    # --- NumPy protocols
    __array_namespace__ = QueryMethods.__array_namespace__

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        rule, name = library.ufunc_rule(ufunc), library.display_name(ufunc)
        if method != "__call__":        # outer, reduce, accumulate, at
            library.check_complex(ufunc, inputs)
            return writes.ufunc_method(ufunc, method, lambda *ops, **kw: ufunc_call(
                ufunc, rule, ops, kw, name), inputs, kwargs)
        inputs = tuple(_operand(x) for x in inputs)
        library.check_complex(ufunc, inputs)
        target = kwargs.pop("out", None)
        if target is not None and not (isinstance(target, tuple) and target[0] is None):
            # ``out=y``: y becomes the result (``writes.write_out``)
            return writes.write_out(target, ufunc_call(ufunc, rule, inputs, kwargs, name), name)
        out = ufunc_call(ufunc, rule, inputs, kwargs, name)
        # a ufunc's result is a new array, a NumPy scalar where it is 0-d
        out = inplace.distinct(out, inputs, True)
        return out if kwargs.get("out") is not None else inplace.scalar_result(out)

    def __array_function__(self, func, types, args, kwargs):
        if not _holds_tracer((args, kwargs)):
            # only ``like=`` named a traced value (``np.eye(n, like=x)``): NumPy's array, a
            # constant, which becomes one of the input's library where it meets its arrays
            # (``atoms.same_library``; the generated code's ``np.asarray(c, like=x)``)
            return func(*args, **kwargs)
        fn = library.function_rule(func)
        if fn is None:
            raise NoDerivativeRule(no_rule_message(user_location(), library.display_name(func)))
        library.check_complex(func, args, kwargs)
        out = fn(*args, **kwargs)
        if func in answers.PYTHON_RESULTS:
            return out
        if func not in answers.SHARING:
            out = inplace.distinct(out, args, False)
        out = arrayargs.numpy_result(out)
        if answers.scalar_answer(func, args, kwargs):
            return inplace.scalar_result(out)
        return inplace.array_result(out, answers.array_answer(func, args))

    # --- array methods: ndarray's parameters (and, for the reductions that
    # take ``**kwargs``, those of the NumPy function they forward to)
    def sum(self, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE,
            where=NO_VALUE):
        return npf.np_sum(self, axis, dtype, out, keepdims, initial, where)

    def mean(self, axis=None, dtype=None, out=None, keepdims=NO_VALUE, *, where=NO_VALUE):
        return npf.np_mean(self, axis, dtype, out, keepdims, where=where)

    def prod(self, axis=None, dtype=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE,
             where=NO_VALUE):
        return npf.np_prod(self, axis, dtype, out, keepdims, initial, where)

    def max(self, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE):
        return npf.np_max(self, axis, out, keepdims, initial, where)

    def min(self, axis=None, out=None, keepdims=NO_VALUE, initial=NO_VALUE, where=NO_VALUE):
        return npf.np_min(self, axis, out, keepdims, initial, where)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *,
            where=NO_VALUE, mean=NO_VALUE, correction=NO_VALUE):
        library.check_complex(np.var, (self,))     # NumPy's is mean(|x - mean|^2)
        return npf.np_var(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                        correction=correction)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=NO_VALUE, *,
            where=NO_VALUE, mean=NO_VALUE, correction=NO_VALUE):
        library.check_complex(np.std, (self,))
        return npf.np_std(self, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                        correction=correction)

    def cumsum(self, axis=None, dtype=None, out=None):
        return npf.np_cumsum(self, axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None):
        return np.cumprod(self, axis, dtype, out)

    def repeat(self, repeats, axis=None):
        return np.repeat(self, repeats, axis)

    def take(self, indices, axis=None, out=None, mode="raise"):
        return np.take(self, indices, axis, out, mode)

    if DESCENDING:              # ndarray's parameters in NumPy >= 2.5
        def sort(self, axis=-1, kind=None, order=None, *, stable=None, descending=None):
            _sort_in_place()
    else:
        def sort(self, axis=-1, kind=None, order=None, *, stable=None):
            _sort_in_place()

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        raise InPlaceUpdateError(f"{user_location()}: x.partition() rearranges a traced array "
                                 "in place; write x = np.partition(x, kth)")

    def dot(self, other, out=None):
        return npf.np_dot(self, other, out)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return npf.np_trace(self, offset, axis1, axis2, dtype, out)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return linalg.diagonal(self, offset, axis1, axis2)

    def reshape(self, *shape, order="C", copy=None):
        return npf.reshape_in_order(self, shape[0] if len(shape) == 1 else shape, order,
                                    "reshape")

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or np.ndim(axes[0])):
            axes = axes[0]              # x.transpose((1, 0)) as x.transpose(1, 0)
        return shape.transpose(self, None if axes is None or len(axes) == 0 else axes)

    def swapaxes(self, axis1, axis2):
        return shape.swapaxes(self, axis1, axis2)

    def ravel(self, order="C"):
        return npf.reshape_in_order(self, (-1,), order, "ravel")

    def flatten(self, order="C"):
        # a copy in NumPy, never a view (``inplace.fresh``)
        return inplace.fresh(npf.reshape_in_order(self, (-1,), order, "flatten"))

    def squeeze(self, axis=None):
        return shape.squeeze(self, axis)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if np.dtype(dtype) != self.aval.dtype:
            return arrayargs.as_dtype(self, dtype, casting, "astype")
        return inplace.fresh(self) if copy else self

    def clip(self, min=None, max=None, out=None, **kwargs):
        return npf.np_clip(self, min, max, out, **kwargs)

    def round(self, decimals=0, out=None):
        return npf.np_round(self, decimals, out)

    def copy(self, order="C"):
        return inplace.fresh(self)

    def tolist(self):
        return _float_error(self, "tolist")


# methods NumPy answers with a new array: never the tracer itself, even where
# a rule hands the operand back (``y.sum(axis=())``: ``inplace.returns_new``)
# (not ``conj``: a real array's ``.conj()`` is the array itself in NumPy)
for _name in ("sum", "mean", "prod", "max", "min", "var", "std", "cumsum", "cumprod",
              "repeat", "take", "partition", "dot", "trace", "clip", "round"):
    setattr(ArrayMethods, _name, inplace.returns_new(getattr(ArrayMethods, _name)))
del _name

provide_face(ArrayMethods)
