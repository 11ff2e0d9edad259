"""What converted code reads from outside the function, and the checks that
keep generated code valid when that changes.

Python reads a global when the line runs; a derivative generated once must
give the answer the plain function would give at each call. The converter
(``source.py``) rewrites every name the function does not bind itself into
``__wg.env_global(G, "name")`` or ``__wg.env_cell(cell, "name")``; what that
returns depends on the value found there (``classify``, by the predicates
of ``source.kinds``):

* a float array: read again by the generated code at every call (an
  ``env_read`` equation: ``W = items.W``), so an array changed in place is
  seen; its shape and dtype are checked at each call;
* an integer, boolean or complex array (an index, a mask, whose values may
  set shapes; a complex constant, which NumPy computes on): folded into the
  code, and compared with the array found at each call;
* a number, string, None, or a tuple of them: folded into the code, and
  compared with the value found at each call;
* a function (a user's is converted where it is called), a ufunc, a module
  or class of NumPy, SciPy, the math modules or wengert (the code's
  vocabulary): used while the code is generated; at each call the name must
  still hold the same object (rebinding a helper gives new code);
* anything else (a user's module, class or object, a list, a dict, a
  generator): an ``EnvObject`` that stands for the place. Reading an
  attribute or an item classifies what is there in turn (``model.W`` is read
  at every call); calling it, or a method of it, runs the call at every call
  (``rs.randn(3)`` is a ``host_call``), on a copy of the object while the
  code is generated, so generating code never consumes a random stream; a
  Python method is converted, its ``self`` the object's place.

Default values of parameters are read like globals (``default_value``).

Each check is recorded while the code is generated, in the generation's
staging context (``context.StagingContext``, see ``source.guards``); the
source engine compiles them into one function (``guard_function``) that a
call must pass before cached code runs, else the code is generated again.

Layer: frontends.
"""
from __future__ import annotations

import builtins
import copy
import sys
import types

import numpy as np

from ...core import dims
from ...core.errors import UnsupportedSyntax, user_location
from ...core.ir import Aval, is_duck_array
from ...core.primitive import TracerBase
from ...primitives.host import EnvRef, env_read, host_call, out_aval_of
from .guards import guard, same_value
from .kinds import IO_MODULES, is_plain, is_rng, is_vocabulary
from .written import MISSING, written

__all__ = ["env_global", "env_cell", "static_object", "default_value", "EnvObject",
           "call_outside", "concrete", "materialize", "holds_outside_object", "outside_value"]


def classify(value, ref):
    """What converted code gets for ``value``, found at ``ref`` (see the
    module docstring), with the check it needs recorded."""
    if isinstance(value, TracerBase):
        # a value of the staging itself (a closure of a nested def), or of an
        # outer transformation (then the Program holds it, and has no code)
        return value
    if isinstance(value, EnvObject):
        return value
    if is_vocabulary(value):
        guard(ref, "is", value)
        return value
    if is_plain(value) and not isinstance(value, (list, dict)):
        guard(ref, "eq", value)
        return value
    if isinstance(value, (type, types.ModuleType)):
        # a user's class or module: the same one (its attributes are checked
        # where they are read)
        guard(ref, "is", value)
        return EnvObject(ref, value)
    if isinstance(value, types.MethodType) and not is_vocabulary(value.__self__):
        # a bound method found outside (``step = model.apply``): its object's
        # place is the method's ``__self__``
        guard(ref, "type", type(value))
        return EnvObject(ref, value, receiver=classify(value.__self__, ref.attr("__self__")))
    if type(value) is np.ndarray or is_duck_array(value):    # Dask, CuPy: read as NumPy's
        if value.dtype.kind in "biuc":
            # integers and booleans index (a mask's count of True sets a
            # shape), complex values are computed on by NumPy only (wengert
            # refuses them): their values are the code's, compared at each call
            kept = value.copy()
            kept.flags.writeable = False
            guard(ref, "values", kept)
            return kept
        if value.dtype.kind != "f":
            raise UnsupportedSyntax(
                f"{ref!r} is an array of dtype {value.dtype}, which the source engine cannot "
                "read: pass it as an argument, or use engine='trace'",
                construct="non-numeric global array")
        guard(ref, "array", (value.shape, value.dtype, type(value)))
        return env_read(ref, Aval(value.shape, value.dtype))
    guard(ref, "type", type(value))
    return EnvObject(ref, value)


