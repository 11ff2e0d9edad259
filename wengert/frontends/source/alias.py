"""Aliasing: where the source engine's functional updates would differ from
Python's in-place writes.

The converter turns ``y[i] = v``, ``y[i] += v`` and ``y += v`` into a new
value bound to ``y``. In Python these write into the array itself, so every
other name bound to that array, or to a view of it (``z = y``,
``head = y[0:3]``, ``row = A[i]``, ``y.T``, ``y.reshape(...)``, a list that
holds ``y``), sees the write, and a write into a view changes its base. The
derivative of the converted code would then be the derivative of another
function: never silently. Two analyses over the user's function body:

* forward, *may-alias*: the pairs of names whose values may share memory at
  each statement (``_Aliases``): a name bound to an expression that may return
  its operand or a view of it (``source.views``) shares with the operand and with
  what the operand shares with; a name bound to a new array (arithmetic,
  ``.copy()``, ``np.zeros``, a ufunc...) shares with nothing;
* backward, *liveness*: the names read after each statement, around loops
  too (a read earlier in a loop body runs after a write later in it).

A write into ``y`` while a name ``z`` that may share with ``y`` is live after
it is a *conflict*. The statement gets a guard (``guard``) that, when the
function is staged, checks the values themselves: a scalar (``y[i]`` of a 1-D
array, a float ``y`` in ``y += 1``) shares nothing, anything else raises
``InPlaceUpdateError`` naming both lines (``source.alias_check``). The
guard costs nothing in generated code: it runs while staging only.

A parameter's value on entry is a pseudo-name (``@u``): a write into a name
that shares with it writes into the caller's array. Such a def is checked
where converted code calls it (``check_param_writes``), unless nothing the
caller reads afterwards shares that argument (``u = step(u)``, ``h(u.copy())``).

A 0-d traced value counts as a scalar only where it is one for certain
(ufuncs, reductions, ``v[i]``, ``float()``, an np.float64 argument:
``inplace.is_scalar``); ``x.copy()``, ``np.where``, ``x[...]`` of a 0-d array
are 0-d arrays, which ``y += v`` writes in place.

Known limits (conservative or not tracked): values stored into a list by
``L[i] = y`` are not followed (``append``
and list literals are); two arguments that are one array at call time are
taken as distinct (the Program's inputs are values).

Layer: frontends.
"""
from __future__ import annotations

import ast

from .names import parameters
from .views import names_in as _names_in, sources as _sources, target_sources as _target_sources

__all__ = ["mark_aliased_writes", "guard", "param_writes_stmt"]


# --- forward: which names may share memory ------------------------------------

class _Aliases:
    """May-alias pairs: {frozenset({a, b}): lines where the pair was made}."""

    def __init__(self, pairs=None):
        self.pairs = dict(pairs or {})

    def partners(self, name):
        return {m for p in self.pairs if name in p for m in p if m != name}

    def bind(self, bindings, line):
        """Simultaneous ``names = values``: ``bindings`` [(name, sources)].
        A source names the value it had *before* this statement."""
        old = {t: srcs | {m for s in srcs for m in self.partners(s)} for t, srcs in bindings}
        targets = set(old)
        new = {p: ls for p, ls in self.pairs.items() if not p & targets}
        for t, shared in old.items():
            for m in shared - targets:
                new[frozenset((t, m))] = frozenset((line,))
            for u, other in old.items():
                if u != t and shared & other:
                    new[frozenset((t, u))] = frozenset((line,))
        return _Aliases(new)

    def hold(self, container, srcs, line):
        """``container`` now also holds values of ``srcs`` (an append)."""
        new = dict(self.pairs)
        for m in srcs | {m for s in srcs for m in self.partners(s)}:
            if m != container:
                key = frozenset((container, m))
                new[key] = new.get(key, frozenset()) | {line}
        return _Aliases(new)

    def join(self, other):
        if other is None:
            return self
        new = dict(self.pairs)
        for p, ls in other.pairs.items():
            new[p] = new.get(p, frozenset()) | ls
        return _Aliases(new)

    def __eq__(self, other):
        return isinstance(other, _Aliases) and self.pairs == other.pairs


def _join(a, b):
    return b if a is None else a.join(b)


_APPENDS = frozenset(("append", "extend", "insert", "add", "update", "setdefault"))


def _written(stmt):
    """(kind, name) when ``stmt`` may write into an existing value."""
    if isinstance(stmt, ast.Assign):
        for t in stmt.targets:
            if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                return "subscript", t.value.id
    if isinstance(stmt, ast.AugAssign):
        t = stmt.target
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
            return "subscript", t.value.id
        if isinstance(t, ast.Name):
            return "augmented", t.id
    return None


def _call_of(stmt):
    """The call ``stmt`` is (``h(y)``, ``z = h(y)``): a user's function it
    calls may write into its arguments (``mark_aliased_writes``)."""
    if isinstance(stmt, (ast.Expr, ast.Assign, ast.Return)) and isinstance(stmt.value, ast.Call):
        return stmt.value
    return None


