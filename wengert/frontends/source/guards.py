"""The checks that keep code the source engine generated valid: each value
read from outside while the code is generated is recorded with how to check
it (``note``), in the generation's staging context
(``context.StagingContext``); ``guard_function`` compiles them into the one
function a call must pass before cached code runs (see ``source.env``).

Layer: frontends.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.context import current as current_context
from ...primitives.host import EnvRef

__all__ = ["note", "guard_function"]


# --- the checks recorded while code is generated ----------------------------------
# They belong to the generation in progress: the current staging context
# (``context.StagingContext.outside``, ``{key: guard}``); a generation started
# inside another passes its checks on to the outer one when it ends.


def note(guards):
    """Record ``guards`` (another code's checks) in the generation in
    progress, if one is."""
    for g in guards:
        guard(*g)


def guard(ref, kind, expected):
    """Record that the code needs ``ref`` to pass check ``kind`` (a key of
    ``_TESTS``, or ``"array"``/``"eq"``: see ``_guard_test``) at each call."""
    ctx = current_context()
    if ctx is not None:
        ctx.outside.setdefault(_key(ref, kind, expected), (ref, kind, expected))


def _key(ref, kind, expected):
    """One guard per place and kind (an object lacks several attributes)."""
    return (ref.param_key, kind, expected if kind == "lacks" else None)


def guard_function(guards):
    """``check() -> bool``: whether every guard holds now (None when there
    are none). Compiled into one Python function of a statement per guard, so
    a call pays a few dict lookups and comparisons."""
    if not guards:
        return None
    ns = {"_same": same_value, "_same_array": _same_array, "_ndarray": np.ndarray,
          "_MISSING": _MISSING, "_map": map, "_type": type, "_list": list}
    roots = {}

    def root_name(ref):
        key = ref.param_key[1]
        if key not in roots:
            roots[key] = f"r{len(roots)}"
            ns[roots[key]] = ref.root
        return roots[key]

    lines = ["def check():", "    try:"]
    for k, (ref, kind, expected) in enumerate(guards):
        name = root_name(ref)
        if ref.kind == "globals":
            # a module's dict, read as a dict (the text's ``module.name`` form
            # is for readers of generated code)
            head = f"{name}.get({ref.path[0][1]!r}, _MISSING)"
            text = EnvRef("object", None, "", ref.path[1:]).text(head)
        else:
            text = ref.text(name)
        e = f"e{k}"
        ns[e] = expected
        lines.append(f"        x = {text}")
        lines.append(f"        if not ({_guard_test(kind, e, expected, ns)}): return False")
    lines += ["        return True", "    except Exception:",
              "        return False    # a name or attribute gone: not the same"]
    exec(compile("\n".join(lines), "<wengert-env-guards>", "exec"), ns)
    return ns["check"]


# the test of each kind of guard on ``x`` (what is found there now); ``{e}``
# is the name of what was expected
_TESTS = {
    "is": "x is {e}", "values": "_same_array(x, {e})", "type": "_type(x) is {e}",
    "len": "len(x) == {e}", "keys": "tuple(x) == {e}", "absent": "x is _MISSING",
    "func": "getattr(x, '__func__', None) is {e}", "lacks": "not hasattr(x, {e})",
    "truth": "bool(x) is {e}",
}


def _guard_test(kind, e, expected, ns):
    """The test of one guard on ``x`` (what was found there now)."""
    if kind == "array":
        ns[e + "s"], ns[e + "d"], ns[e + "k"] = expected       # (shape, dtype, array type)
        return f"_type(x) is {e}k and x.shape == {e}s and x.dtype == {e}d"
    if kind != "eq":
        return _TESTS[kind].format(e=e)
    ns[e + "t"] = type(expected)
    # a number or string, or a flat list of them, compared with ==; a float
    # only where == is exact (not NaN, not a zero, whose sign == ignores)
    if isinstance(expected, (bool, int, str, bytes, type(None))) or _exact_float(expected):
        return f"_type(x) is {e}t and x == {e}"
    if type(expected) in (list, tuple) and all(
            isinstance(v, (bool, int, str)) or _exact_float(v) for v in expected):
        ns[e + "types"] = [type(v) for v in expected]
        return f"_type(x) is {e}t and x == {e} and _list(_map(_type, x)) == {e}types"
    return f"_same(x, {e})"


def _exact_float(v):
    return isinstance(v, float) and v == v and v != 0


class _Missing:
    def __repr__(self):
        return "<missing>"


_MISSING = _Missing()


def _same_array(a, b):
    """An ndarray of ``b``'s shape, dtype and values."""
    return (type(a) is np.ndarray and a.shape == b.shape and a.dtype == b.dtype
            and np.array_equal(a, b, equal_nan=b.dtype.kind in "fc"))


def same_value(a, b):
    """Equal plain values of the same types, NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (float, np.floating)):
        # NaN equal to NaN, and 0.0 not -0.0 (np.copysign tells them apart)
        return (a == b and math.copysign(1.0, a) == math.copysign(1.0, b)) or (
            a != a and b != b)
    if isinstance(a, (complex, np.complexfloating)):
        return same_value(a.real, b.real) and same_value(a.imag, b.imag)
    return bool(a == b)