def env_global(glb, name):
    """``name`` read by converted code from its module's globals ``glb``
    (builtins where the module does not bind it); what the function wrote
    there (``global``), as it wrote it (``written``)."""
    module = sys.modules.get(glb.get("__name__"))
    label = glb["__name__"] if getattr(module, "__dict__", None) is glb else ""
    ref = EnvRef("globals", glb, label, (("item", name),))
    return _read(ref, lambda: _global(glb, name, ref))


def _read(ref, read):
    """The value at ``ref``: what the function wrote there, else ``read()``."""
    found = written(ref, read)
    return read() if found is MISSING else found


def _global(glb, name, ref):
    try:
        value = glb[name]
    except KeyError:
        scope = glb.get("__builtins__", builtins)
        scope = scope.__dict__ if isinstance(scope, types.ModuleType) else scope
        if name not in scope:
            raise NameError(f"name {name!r} is not defined") from None
        guard(ref, "absent", None)
        return scope[name]
    return classify(value, ref)


def env_cell(cell, name):
    """Closure variable ``name`` read by converted code from ``cell``."""
    ref = EnvRef("cell", cell, name)

    def read():
        try:
            value = cell.cell_contents
        except ValueError:
            raise NameError(f"free variable {name!r} referenced before assignment") from None
        return classify(value, ref)
    return _read(ref, read)


def default_value(fn, attr, key, value):
    """A default argument of ``fn`` (``__defaults__[key]`` or
    ``__kwdefaults__[key]``), as converted code gets it."""
    return classify(value, EnvRef("object", fn, getattr(fn, "__name__", "function"),
                                  (("attr", attr), ("item", key))))


def static_object(value, label):
    """A non-array argument that the code is specialised to (the same object
    at every call, by identity): its attributes are read at each call all
    the same."""
    if is_plain(value) or is_vocabulary(value) or isinstance(value, (TracerBase, EnvObject)):
        return value
    return EnvObject(EnvRef("object", value, label), value)


def materialize(x):
    """``x`` with the lists, tuples and dicts found outside turned into real
    ones of their (classified) items, for a function that is called rather
    than converted; other outside objects stay ``EnvObject``s."""
    if isinstance(x, EnvObject):
        v = x._value
        if type(v) in (list, tuple):
            return type(v)(materialize(e) for e in x)
        if isinstance(v, tuple) and hasattr(v, "_fields"):         # a namedtuple
            return type(v)(*[materialize(e) for e in x])
        if type(v) is dict:
            return {k: materialize(x[k]) for k in x}
        return x
    if type(x) in (list, tuple):
        return type(x)(materialize(e) for e in x)
    if type(x) is dict:
        return {k: materialize(e) for k, e in x.items()}
    return x


def outside_value(x):
    """A result that is no array or number (a string, a function, an
    object), as the code returns it: an object found outside is checked at
    each call to be the same one; one that holds traced values (in its
    attributes) cannot be returned as it is."""
    if isinstance(x, EnvObject):
        guard(x._ref, "is", x._value)
        return x._value
    held = getattr(x, "__dict__", None)
    if isinstance(held, dict) and any(isinstance(v, TracerBase) for v in held.values()):
        raise UnsupportedSyntax(
            f"{user_location()}: the function returns a {type(x).__name__} object holding values "
            "that depend on the differentiated input; the source engine returns arrays, numbers "
            "and tuples, lists and dicts of them: return those values in a tuple or a dict, "
            "or make the class a pytree node (wg.tree.register_dataclass or "
            "wg.tree.register_node)",
            construct="object holding traced values as a result")
    return x


def holds_outside_object(x):
    """Whether ``x`` is, or holds, an outside object (after ``materialize``)."""
    if isinstance(x, EnvObject):
        return True
    if type(x) in (list, tuple):
        return any(holds_outside_object(e) for e in x)
    if type(x) is dict:
        return any(holds_outside_object(e) for e in x.values())
    return False


def concrete(x):
    """The value an ``EnvObject`` stands for (as found while the code is
    generated); anything else as it is."""
    return x._value if isinstance(x, EnvObject) else x