class _Forward:
    """The may-alias state before each writing statement (``before``)."""

    def __init__(self):
        self.before = {}
        self.loops = []             # per loop: [break states, continue states]

    def block(self, stmts, st):
        for s in stmts:
            if st is None:
                break
            st = self.stmt(s, st)
        return st

    def stmt(self, s, st):
        line = getattr(s, "lineno", 0)      # 0: a lambda body made into a return
        if _written(s) or _call_of(s):
            self.before[s] = _join(self.before.get(s), st)
        for call in ast.walk(s) if not isinstance(s, (ast.If, ast.For, ast.While,
                                                         ast.FunctionDef)) else ():
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr in _APPENDS and isinstance(call.func.value, ast.Name)):
                srcs = set().union(*[_sources(a) for a in call.args], set())
                st = st.hold(call.func.value.id, srcs, line)
        if isinstance(s, ast.Assign):
            bindings = [b for t in s.targets for b in _target_sources(t, s.value)]
            return st.bind(bindings, line) if bindings else st
        if isinstance(s, ast.AnnAssign) and s.value is not None:
            return st.bind(_target_sources(s.target, s.value), line)
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            if isinstance(s.value, (ast.List, ast.Tuple, ast.ListComp)):
                return st.hold(s.target.id, _sources(s.value), line)     # L += [y]
            return st
        if isinstance(s, ast.FunctionDef):
            return st.bind([(s.name, set())], line)
        if isinstance(s, ast.If):
            return _join(self.block(s.body, st), self.block(s.orelse, st))
        if isinstance(s, (ast.For, ast.While)):
            return self.loop(s, st)
        if isinstance(s, ast.Return):
            return None
        if isinstance(s, (ast.Break, ast.Continue)):
            self.loops[-1][isinstance(s, ast.Continue)].append(st)
            return None
        return st

    def loop(self, s, entry):
        head = entry
        while True:
            self.loops.append(([], []))
            inner = head
            if isinstance(s, ast.For):
                inner = head.bind(_target_sources(s.target, s.iter), s.lineno)
            end = self.block(s.body, inner)
            breaks, conts = self.loops.pop()
            new = head
            for x in [end] + conts:
                new = _join(new, x)
            if new == head:
                break
            head = new
        out = head
        for x in breaks:
            out = _join(out, x)
        return out


# --- backward: which names are read later -------------------------------------

def _target_kills_uses(target):
    """(names bound, names read) by an assignment target."""
    if isinstance(target, ast.Name):
        return {target.id}, set()
    if isinstance(target, ast.Starred):
        return _target_kills_uses(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        kills, uses = set(), set()
        for t in target.elts:
            k, u = _target_kills_uses(t)
            kills |= k
            uses |= u
        return kills, uses
    return set(), _names_in(target)         # y[i] = v reads y and i


class _Backward:
    """The names live after each writing statement (``after``)."""

    def __init__(self):
        self.after = {}
        self.loops = []         # per loop: (live after it, live at its head)

    def block(self, stmts, live):
        for s in reversed(stmts):
            live = self.stmt(s, live)
        return live

    def stmt(self, s, live):
        if _written(s) or _call_of(s):
            self.after[s] = self.after.get(s, frozenset()) | live
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if getattr(s, "value", None) is None:
                return live
            for t in targets:
                kills, uses = _target_kills_uses(t)
                live = (live - kills) | uses
            return live | _names_in(s.value)
        if isinstance(s, ast.AugAssign):
            return live | _names_in(s.target) | _names_in(s.value)
        if isinstance(s, ast.Return):
            return frozenset(_names_in(s.value) if s.value else ())
        if isinstance(s, ast.Break):
            return self.loops[-1][0]
        if isinstance(s, ast.Continue):
            return self.loops[-1][1]
        if isinstance(s, ast.FunctionDef):
            return live - {s.name}
        if isinstance(s, ast.If):
            return self.block(s.body, live) | self.block(s.orelse, live) | _names_in(s.test)
        if isinstance(s, (ast.For, ast.While)):
            return self.loop(s, live)
        return live | _names_in(s)

    def loop(self, s, after):
        head = frozenset(after)
        while True:
            self.loops.append((after, head))
            body = self.block(s.body, head)
            self.loops.pop()
            if isinstance(s, ast.For):
                kills, uses = _target_kills_uses(s.target)
                new = after | (body - kills) | uses
            else:
                new = after | body | _names_in(s.test)
            new = frozenset(new)
            if new == head:
                break
            head = new
        return head | _names_in(s.iter) if isinstance(s, ast.For) else head


def _captured(fn):
    """Names read by the defs and lambdas nested in ``fn``: they may be called
    at any later point, so these names count as read everywhere."""
    out = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.FunctionDef, ast.Lambda)) and node is not fn:
            out |= _names_in(node)
    return out


# --- marking the conflicting writes -------------------------------------------

def _entry(param):
    """The pseudo-name of the value a parameter held on entry: a write into a
    name paired with it writes into the caller's value."""
    return "@" + param


