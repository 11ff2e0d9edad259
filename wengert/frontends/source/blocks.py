"""A user's block (a branch, a loop body) staged as a Program over the
variables it assigns, for ``source.runtime`` and ``source.loops``.

A block is ``fn(*lead, *state) -> state'`` (the converter made it a function
of the variables the block assigns). Each state entry is one of:

* an *operand*: a number or an array (traced or not), or a tuple (nested) of
  them holding at least one array, such as a returned pair ``(s, x)``, with
  its *spec* (``specs``);
* a Python value (a list, a string, an object, a function) that passes
  through and must come back unchanged; or
* ``Undefined``: a variable not assigned on this path.

Tuples may be rebuilt from their leaves because nothing can change one in
place; lists and dicts stay Python values (another name may alias them).

Layer: frontends.
"""
from __future__ import annotations

from ...core.errors import UnsupportedSyntax
from ...core.ir import aval_of
from ...core.pytree import flatten, unflatten
from ...control.stage import stage_loop
from ...core.inplace import array_value, is_scalar
from ...core.staging import StagingTracer, closure_convert, name_value, stage
from .names import EXIT_FLAG
from .specs import coerce_to, n_leaves, operand_leaves, rebuild, spec_of, zeros_of

__all__ = ["Undefined", "Block", "merge_pyvalues", "assemble"]


class Undefined:
    """The value of a variable not assigned (yet) on this path. ``why``: the
    message for a value that was dropped on purpose (a Python object that a
    loop over traced values changes: it cannot be carried, so it is unknown
    after the loop, which is an error only if it is read)."""

    def __init__(self, name="", why=None):
        self.name, self.why = name, why

    def fail(self, *a, **k):
        raise UnsupportedSyntax(self.why or (
            f"variable {self.name!r} is used where it may be unassigned: it is assigned only on "
            "some paths through a branch or loop whose condition depends on a traced value; "
            "assign it before the branch or loop"))

    # any use of the value reads it: each is the error (never a silent
    # answer, as ``==`` or ``is`` of an object would give)
    __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = __truediv__ = fail
    __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = fail
    __rpow__ = __matmul__ = __rmatmul__ = __neg__ = __pos__ = __abs__ = __invert__ = fail
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = fail
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __contains__ = __hash__ = fail
    __getitem__ = __setitem__ = __delitem__ = __call__ = __iter__ = __reversed__ = fail
    __len__ = __array__ = __float__ = __int__ = __index__ = __str__ = __format__ = fail

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        self.fail()

    def __bool__(self):
        self.fail()

    def __repr__(self):
        return f"<unassigned {self.name}>"


# --- operands and their specs ---------------------------------------------------------


# --- a block --------------------------------------------------------------------------

