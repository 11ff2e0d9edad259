"""The layouts of the control-flow equations, written once.

A control-flow equation's operands and outputs are flat lists in which
groups sit side by side; the params say how long each group is. Every
module reads the groups through these objects, never by index arithmetic:

    cond        (index, *ops) -> (*outs)
                branch(*ops) -> (*outs)
    for_loop    (n, *consts, *carry, *xs) -> (*carry, *ys)
                body(i, *consts, *carry, *x_i) -> (*carry, *y_i)
    while_loop  (*consts, *carry) -> (*carry, count, *ys)
                cond(*consts, *carry) -> (flag,);  body(*consts, *carry) -> (*carry, *y)

A loop's operands are four groups ``(lead, consts, carry, xs)``, where
``lead`` is the trip count of a ``for_loop`` (none for a ``while_loop``),
and its outputs three groups ``(carry, mid, ys)``, where ``mid`` is a while
loop's trip count (none for a ``for_loop``); a body's inputs have the
operands' groups, its outputs ``(carry, ys)``. The checkpointed loops
(``primitives/checkpoint_loop.py``) are ``for_loop``s without ``xs`` and ``ys``.

``Params.of(eqn.params)`` reads an equation's params (a dict: rules are
called with them as keywords); ``as_params()`` gives them back for ``bind``
or a new ``Eqn``. Programs print the same: the params keep their names.

Layer: control.
"""
from __future__ import annotations

__all__ = ["CondParams", "LoopParams", "ForParams", "WhileParams", "SweepParams", "split",
           "join"]


def split(items, *sizes):
    """``items`` cut into consecutive groups of ``sizes``, and the rest."""
    out, k = [], 0
    for s in sizes:
        out.append(list(items[k:k + s]))
        k += s
    out.append(list(items[k:]))
    return out


def join(*groups):
    """The groups, side by side, as one list."""
    return [x for g in groups for x in g]


class CondParams:
    """``cond[branches] (index, *ops)``: branch ``int(index)`` maps ops to outs."""

    __slots__ = ("branches",)

    def __init__(self, branches):
        self.branches = tuple(branches)

    @classmethod
    def of(cls, params):
        return cls(params["branches"])

    def as_params(self):
        return {"branches": self.branches}

    @staticmethod
    def split_operands(args):
        """(index, ops)."""
        return args[0], list(args[1:])

    @staticmethod
    def join_operands(index, ops):
        return [index, *ops]

    def sub_aliases(self, operands, names):
        """(branch, {input position: operand name}) per branch: a branch's
        inputs are the operands, read only (``names(atoms)``: the names
        given so far, None for a literal)."""
        _, ops = self.split_operands(names(operands))
        for branch in self.branches:
            yield branch, {k: n for k, n in enumerate(ops) if n is not None}


class LoopParams:
    """What every loop shares: constants, carries, per-iteration inputs and
    outputs, and a body. Subclasses say which groups they have (``LEAD``:
    operands before the consts; ``MID``: outputs between carries and ys)."""

    __slots__ = ("body", "num_consts", "num_carry", "extra")
    LEAD = 0
    MID = 0
    PROGRAMS = ("body",)        # the params holding Programs that read the operands

    def __init__(self, body, num_consts, num_carry, **extra):
        self.body = body
        self.num_consts = num_consts
        self.num_carry = num_carry
        self.extra = extra          # the params no layout depends on (reverse, schedule...)

    @classmethod
    def of(cls, params):
        extra = {k: v for k, v in params.items() if k not in ("body", "num_consts", "num_carry")}
        return cls(params["body"], params["num_consts"], params["num_carry"], **extra)

    def as_params(self):
        """The params as a dict: the Programs first (in ``PROGRAMS`` order,
        the order their code blocks come in), then the counts, then the rest."""
        programs = dict(self.extra, body=self.body)
        params = {k: programs[k] for k in self.PROGRAMS}
        params.update(num_consts=self.num_consts, num_carry=self.num_carry)
        params.update((k, v) for k, v in self.extra.items() if k not in params)
        return params

    def replace(self, **changes):
        return type(self).of(dict(self.as_params(), **changes))

    # --- the groups ----------------------------------------------------------
    def operand_groups(self, args):
        """(lead, consts, carry, xs) of an operand list (or of anything laid
        out like it: the body's inputs, flags per operand)."""
        return split(args, self.LEAD, self.num_consts, self.num_carry)

    def join_operand_groups(self, lead, consts, carry, xs):
        return join(lead, consts, carry, xs)

    def output_groups(self, outs):
        """(carry, mid, ys) of the equation's outputs."""
        return split(outs, self.num_carry, self.MID)

    def join_output_groups(self, carry, mid, ys):
        return join(carry, mid, ys)

    def body_output_groups(self, outs):
        """(carry, ys) of the body's outputs (per iteration: kept cheap)."""
        k = self.num_carry
        return outs[:k], outs[k:]

    def sub_programs(self):
        """The Programs that read the loop's operands (a condition, then the body)."""
        return [self.body if k == "body" else self.extra[k] for k in self.PROGRAMS]

    def map_programs(self, fn):
        """The params with ``fn`` applied to each Program that reads the operands."""
        params = self.as_params()
        return self.replace(**{k: fn(params[k]) for k in self.PROGRAMS})

    @property
    def num_ys(self):
        return len(self.body.outputs) - self.num_carry

    @property
    def carry_avals(self):
        return self.operand_groups(self.body.in_avals)[2]

    def sub_aliases(self, operands, names):
        """(program, {input position: name}) per sub-program: the consts are
        read only, so they take the operands' names (``names(atoms)``: the
        names given so far, None for a literal). A condition that passes
        values on to the body (for code generation, ``WhileEmit.prepare``)
        gives the body's inputs for them their names: the condition is named
        first."""
        consts = self.operand_groups(names(operands))[1]
        aliases = {self.LEAD + k: n for k, n in enumerate(consts) if n is not None}
        before = None
        for prog in self.sub_programs():
            shared = {}
            if before is not None and len(before.outputs) > 1:
                positions = range(len(prog.inputs) - len(before.outputs) + 1, len(prog.inputs))
                shared = {k: n for k, n in zip(positions, names(before.outputs[1:]))
                          if n is not None}
            yield prog, {**aliases, **shared}
            before = prog


