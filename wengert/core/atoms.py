"""The atoms of a Program: abstract values (``Aval``), variables (``Var``,
with the user's name and their role to differentiation), literals (``Lit``),
and the values that stand for them while a trace records (``TracerBase``).

Data only, below everything else (``ir`` builds equations and Programs from
these, ``printing`` writes them).

Layer: core.
"""
from __future__ import annotations

import enum
import math

import numpy as np

from .context import current as _current_context
from .errors import ConcretizationError, ShapeMismatchError, user_location

__all__ = ["Aval", "aval_of", "is_duck_array", "as_library", "same_library", "Role", "label", "derive", "cotangent_label", "Var", "Lit", "HasAval",
           "TracerBase"]


class Aval:
    """Abstract value: shape and dtype. ``weak`` marks Python scalars, whose
    dtype yields to an array operand's (NumPy's NEP 50 promotion). A ``None``
    in the shape is a length known only at run time (a while loop's stack of
    per-iteration values)."""

    __slots__ = ("shape", "dtype", "weak")

    def __init__(self, shape, dtype, weak=False):
        self.shape = shape if type(shape) is tuple else tuple(
            None if d is None else int(d) for d in shape)
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.weak = weak

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def __eq__(self, other):
        return (isinstance(other, Aval) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    @property
    def python_type(self):
        """``float``/``int``/``bool``/``complex`` for a Python scalar's aval
        (weak, shape ``()``), else None: a value stored per loop iteration
        in an array reads back as a NumPy scalar, which promotes differently,
        so it is read back as this type."""
        if self.weak and self.shape == ():
            return _PYTHON_TYPE[self.dtype.kind]
        return None

    def short(self):
        """``f64[3,4]`` style, as printed in Program signatures."""
        kind = {"f": "f", "i": "i", "u": "u", "b": "bool", "c": "c"}.get(self.dtype.kind, self.dtype.kind)
        name = kind if kind == "bool" else f"{kind}{self.dtype.itemsize * 8}"
        return f"{name}[{','.join('?' if d is None else str(d) for d in self.shape)}]"

    def __repr__(self):
        return f"Aval({self.short()})"


_PYTHON_TYPE = {"f": float, "i": int, "u": int, "b": bool, "c": complex}
_WEAK_FLOAT = Aval((), np.float64, weak=True)


def aval_of(x):
    """The Aval of a concrete value, a tracer, or a Python scalar."""
    t = type(x)
    if t is np.ndarray or t is np.float64:
        ctx = _current_context()
        if ctx is not None and ctx.shaped:  # a constant of symbolic shape (``context``)
            shape = ctx.shape_of(x)
            if shape is not None:
                return Aval(shape, x.dtype)
        return Aval(x.shape, x.dtype)
    if t is float:
        return _WEAK_FLOAT
    av = getattr(x, "aval", None)
    if isinstance(av, Aval):
        return av
    if isinstance(x, (bool, np.bool_)) and not isinstance(x, np.ndarray):
        return Aval((), np.bool_, weak=isinstance(x, bool))
    if isinstance(x, int):
        return Aval((), np.int64, weak=True)
    if isinstance(x, float):
        return Aval((), np.float64, weak=True)
    if isinstance(x, complex) and not isinstance(x, np.generic):
        # (np.complex128 subclasses complex but is strongly typed)
        return Aval((), np.complex128, weak=True)
    if isinstance(x, (np.ndarray, np.generic)):
        return Aval(x.shape, x.dtype)
    if t is list or t is tuple:             # an operand NumPy takes as an array: [3.0, 5.0]
        return aval_of(np.asarray(x))
    if is_duck_array(x):                    # Dask, CuPy: NumPy's protocols, its own type
        return Aval(_known_shape(x), x.dtype)
    fail = getattr(x, "fail", None)       # an unassigned variable of converted code
    if callable(fail):                      # says which, and where
        fail()
    raise TypeError(f"not an array value: {type(x).__name__} (a class holding arrays is a "
                    "pytree node once registered: wg.tree.register_dataclass or "
                    "wg.tree.register_node)")


def is_duck_array(x):
    """Whether ``x`` is an array of another library that implements NumPy's
    protocols (``__array_function__``, or the Array API's
    ``__array_namespace__``) with a ``shape`` and a NumPy ``dtype``: a Dask or
    CuPy array. The code wengert runs on it calls NumPy's functions, which
    hand it to its own library, so it keeps its type (lazy for Dask)."""
    t = type(x)
    if t is np.ndarray or isinstance(x, (np.ndarray, np.generic, TracerBase)):
        return False
    if not (hasattr(t, "__array_function__") or hasattr(t, "__array_namespace__")):
        return False
    return isinstance(getattr(x, "dtype", None), np.dtype) and hasattr(x, "shape")


def as_library(x, like):
    """``x`` (a NumPy array or scalar) as an array of the library of ``like`` where
    that is another one (a derivative that reads no value of a Dask input, the
    gradient of a linear function, is still a Dask array, chunked as the input
    where it has its shape); anything else as it is."""
    if not is_duck_array(like) or not isinstance(x, (np.ndarray, np.generic)):
        return x
    out = np.asarray(x, like=like)
    chunks = getattr(like, "chunks", None)
    if chunks is not None and out.shape == tuple(like.shape) and hasattr(out, "rechunk"):
        out = out.rechunk(chunks)
    return out


def same_library(args):
    """``args`` of one operation, where one is an array of another library (a Dask or
    CuPy array), with its NumPy arrays made arrays of that library: a value the trace
    engine made itself (a seed, a cotangent of ones) meets the input's arrays as CuPy
    takes them (it refuses NumPy's) and as Dask chunks them. Else ``args`` itself."""
    like = None
    for a in args:
        t = type(a)
        if t is not np.ndarray and t is not float and t is not int and is_duck_array(a):
            like = a
            break
    if like is None:
        return args
    return [np.asarray(a, like=like) if type(a) is np.ndarray and a.ndim else a for a in args]


def _known_shape(x):
    if isinstance(getattr(x, "_meta", None), TracerBase):
        # a Dask array made from a traced value (``dask_x.dot(w)``: Dask's own method
        # took ``w`` as an array of its chunks): its derivative would be lost
        raise ConcretizationError(
            f"{user_location()}: a traced value was taken into an array of "
            f"{type(x).__module__.split('.')[0]} (a method of that library's array called "
            "with it, as dask_x.dot(w)); its derivative would be lost. Call NumPy's "
            "function instead (np.dot(x, w), x @ w), which differentiates on both arrays")
    shape = tuple(x.shape)
    if any(not isinstance(d, (int, np.integer)) for d in shape):   # Dask's nan lengths
        raise ShapeMismatchError(
            f"{user_location()}: an array of type {type(x).__name__} of unknown shape {shape} (a Dask array "
            "whose chunk sizes are unknown, after a boolean mask or an unknown-length read): "
            "call its compute_chunk_sizes() first, then differentiate")
    return tuple(int(d) for d in shape)


class Role(enum.Enum):
    """What a variable is to differentiation. With the user's name it gives
    the printed name (``label``); whether a primal value is an input or a
    body value is where it is defined, not a role. The value is the prefix
    of a nameless variable's print-time name."""

    VALUE = ""          # a primal value
    TANGENT = "t"
    COTANGENT = "ct"
    RESIDUAL = "r"      # a primal value a linear program reads


_LABEL_PREFIX = {Role.VALUE: "", Role.TANGENT: "d_", Role.COTANGENT: "ct_", Role.RESIDUAL: ""}


def label(name, role):
    """The name a variable prints as, before it is made unique: its user
    name with its role's prefix (the tangent of ``p`` is ``d_p``, its
    cotangent ``ct_p``, its residual ``p``), or "" when it has no user name
    (it is then named by a role prefix and a counter at print time)."""
    return _LABEL_PREFIX[role] + name if name else ""


def derive(name, role, new):
    """``(name, role)`` of the ``new``-role counterpart of a variable named
    ``name`` in role ``role``: the tangent of ``p`` is ``(p, TANGENT)``; the
    tangent of tangent ``d_p`` is ``(d_p, TANGENT)`` (``d_d_p``); the
    cotangent of ``p`` or of its tangent ``d_p`` is ``(p, COTANGENT)``, as
    transposition maps ``p``'s tangent to ``p``'s cotangent."""
    if role is Role.VALUE or (role is Role.TANGENT and new is Role.COTANGENT):
        return name, new
    return label(name, role), new


def cotangent_label(x):
    """``(name, role)`` of the cotangent of a Program's output ``x`` (a ``Var``,
    or a ``Lit``, which has no name): what a transposed Program's input for
    it is called."""
    return derive(getattr(x, "name", ""), getattr(x, "role", Role.VALUE), Role.COTANGENT)


class Var:
    """A variable, identified by object identity. ``name``: the user's name
    it was kept under by the source engine ("" for traced values);
    ``role``: what it is to differentiation (``Role``). Printed names are
    derived from both (``label``)."""

    __slots__ = ("aval", "name", "role")

    def __init__(self, aval, name="", role=Role.VALUE):
        self.aval = aval
        self.name = name
        self.role = role

    def __repr__(self):
        return f"Var({label(self.name, self.role) or hex(id(self))[-4:]}: {self.aval.short()})"


class Lit:
    """A literal operand: a Python scalar, an array constant, or (while a
    higher-order derivative is being traced) an outer trace's value."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval=None):
        self.val = val
        # ``aval``: a more general one than the value's own (lengths known
        # only at run time: a slot a branch leaves empty)
        self.aval = aval_of(val) if aval is None else aval

    def __repr__(self):
        return f"Lit({self.val!r})"


class HasAval:
    """``shape``, ``ndim``, ``size`` and ``dtype`` read from ``self.aval``:
    symbolic values answer NumPy's shape questions like arrays."""

    __slots__ = ()

    @property
    def shape(self):
        return self.aval.shape

    @property
    def ndim(self):
        return self.aval.ndim

    @property
    def size(self):
        return self.aval.size

    @property
    def dtype(self):
        return self.aval.dtype


class TracerBase(HasAval):
    """A value of a trace in progress. Subclasses carry what their trace needs;
    ``frontends``/``transforms`` define them, ``primitives.numpy_api`` gives them
    NumPy's face (operators, ufuncs, methods)."""

    __slots__ = ("_trace",)

    def name_hint(self, name, role=Role.VALUE):
        """Pass a user's variable name, and the role (``ir.Role``) this value
        plays for it, on to the Program being recorded (if any)."""
