"""``Strict``: an array of a stand-in library that implements NumPy's protocols the way CuPy
does (``__array_function__``, ``__array_ufunc__``, ``like=``) and refuses what CuPy refuses:
conversion to a NumPy array (``np.asarray(x)``, ``np.array(x)``; it has no ``__array_interface__``), and NumPy arrays (of one
element or more) as operands of its functions. Computed by NumPy underneath, on the CPU, so
the tests that derivatives never force an input to NumPy run without a GPU
(``tests/api/test_array_libraries.py``).
"""
import numpy as np


class Strict:
    """A NumPy array held behind NumPy's protocols; what it computes is a ``Strict``."""

    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a

    # --- what a library's array answers --------------------------------------------------
    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)
    ndim = property(lambda self: self.a.ndim)
    size = property(lambda self: self.a.size)
    T = property(lambda self: Strict(self.a.T))

    def __repr__(self):
        return f"Strict({self.a!r})"

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Strict: implicit conversion to a NumPy array is not allowed "
                        "(as CuPy's); use .get()")

    def get(self):
        """The NumPy array (CuPy's ``.get()``)."""
        return self.a.copy()

    def __len__(self):
        return len(self.a)

    def __bool__(self):
        return bool(self.a)

    def __float__(self):
        return float(self.a)

    def __int__(self):
        return int(self.a)

    def __index__(self):
        return self.a.__index__()

    # --- NumPy's protocols --------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        kwargs = _unwrap(kwargs)
        if out is not None:
            kwargs["out"] = tuple(_unwrap(o) for o in out)
        result = getattr(ufunc, method)(*_unwrap(inputs), **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        if func in (np.asarray, np.array) and type(args[0]) is np.ndarray:
            return Strict(func(*args, **kwargs))    # like=: a NumPy array copied in (to the GPU)
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))

    # --- methods and indexing, computed by NumPy and wrapped --------------------------------
    def __getattr__(self, name):
        if name.startswith("__array_") or name == "__buffer__":
            # NumPy's conversion protocols (``__array_interface__``, ``__array_struct__``):
            # CuPy has none of them (forwarded, they let NumPy convert a Strict silently)
            raise AttributeError(name)
        attr = getattr(self.a, name)
        if not callable(attr):
            return _wrap(attr)
        return lambda *args, **kwargs: _wrap(attr(*_unwrap(args), **_unwrap(kwargs)))

    def __getitem__(self, idx):
        return _wrap(self.a[_unwrap(idx)])

    def __setitem__(self, idx, v):
        self.a[_unwrap(idx)] = _unwrap(v)

    def copy(self):
        return Strict(self.a.copy())


def _binary(ufunc):
    return (lambda self, other: ufunc(self, other), lambda self, other: ufunc(other, self))


for _name, _ufunc in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                      ("truediv", np.true_divide), ("pow", np.power), ("matmul", np.matmul),
                      ("mod", np.remainder), ("floordiv", np.floor_divide)]:
    _f, _r = _binary(_ufunc)
    setattr(Strict, f"__{_name}__", _f)
    setattr(Strict, f"__r{_name}__", _r)
for _name, _ufunc in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                      ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal),
                      ("and", np.logical_and), ("or", np.logical_or)]:
    setattr(Strict, f"__{_name}__", _binary(_ufunc)[0])
Strict.__neg__ = lambda self: np.negative(self)
Strict.__abs__ = lambda self: np.abs(self)
Strict.__invert__ = lambda self: np.invert(self)
Strict.__hash__ = None


def _unwrap(x):
    if isinstance(x, Strict):
        return x.a
    if type(x) is np.ndarray and x.ndim > 0:
        raise TypeError("Strict: a NumPy array operand is not allowed (as in CuPy); "
                        f"got one of shape {x.shape}")
    if type(x) in (tuple, list):
        return type(x)(_unwrap(e) for e in x)
    if type(x) is dict:
        return {k: _unwrap(v) for k, v in x.items()}
    return x


def _wrap(x):
    if isinstance(x, np.ndarray):
        return Strict(x)
    if isinstance(x, np.generic):       # a reduction's result: a 0-d array, as CuPy's
        return Strict(np.asarray(x))
    if type(x) is tuple:
        return tuple(_wrap(e) for e in x)
    if isinstance(x, tuple):            # a named tuple (np.linalg.qr's, eigh's): CuPy's arrays
        return type(x)(*(_wrap(e) for e in x))
    if type(x) is list:
        return [_wrap(e) for e in x]
    return x