class ForParams(LoopParams):
    """``for_loop[body, num_consts, num_carry, reverse, length] (n, *consts, *carry, *xs)``."""

    __slots__ = ()
    LEAD = 1

    @property
    def reverse(self):
        return self.extra.get("reverse", False)

    @property
    def length(self):
        return self.extra.get("length")

    def split_operands(self, args):
        """(n, consts, carry, xs)."""
        lead, consts, carry, xs = self.operand_groups(args)
        return lead[0], consts, carry, xs

    def join_operands(self, n, consts, carry, xs=()):
        return [n, *consts, *carry, *xs]        # (per iteration: kept cheap)

    def split_body_inputs(self, ins):
        """(i, consts, carry, x_i)."""
        return self.split_operands(ins)

    def split_outputs(self, outs):
        """(carry, ys)."""
        carry, _, ys = self.output_groups(outs)
        return carry, ys

    def join_outputs(self, carry, ys=()):
        return join(carry, ys)


class WhileParams(LoopParams):
    """``while_loop[cond, body, num_consts, num_carry] (*consts, *carry)``."""

    __slots__ = ()
    MID = 1
    PROGRAMS = ("cond", "body")

    @property
    def cond(self):
        return self.extra["cond"]

    def split_operands(self, args):
        """(consts, carry)."""
        _, consts, carry, _ = self.operand_groups(args)
        return consts, carry

    def join_operands(self, consts, carry):
        return [*consts, *carry]

    split_body_inputs = split_operands

    def split_outputs(self, outs):
        """(carry, count, ys)."""
        carry, mid, ys = self.output_groups(outs)
        return carry, mid[0], ys

    def join_outputs(self, carry, count, ys=()):
        return join(carry, [count], ys)


class SweepParams(ForParams):
    """The checkpointed loops (``primitives/checkpoint_loop.py``): ``for_loop``s
    without per-iteration values, whose sweeps pass states along:

        checkpointed_loop  (n, *consts, *carry) -> (*carry)
        loop_forward       (n, *consts, *carry) -> (*carry, *last, *stored)
        loop_lin           (n, *consts, *last, *stored, *t_consts, *t_carry) -> (*t_carry)
        loop_reverse       (n, *consts, *last, *stored, *ct_carry) -> (*ct_consts, *ct_carry)

    ``last`` is the state before the last step and ``stored`` the states the
    schedule stores, stacked (one array per carry)."""

    __slots__ = ()

    @property
    def schedule(self):
        return self.extra["schedule"]

    @property
    def mask(self):
        """(consts, carries) that have tangents: ``loop_lin``, ``loop_reverse``."""
        return self.extra["mask"]

    def plain_loop(self):
        """The ``for_loop`` this loop runs as where nothing is swept in
        reverse (forward mode, generated code)."""
        return ForParams(self.body, self.num_consts, self.num_carry, reverse=False,
                         length=self.length)

    def split_forward_outputs(self, outs):
        """(carry, last, stored) of ``loop_forward``'s outputs."""
        return split(outs, self.num_carry, self.num_carry)[:3]

    def join_forward_outputs(self, carry, last, stored):
        return join(carry, last, stored)

    def split_saved(self, args):
        """(n, consts, last, stored, rest) of the operands of ``loop_lin``
        and ``loop_reverse`` (``rest``: their tangents or cotangents)."""
        n, consts, rest = split(args, 1, self.num_consts)
        return (n[0], consts) + tuple(split(rest, self.num_carry, self.num_carry))

    def join_saved(self, n, consts, last, stored, rest):
        return join([n], consts, last, stored, rest)