class Block:
    """A user block staged as a Program over its operand state (module
    docstring). ``coerce`` gives, per output entry, a spec to convert to.
    After staging: ``out_info[k]`` is ``("op", spec)`` or ``("py", value)``;
    ``operands`` are the state's operand leaves, the Program's inputs after
    its closed-over values ``consts``; ``exits``: the block certainly
    returned, broke or continued.

    A loop's body (``loop``: its params type, ``control.params``) is called
    as ``fn(*lead, *x_i, *state)`` (``xs_avals``: the per-iteration values')
    and staged in the loop's body layout, its closed-over values first among
    the consts (``control.stage.stage_loop``)."""

    def __init__(self, fn, lead_avals, state, names, name, coerce=None, where=None, loop=None,
                 xs_avals=(), loop_names=("", [])):
        self.state, self.names = state, names
        in_leaves = [operand_leaves(v) for v in state]
        self.is_op = [ls is not None for ls in in_leaves]
        self.in_specs = [spec_of(v) if o else None for v, o in zip(state, self.is_op)]
        self.operands = [x for ls in in_leaves if ls is not None for x in ls]
        self.out_info = None
        n_lead = len(lead_avals)

        # which operand leaves are scalars for certain (``inplace.is_scalar``):
        # the block's inputs are of their kind, and a loop's carry stays a
        # scalar only while each step gives one (``source.loops``)
        self.in_scalar = [is_scalar(x) for x in self.operands]
        self.out_scalar = None

        def flat(*xs):
            lead, ops = xs[:n_lead], list(xs[n_lead:])
            for x in lead:
                # a loop's counter (a Python int) or an item of a 1-D array
                x.scalar = True
            for x, k in zip(ops, self.in_scalar):
                x.scalar = k
            vals, pos = [], 0
            for v, spec in zip(state, self.in_specs):
                if spec is None:
                    vals.append(v)
                else:
                    vals.append(rebuild(spec, ops[pos:pos + n_leaves(spec)]))
                    pos += n_leaves(spec)
            before = _contents(state)
            try:
                outs = fn(*lead, *vals)
            finally:
                changed = _changed_in_place(state, before)
            if changed is not None:
                k = changed
                raise UnsupportedSyntax(
                    f"{where + ': ' if where else ''}"
                    f"{names[k] if k < len(names) else 'a value'!r} (a {type(state[k]).__name__}) "
                    "is changed in place inside a branch or loop that depends on a traced "
                    "value: both branches (or one step for all) are staged, so its changes "
                    "cannot be told apart; build it outside, or make the condition a Python "
                    "value (a list grown per step: loop over a Python range)",
                    construct="container changed in a traced block")
            self.exits = any(EXIT_FLAG.fullmatch(nm) and o is True for nm, o in zip(names, outs))
            leaves, info = [], []
            for k, (nm, o) in enumerate(zip(names, outs)):
                target = coerce[k] if coerce is not None else None
                if isinstance(o, Undefined) and target is not None:
                    o = zeros_of(target)       # an early return taken on one path only
                ls = operand_leaves(o)
                if ls is not None:
                    if target is not None:
                        o = coerce_to(o, target, repr(nm))
                        ls = operand_leaves(o)
                    leaves.extend(ls)
                    info.append(("op", spec_of(o)))
                else:
                    info.append(("py", o))
            self.out_info = info
            self.out_scalar = [is_scalar(x) for x in leaves]
            return leaves

        carry_avals = [aval_of(x) for x in self.operands]
        if loop is None:
            self.prog, self.consts = closure_convert(stage(
                flat, list(lead_avals) + carry_avals, name=name, dynamic=True, keep_custom=True))
            return
        nk, n_index = len(carry_avals), n_lead

        def body(*ins):         # the loop's order (i, carry, xs) -> fn's (i, xs, carry)
            index, rest = ins[:n_index], ins[n_index:]
            return flat(*index, *rest[nk:], *rest[:nk])

        n_lead += len(xs_avals)     # what ``flat`` passes to ``fn`` before the state
        self.prog, self.consts = stage_loop(body, loop, lead=lead_avals, carry=carry_avals,
                                            xs=xs_avals, name=name, closure=True,
                                            keep_custom=True,
                                            in_names=self._loop_input_names(
                                                loop_names, len(lead_avals), in_leaves,
                                                len(xs_avals)))

    def _loop_input_names(self, loop_names, n_lead, in_leaves, n_xs):
        """The user's names of a loop body's inputs (counter, carry, values
        per iteration): a carry keeps its variable's name where it is one
        array (a pytree's leaves, and wengert's own flags, get print-time
        names)."""
        counter, per_item = loop_names
        carry = []
        for nm, ls in zip(self.names, in_leaves):
            if ls is not None:
                user = len(ls) == 1 and not nm.startswith("__wg")
                carry += [nm if user else ""] * len(ls)
        items = list(per_item) if len(per_item) == n_xs else [""] * n_xs
        return [counter][:n_lead] + [""] * (n_lead - 1) + carry + items

    def carries_arrays(self):
        """Per state entry whose carry is a scalar for certain on entry but
        may be a 0-d array after a step (``x = np.where(...)``): its leaves'
        kinds, all of which the loop must take as arrays-or-scalars from the
        start ({k: [scalar?, ...]}); empty when every kind is stable."""
        out, pos = {}, 0
        for k, (o, spec) in enumerate(zip(self.is_op, self.in_specs)):
            if not o:
                continue
            n = n_leaves(spec)
            ins, outs = self.in_scalar[pos:pos + n], self.out_scalar[pos:pos + n]
            if any(a and not b for a, b in zip(ins, outs)):
                out[k] = [a and b for a, b in zip(ins, outs)]
            pos += n
        return out

    def output_slices(self):
        """Per state entry that is an operand output: its slice of the
        Program's outputs."""
        out, pos = {}, 0
        for k, (kd, spec) in enumerate(self.out_info):
            if kd == "op":
                out[k] = slice(pos, pos + n_leaves(spec))
                pos += n_leaves(spec)
        return out


