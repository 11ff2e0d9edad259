"""Checkpointing: recompute in the reverse sweep instead of storing. This
module holds the checkpointed region; the checkpointed loops, the same idea
over ``fori_loop``, are in ``checkpoint_loop``.

    outs    = checkpoint[body] (*args)
    t_outs  = checkpoint_lin[body, mask] (*args, *t_args)
        ``wg.checkpoint(fun)``. Under linearize for reverse mode the residuals
        of a ``checkpoint`` are its operands only: its linear part is
        ``checkpoint_lin``, linear in ``t_args``, whose transpose linearizes
        ``body`` again from ``args`` in the reverse sweep and transposes that.

Forward mode (``jvp``, and ``linearize`` outside reverse mode: ``jacfwd``)
has no reverse sweep to save memory for: a ``checkpoint`` differentiates as
its body. ``checkpoint_lin`` is differentiated, when a higher-order
derivative reaches it (``hessian``: forward over reverse), by running its
impl on the jvp trace's values (``BY_IMPL``). Each mode is its own rule on
the row: ``jvp`` (forward), ``linearize`` (forward-mode linearize: jacfwd,
through the impl) and ``linearize_for_vjp`` (linearize for reverse mode).
A region with effects is refused (``_refuse_effects``, which the checkpointed
loops share): recomputing it would repeat them.

Layer: control.
"""
from __future__ import annotations

from ..core.primitive import BY_IMPL, NOT_LINEAR, Primitive, Zero, instantiate, is_float, register
from ..core.trace import bind, eval_program
from ..core.errors import UnsupportedSyntax
from ..core.ir import aval_of, has_effect
from .checkpoint_emit import CheckpointEmit, ThroughImplEmit
from ..core.subprograms import jvp_flat, jvp_program, vjp_flat
from ..core.primitive import DENSE

__all__ = ["checkpoint_p", "checkpoint_lin_p"]


# --- checkpoint --------------------------------------------------------
def checkpoint_impl(*args, body):
    return tuple(eval_program(body, args))


def checkpoint_aval(*avals, body):
    return tuple(body.out_avals)


def refuse_effects(body, what):
    """Reverse mode recomputes a checkpointed body: a call with an effect in
    it (a random draw) would be made again and give other values."""
    if has_effect(body):
        raise UnsupportedSyntax(
            f"{what} makes a call with an effect (a random draw, I/O, a custom-rule function "
            "whose body runs on plain values) that reverse mode would make again when it "
            "recomputes the region, drawing other numbers: make the call "
            "outside the checkpointed region and pass its result in", construct="effect in "
            "a checkpointed region")


def _checkpoint_mask(primals, tangents):
    return [not isinstance(t, Zero) and is_float(aval_of(p)) for p, t in zip(primals, tangents)]


def checkpoint_jvp(primals, tangents, body):
    mask = _checkpoint_mask(primals, tangents)
    nz = [t for t, m in zip(tangents, mask) if m]
    n_out = len(body.outputs)
    out_float = [is_float(a) for a in body.out_avals]
    # forward mode: one checkpoint of the jvp'd body (reverse over it still recomputes)
    res = bind(checkpoint_p, *primals, *nz, body=jvp_program(body, mask))
    t_out = [t if f else Zero(a) for t, f, a in zip(res[n_out:], out_float, body.out_avals)]
    return tuple(res[:n_out]), tuple(t_out)


def checkpoint_linearize_for_vjp(primals, tangents, body):
    """Linearize for reverse mode: the primal runs now and keeps nothing; the
    linear part reads the operands only. (Linearize for forward mode, jacfwd,
    has no reverse sweep to save memory for: it runs the body, ``BY_IMPL``.)"""
    mask = _checkpoint_mask(primals, tangents)
    nz = [t for t, m in zip(tangents, mask) if m]
    out_float = [is_float(a) for a in body.out_avals]
    refuse_effects(body, "wg.checkpoint")
    out = bind(checkpoint_p, *primals, body=body)
    lin = iter(bind(checkpoint_lin_p, *primals, *nz, body=body, mask=tuple(mask)))
    return tuple(out), tuple(next(lin) if f else Zero(a) for f, a in zip(out_float, body.out_avals))


def checkpoint_sparsity(an, ops, outs, body):
    """The body's: a checkpoint changes how reverse mode stores, not what is computed."""
    return tuple(an.run(body, ops))


checkpoint_p = register(Primitive("checkpoint", nargs=None, impl=checkpoint_impl,
                                  jvp=checkpoint_jvp, linearize=BY_IMPL,
                                  linearize_for_vjp=checkpoint_linearize_for_vjp,
                                  transpose=NOT_LINEAR, abstract_eval=checkpoint_aval,
                                  multiple_results=True, emit=CheckpointEmit(), complex_ok=True,
                                  sparsity=checkpoint_sparsity))


# --- checkpoint_lin ----------------------------------------------------
def checkpoint_lin_impl(*args, body, mask):
    k = len(body.inputs)
    primals, nz = args[:k], iter(args[k:])
    tangents = [next(nz) if m else Zero(a) for m, a in zip(mask, body.in_avals)]
    _, dots = jvp_flat(lambda *xs: eval_program(body, xs), primals, tangents)
    return tuple(instantiate(d) for d, a in zip(dots, body.out_avals) if is_float(a))


def checkpoint_lin_aval(*avals, body, mask):
    return tuple(a for a in body.out_avals if is_float(a))


def checkpoint_lin_transpose(cts, *args, body, mask):
    """The reverse sweep of a checkpoint: linearize ``body`` again at its
    operands (recomputing its residuals now), then transpose."""
    k = len(body.inputs)
    _, _, pullback = vjp_flat(lambda *xs: eval_program(body, xs), list(args[:k]), list(mask))
    ct_it = iter(cts)
    return (None,) * k + tuple(pullback(
        [next(ct_it) if is_float(a) else Zero(a) for a in body.out_avals]))


checkpoint_lin_p = register(Primitive(
    "checkpoint_lin", nargs=None, impl=checkpoint_lin_impl,
    jvp=BY_IMPL, transpose=checkpoint_lin_transpose,
    abstract_eval=checkpoint_lin_aval, multiple_results=True, emit=ThroughImplEmit(),
    complex_ok=True,
    sparsity=DENSE))