class EnvObject:
    """An object outside the function (a model, a generator, a list of
    arrays), standing for the place it is found at: what converted code reads
    from it is classified in turn, what it calls on it is called at run time."""

    __slots__ = ("_ref", "_value", "_receiver")

    def __init__(self, ref, value, receiver=None):
        self._ref, self._value = ref, value
        self._receiver = receiver       # for a bound method: its object's EnvObject

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if type(self._value) is dict and name in ("keys", "values", "items", "get"):
            return getattr(self, "_dict_" + name)
        return _read(self._ref.attr(name), lambda: self._attribute(name))

    def _attribute(self, name):
        try:
            value = getattr(self._value, name)
        except AttributeError:
            guard(self._ref, "lacks", name)       # hasattr() is False: it must stay so
            raise
        ref = self._ref.attr(name)
        if isinstance(value, (types.MethodType, types.BuiltinMethodType)) and \
                getattr(value, "__self__", None) is self._value:
            guard(ref, "type", type(value))
            return EnvObject(ref, value, receiver=self)
        return classify(value, ref)

    def __getitem__(self, key):
        if isinstance(key, TracerBase) or (isinstance(key, tuple) and any(
                isinstance(k, TracerBase) for k in key)):
            raise UnsupportedSyntax(
                f"{self._ref!r}[...] at a traced position: the source engine reads outside "
                "values at positions known when the code is generated; convert it to an array "
                "first (np.asarray), or use engine='trace'", construct="traced index of an object")
        if isinstance(key, np.integer):
            key = int(key)          # written as a plain int in the checks' code
        if not is_plain(key):
            raise UnsupportedSyntax(f"{self._ref!r}[...] with a key of type "
                                    f"{type(key).__name__}; use a number or a string",
                                    construct="object key")
        if self._plain_whole():
            return self._value[key]
        return classify(self._value[key], self._ref.item(key))

    def _plain_whole(self):
        """A list or dict of numbers and strings: compared whole at each call
        (one check, however many of its items the code reads)."""
        if isinstance(self._value, (list, dict)) and is_plain(self._value):
            guard(self._ref, "eq", copy.deepcopy(self._value))
            return True
        return False

    # a dict found outside: what is read of it now is checked at each call
    def _dict_keys(self):
        keys = tuple(self._value)
        guard(self._ref, "keys", keys)
        return list(keys)

    def _dict_values(self):
        return [self[k] for k in self._dict_keys()]

    def _dict_items(self):
        return [(k, self[k]) for k in self._dict_keys()]

    def _dict_get(self, key, default=None):
        return self[key] if key in self._dict_keys() else default

    def __contains__(self, key):
        if type(self._value) is dict:
            return key in self._dict_keys()
        return any(same_value(key, e) for e in materialize(self))

    def __len__(self):
        n = len(self._value)
        guard(self._ref, "len", n)
        return n

    def __iter__(self):
        v = self._value
        if isinstance(v, dict):
            return iter(self._dict_keys())
        if isinstance(v, (list, tuple)):
            if self._plain_whole():
                return iter(list(v))
            return iter([self[k] for k in range(len(self))])
        raise UnsupportedSyntax(f"iterating over {self._ref!r} (a {type(v).__name__}): the "
                                "source engine iterates over lists, tuples, dicts and arrays "
                                "found outside the function", construct="iteration over object")

    def __bool__(self):
        truth = bool(self._value)
        guard(self._ref, "truth", truth)       # a deque or list emptied since is False
        return truth

    def __call__(self, *args, **kwargs):
        if isinstance(self._value, type):
            # a user's class: the object is made now, as the plain code would
            args = [concrete(a) for a in materialize(list(args))]
            kwargs = {k: concrete(v) for k, v in materialize(kwargs).items()}
            return self._value(*args, **kwargs)
        return call_outside(self, args, kwargs)

    def __array__(self, *a, **k):
        raise UnsupportedSyntax(
            f"{self._ref!r} (a {type(self._value).__name__}) used as an array: read its arrays "
            "explicitly (np.stack of its items, an attribute), or use engine='trace'",
            construct="object as array")

    def __repr__(self):
        return f"<outside value {self._ref!r}: {type(self._value).__name__}>"


# --- calls that act outside -------------------------------------------------------
def _operand(x):
    return isinstance(x, (TracerBase, np.ndarray))


