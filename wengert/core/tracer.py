"""The traced value: what a user's NumPy code holds while a trace records it (``Tracer``).

A tracer must answer NumPy's whole array protocol: operators, ``__array_ufunc__`` and
``__array_function__``, methods (``x.sum()``), attributes (``x.T``). What those *mean* is the
NumPy face's (``numpy.array_methods``), written with the rows; core knows no row, so a tracer
forwards each of them to the face, which ``numpy`` hands in once, when it is imported
(``provide_face``; importing ``wengert`` imports it before any tracer exists). This is JAX's
arrangement (``core.Tracer`` forwards to what ``jax.numpy`` installs), without installing
anything on the class: operators and protocols (which Python looks up on the type) are
forwarders written here, every other name is found on the face by ``__getattr__``.

What belongs to the tracer itself is here: whether a 0-d value is a NumPy scalar or a 0-d array
(``numpy_scalar``, ``as_array``, ``as_scalar``, ``as_maybe_array``; each trace's tracers answer
for themselves), its identity as a dictionary key, and its priority over ndarrays.

Layer: core.
"""
from __future__ import annotations

from .atoms import TracerBase

__all__ = ["Tracer", "provide_face", "face", "FORWARDED"]

_FACE = []      # the one face, once provided (a list: set once, read by every tracer)
_METHODS = {}   # its functions by name, for the forwarders


def provide_face(methods):
    """Give tracers their NumPy face: ``methods`` is a class whose functions and properties
    take the tracer as ``self`` (``numpy.array_methods.ArrayMethods``). Once only."""
    if _FACE:
        raise RuntimeError("the tracers' NumPy face is provided once")
    missing = [name for name in FORWARDED if name not in vars(methods)]
    if missing:
        raise TypeError(f"the NumPy face lacks {', '.join(missing)}")
    _FACE.append(methods)
    _METHODS.update((name, vars(methods)[name]) for name in FORWARDED)


def face():
    """The class ``provide_face`` was given."""
    return _FACE[0]


def _forwarder(name):
    # operators take one operand or none: a forwarder without argument packing (the trace
    # engine runs one per operation of the user's code)
    if name in _UNARY:
        def forward(self):
            return _METHODS[name](self)
    elif name in _BINARY:
        def forward(self, other):
            return _METHODS[name](self, other)
    else:
        def forward(self, *args, **kwargs):
            return _METHODS[name](self, *args, **kwargs)
    forward.__name__ = forward.__qualname__ = name
    return forward


# the special methods Python looks up on the type, not the instance: each forwards to the face
FORWARDED = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__mod__", "__rmod__",
    "__floordiv__", "__rfloordiv__", "__neg__", "__pos__", "__abs__", "__lt__", "__le__",
    "__gt__", "__ge__", "__eq__", "__ne__", "__and__", "__or__", "__invert__",
    "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__", "__imatmul__", "__imod__",
    "__ifloordiv__", "__getitem__", "__setitem__", "__len__", "__iter__", "__bool__",
    "__index__", "__int__", "__float__", "__complex__", "__array__", "__array_ufunc__",
    "__array_function__", "__array_namespace__")


_UNARY = frozenset({"__neg__", "__pos__", "__abs__", "__invert__", "__len__", "__iter__",
                    "__bool__", "__index__", "__int__", "__float__", "__complex__"})
_BINARY = frozenset(n for n in FORWARDED if n not in _UNARY and n not in (
    "__setitem__", "__array__", "__array_ufunc__", "__array_function__", "__array_namespace__"))


class Tracer(TracerBase):
    """Base of every traced value: NumPy's array protocol, through the face."""

    __slots__ = ()
    __array_priority__ = 1000
    # operators compare elementwise (``__eq__``), so identity is the key
    __hash__ = object.__hash__

    locals().update({_name: _forwarder(_name) for _name in FORWARDED})

    def __getattr__(self, name):
        # methods and properties of arrays (``x.sum``, ``x.T``): the face's, bound to this
        # tracer (a slot not yet set comes here too, and finds nothing)
        found = getattr(_FACE[0], name, None) if _FACE and not name.startswith("__") else None
        if found is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return found.__get__(self, type(self))

    # --- scalar or 0-d array (``inplace.is_scalar``): a tracer with no concrete value says,
    # each class for its own
    def numpy_scalar(self):
        """Whether this 0-d value is a NumPy or Python scalar for certain."""
        return False

    def as_array(self):
        """This value as a 0-d array where it is a scalar (``inplace.array_value``)."""
        return self

    def as_scalar(self):
        """This value as a NumPy scalar where it is a 0-d array (``inplace.scalar_value``)."""
        return self

    def as_maybe_array(self):
        """This value, not known to be a scalar where it has no concrete value
        (``inplace.array_result``)."""
        return self

    def batched_error(self, what):
        """Where this value has no concrete value because it is a batch of them (inside
        ``wg.vmap``), the error to raise for ``what`` (``bool()``, ``int()``): each example
        may answer differently; else None. A tracer over another asks it."""
        inner = getattr(self, "primal", None)
        if inner is None:
            inner = getattr(self, "val", None)
        return inner.batched_error(what) if isinstance(inner, Tracer) else None