_CONTAINERS = (list, dict, set, bytearray)


def _contents(state):
    """A shallow copy of each list, dict and set in ``state``."""
    return [(v.copy() if isinstance(v, _CONTAINERS) else None) for v in state]


def _changed_in_place(state, before):
    """The index of the first container that a block changed in place (put
    back as it was: a later staging must start from the same state), or None."""
    for k, (v, old) in enumerate(zip(state, before)):
        if old is None:
            continue
        items = (lambda c: list(c.items())) if isinstance(v, dict) else list
        if isinstance(v, set):
            same = v == old
        else:
            now, was = items(v), items(old)
            same = len(now) == len(was) and all(
                (a is b) if not isinstance(v, dict) else (a[0] == b[0] and a[1] is b[1])
                for a, b in zip(now, was))
        if not same:
            if isinstance(v, (list, bytearray)):
                v[:] = old
            else:
                v.clear()
                v.update(old)
            return k
    return None


def merge_pyvalues(names, infos, where):
    """Per state name: ('op', None) where an operand in every block, else
    ('py', the one Python value) or ('undef', the user's name)."""
    merged = []
    for k, nm in enumerate(names):
        kinds = [inf[k] for inf in infos]
        if all(kd == "op" for kd, _ in kinds):
            merged.append(("op", None))
            continue
        pys = [v for kd, v in kinds if kd == "py"]
        if len(pys) == len(kinds) and all(p is pys[0] for p in pys):
            merged.append(("py", pys[0]))
        elif all(isinstance(p, Undefined) for p in pys):
            # keep the user's name of what is unassigned (``ret = b``: b)
            users = [p.name for p in pys if p.name and not p.name.startswith("__wg")]
            merged.append(("undef", users[0] if users else nm))
        else:
            # which Python value it holds after the branch is known only at
            # run time: unknown, an error only where it is read
            shown = next(p for p in pys if not isinstance(p, Undefined)) if any(
                not isinstance(p, Undefined) for p in pys) else pys[0]
            merged.append(("undef", Undefined(nm, why=(
                f"{where}: {nm!r} takes a value that is not an array or a number ({shown!r}) "
                "in a branch that depends on a traced value, so which value it holds after "
                "the branch is not known while the code is generated; use it only inside the "
                "branch, keep lists, strings and objects out of such branches, or make the "
                "condition a Python value"))))
    return merged


def _user_name(name):
    """``name`` if it is a user's variable (not one the conversion made), else ""."""
    return name if name.isidentifier() and not name.startswith("__wg") else ""


def as_kinds(v, scalars):
    """The operand ``v`` (a value, or a tuple of them) with each leaf whose
    flag in ``scalars`` is False a 0-d array where it was a scalar."""
    leaves, tree = flatten(v)
    return unflatten(tree, [x if k else array_value(x) for x, k in zip(leaves, scalars)])


def assemble(names, merged, specs, res, scalars):
    """The state after a structured construct: operand entries (specs[k])
    rebuilt from ``res``, in order, each leaf a scalar for certain where
    ``scalars`` says so (the construct's results are new values, of no
    kind yet); Python values as they are."""
    for r, k in zip(res, scalars):
        if type(r) is StagingTracer:
            r.scalar = k
    it = iter(res)
    out = []
    for k, (kd, v) in enumerate(merged):
        if kd == "op":
            leaves = [next(it) for _ in range(n_leaves(specs[k]))]
            if len(leaves) == 1 and k < len(names) and _user_name(names[k]):
                name_value(leaves[0], names[k])     # the construct's result is the user's variable
            out.append(rebuild(specs[k], leaves))
        elif kd == "py":
            out.append(v)
        else:
            out.append(v if isinstance(v, Undefined) else Undefined(v))
    return tuple(out)