def _dummy(x):
    """A stand-in for an argument while the call's result type is found:
    zeros for a traced operand, a copy of anything a call could change (an
    iterator ``next`` would advance)."""
    if isinstance(x, TracerBase):
        a = x.aval
        return np.zeros(tuple(int(d) for d in a.shape), a.dtype)
    if isinstance(x, (bool, int, float, complex, str, bytes, type(None), np.generic)):
        return x
    try:
        return copy.deepcopy(x)
    except Exception:   # noqa: BLE001 -- an object that cannot be copied
        raise UnsupportedSyntax(
            f"an argument of type {type(x).__name__} to a call the source engine makes at each "
            "call: it finds the result's shape on copies of the arguments, and this one cannot "
            "be copied; make the call outside the function, or use engine='trace'",
            construct="call with an uncopyable argument") from None


def outside_method(f):
    """``(function, receiver)`` when ``f`` is a Python method of an object
    found outside (its check recorded), else None. ``source.runtime.call``
    converts the function and calls it with the receiver, the object's place
    (so ``self.W`` is read at each call)."""
    if not isinstance(f, EnvObject):
        return None
    fixed = concrete(f)
    if isinstance(fixed, types.MethodType) and isinstance(fixed.__func__, types.FunctionType):
        guard(f._ref, "func", fixed.__func__)
        return fixed.__func__, f._receiver
    return None


def call_outside(f, args, kwargs):
    """``f(*args, **kwargs)`` made by the generated code at each call (a
    ``host_call``). Its result's shape and dtype are found now by calling it
    on copies: of its object (a generator's state is copied, so nothing is
    drawn from the user's stream) and of its operands (zeros)."""
    if outside_method(f) is not None:
        raise UnsupportedSyntax(
            f"{user_location()}: the method {f._ref!r} of an object found outside, called "
            "other than from the converted code; call it from the function itself, or use "
            "engine='trace'", construct="outside method")
    fixed = concrete(f)
    dims.pin(args, kwargs)      # given to the call as numbers: the code holds at them only
    args = [concrete(a) for a in args]
    kwargs = {k: concrete(v) for k, v in kwargs.items()}
    operands, spec, kw_spec = [], [], []
    for a in args:
        if _operand(a):
            spec.append(("op", len(operands)))
            operands.append(a)
        else:
            spec.append(("const", a))
    for k, a in kwargs.items():
        if _operand(a):
            kw_spec.append((k, ("op", len(operands))))
            operands.append(a)
        else:
            kw_spec.append((k, ("const", a)))
    owner = getattr(fixed, "__self__", None)
    if fixed is builtins.print:         # I/O: known to give None, never probed
        return host_call(fixed, operands, spec, kw_spec, None)
    if isinstance(owner, types.ModuleType) and owner.__name__ in IO_MODULES:
        # its result's type cannot be found without making the call (a write)
        raise UnsupportedSyntax(
            f"{_label(f)}: an I/O call inside a differentiated function; the source engine "
            "would have to make it once more to find what it returns. Make it outside the "
            "function, use print, or use engine='trace'", construct="I/O call")
    probe = fixed
    if owner is None and not isinstance(fixed, (types.FunctionType, types.BuiltinFunctionType,
                                                types.MethodType, type)):
        owner = fixed           # a callable object: called on a copy too
    if owner is not None and not isinstance(owner, types.ModuleType):
        try:
            copied = copy.deepcopy(owner)
            probe = copied if owner is fixed else getattr(copied, fixed.__name__)
        except Exception:   # noqa: BLE001 -- an object that cannot be copied
            raise UnsupportedSyntax(
                f"{_label(f)}: the source engine calls a method of an outside object at each "
                "call, and finds the result's shape on a copy of the object, which this one "
                "cannot make; call it outside the function and pass the result in, or use "
                "engine='trace'", construct="call on an uncopyable object") from None
    try:
        result = probe(*[_dummy(a) for a in args], **{k: _dummy(v) for k, v in kwargs.items()})
        out = out_aval_of(result)
    except TypeError as err:
        raise UnsupportedSyntax(
            f"{_label(f)} returns {err}, which generated code cannot hold as a value; call it "
            "outside the function and pass what you need in, or use engine='trace'",
            construct="outside call returning an object") from None
    callee = f._ref if isinstance(f, EnvObject) else fixed
    checked = not is_rng(owner)
    return host_call(callee, operands, spec, kw_spec, out, checked=checked)


def _label(f):
    if isinstance(f, EnvObject):
        return repr(f._ref)
    return getattr(f, "__qualname__", None) or repr(f)