def _arguments(call):
    """(position or keyword, expression) of a call's arguments; none where one
    is unpacked (``*args``, ``**kw``: positions unknown)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return []
    return list(enumerate(call.args)) + [(k.arg, k.value) for k in call.keywords]


def _analyse(fn):
    """One function body (its nested defs are their own scopes):
    ``conflicts`` {statement: (kind, name, ((alias, lines), ...))}, ``params``
    {parameter: (kind, line)} whose caller's value may be written, and the
    calls' arguments that no name read afterwards shares (``unseen``:
    [(call, (position or keyword, ...))])."""
    params = parameters(fn.args)
    start = _Aliases({frozenset((p, _entry(p))): frozenset((fn.lineno,)) for p in params})
    fwd, bwd = _Forward(), _Backward()
    fwd.block(fn.body, start)
    bwd.block(fn.body, frozenset())
    captured = _captured(fn)
    conflicts, written, unseen = {}, {}, []
    for s, st in fwd.before.items():
        live = bwd.after.get(s, frozenset()) | captured
        call = _call_of(s)
        if call is not None:
            kills = set()
            for t in getattr(s, "targets", ()):
                kills |= _target_kills_uses(t)[0]
            hidden = tuple(key for key, a in _arguments(call)
                           if not any(m.startswith("@") or (m in live and m not in kills)
                                      for n in _sources(a) for m in st.partners(n) | {n}))
            if hidden:
                unseen.append((call, hidden))
        if not _written(s):
            continue
        kind, name = _written(s)
        for m in st.partners(name) | {name}:
            if m.startswith("@") and (m[1:] not in written or kind == "subscript"):
                written[m[1:]] = (kind, s.lineno)
        aliases = tuple(sorted((m, tuple(sorted(st.pairs[frozenset((name, m))])))
                               for m in st.partners(name) if m in live))
        if aliases:
            conflicts[s] = (kind, name, aliases)
    return conflicts, written, unseen


def mark_aliased_writes(tree, src):
    """Mark the user's function ``tree`` (checked) for the checks made when it
    is staged (``source.alias_check``), lines in the user's file:

    * a statement that writes into a value another live name may share gets
      ``wg_alias`` (kind, name, file, line, ((alias, lines bound), ...)),
      which ``guard`` makes a check of;
    * each def gets ``wg_param_writes`` {parameter: (kind, file, line)}: a
      write into the value its caller passed, which the caller would see;
    * a call gets ``wg_args_unseen``, the positions and keywords of its
      arguments that nothing read afterwards shares (``h(u)`` at the end,
      ``u = step(u)``): what the callee writes into them cannot be seen."""
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        conflicts, written, unseen = _analyse(fn)
        for s, (kind, name, aliases) in conflicts.items():
            lines = tuple((m, tuple(src.first + ln - 1 for ln in ls)) for m, ls in aliases)
            s.wg_alias = (kind, name, src.filename, src.first + s.lineno - 1, lines)
        fn.wg_param_writes = {p: (kind, src.filename, src.first + ln - 1)
                              for p, (kind, ln) in sorted(written.items())}
        hidden = dict(unseen)
        for call in ast.walk(fn):
            if isinstance(call, ast.Call):
                # an argument made fresh here (``h(u.copy())``, ``h(2 * u)``)
                # is seen by nobody else, wherever the call is
                fresh = {k for k, a in _arguments(call) if not _sources(a)}
                hidden[call] = tuple(k for k, _ in _arguments(call)
                                     if k in fresh or k in hidden.get(call, ()))
        for call, keys in hidden.items():
            if keys:
                call.wg_args_unseen = keys


def guard(node, runtime_name):
    """The statement that checks a marked write when staged:
    ``__wg.alias_check(info, lambda: y, ((lambda: z), ...))``."""
    kind, name, filename, line, aliases = node.wg_alias
    call = ast.Call(func=_runtime(runtime_name, "alias_check"),
                    args=[ast.Constant((kind, name, filename, line, aliases)), _thunk(name),
                          ast.Tuple(elts=[_thunk(m) for m, _ in aliases], ctx=ast.Load())],
                    keywords=[])
    return ast.copy_location(ast.Expr(value=call), node)


def param_writes_stmt(node, runtime_name):
    """``__wg.param_writes(h, {...})`` after a nested ``def h`` whose body
    writes into a parameter's value."""
    call = ast.Call(func=_runtime(runtime_name, "param_writes"),
                    args=[ast.Name(id=node.name, ctx=ast.Load()),
                          ast.Constant(tuple(node.wg_param_writes.items()))], keywords=[])
    return ast.copy_location(ast.Expr(value=call), node)


def _runtime(runtime_name, attr):
    return ast.Attribute(value=ast.Name(id=runtime_name, ctx=ast.Load()), attr=attr,
                         ctx=ast.Load())


def _thunk(name):
    return ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                                         kw_defaults=[], kwarg=None, defaults=[]),
                      body=ast.Name(id=name, ctx=ast.Load()))
