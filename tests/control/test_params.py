"""The control-flow layouts (``wengert/control/params.py``): split and join
are inverse, and the layouts are those of the equations staging builds (the
operand groups line up with the body's input groups).
"""
import numpy as np
import pytest

import wengert as wg
from wengert.core.ir import Program, sub_programs
from wengert.control.params import CondParams, ForParams, SweepParams, WhileParams

PARAM_TYPES = {"for": ForParams, "while": WhileParams, "sweep": SweepParams}
SIZES = [(0, 0), (0, 2), (3, 1), (2, 0)]


@pytest.mark.parametrize("kind", sorted(PARAM_TYPES))
@pytest.mark.parametrize("nc,nk", SIZES, ids=[f"c{c}k{k}" for c, k in SIZES])
@pytest.mark.parametrize("nx", [0, 2])
def test_split_and_join_are_inverse(kind, nc, nk, nx):
    ptype = PARAM_TYPES[kind]
    p = ptype(None, nc, nk)
    lead = [f"n{k}" for k in range(ptype.LEAD)]
    groups = (lead, [f"c{k}" for k in range(nc)], [f"k{k}" for k in range(nk)],
              [f"x{k}" for k in range(nx)])
    flat = p.join_operand_groups(*groups)
    assert flat == [x for g in groups for x in g]
    assert tuple(p.operand_groups(flat)) == groups
    outs = ([f"o{k}" for k in range(nk)], [f"m{k}" for k in range(ptype.MID)],
            [f"y{k}" for k in range(nx)])
    assert tuple(p.output_groups(p.join_output_groups(*outs))) == outs
    if kind == "while":
        consts, carry = p.split_operands(flat[:nc + nk])
        assert (consts, carry) == (groups[1], groups[2])
        assert p.split_outputs(p.join_outputs(outs[0], "count", outs[2])) == (
            outs[0], "count", outs[2])
    else:
        assert p.split_operands(flat) == ("n0",) + groups[1:]
        assert p.split_outputs(p.join_outputs(outs[0], outs[2])) == (outs[0], outs[2])


def test_cond_layout():
    assert CondParams.split_operands(["i", "a", "b"]) == ("i", ["a", "b"])
    assert CondParams.join_operands("i", ["a", "b"]) == ["i", "a", "b"]


def _loops(prog):
    for eqn in prog.eqns:
        if eqn.prim.name in ("for_loop", "while_loop"):
            yield eqn
        for sub in sub_programs(eqn):
            yield from _loops(sub)


def _with_loops(x, a):
    s = 0.0
    for i in range(3):                       # a for_loop over xs
        s = s + np.sin(x[i]) * a
    k = 0
    while s < 10.0 and k < 5:                # a while_loop
        s = s * 2.0 + a
        k += 1
    return s


@pytest.mark.parametrize("transform", ["program", "vjp"])
def test_layouts_are_those_of_staged_equations(transform):
    x, a = np.array([0.3, 0.7, 1.1]), 1.5
    prog = wg.make_program(_with_loops, x, a, engine="source")
    if transform == "vjp":
        from wengert.transforms.vjp import vjp_program
        prog = vjp_program(prog)
    loops = list(_loops(prog))
    assert {e.prim.name for e in loops} == {"for_loop", "while_loop"}
    for eqn in loops:
        ptype = ForParams if eqn.prim.name == "for_loop" else WhileParams
        p = ptype.of(eqn.params)
        assert p.as_params() == dict(eqn.params)
        lead, consts, carry, xs = p.operand_groups([v.aval for v in eqn.inputs])
        b_lead, b_consts, b_carry, b_xs = p.operand_groups(p.body.in_avals)
        assert len(lead) == len(b_lead) == ptype.LEAD
        assert [c.shape for c in consts] == [c.shape for c in b_consts]
        assert [c.shape for c in carry] == [c.shape for c in b_carry]
        assert [x.shape[1:] for x in xs] == [x.shape for x in b_xs]
        o_carry, mid, ys = p.output_groups([v.aval for v in eqn.outputs])
        c_out, y_out = p.body_output_groups(p.body.out_avals)
        assert [c.shape for c in o_carry] == [c.shape for c in c_out]
        assert len(mid) == ptype.MID and [y.shape[1:] for y in ys] == [y.shape for y in y_out]
        assert all(isinstance(q, Program) for q in p.sub_programs())


def _cube_root(a):
    y = a
    while np.abs(y * y * y - a) >= 1e-12:
        y = y - (y * y * y - a) / (3.0 * y * y)
    return y


def _whiles(prog):
    return [e for e in _loops(prog) if e.prim.name == "while_loop"]


@pytest.mark.parametrize("transform", ["program", "jvp", "vjp"])
def test_code_generation_prepares_programs_verify_accepts(transform):
    """The while loop's body reads what its condition computed as inputs of
    its own (the condition returns them): a Program ``verify`` accepts, whose
    code gives the interpreter's values."""
    from wengert.backends.interpret import interpret
    from wengert.api.backend import python_function
    from wengert.lower import share_condition_values
    from wengert.core.ir import verify
    from wengert.transforms.jvp import jvp_program
    from wengert.transforms.vjp import vjp_program
    prog = wg.make_program(_cube_root, 2.0, engine="source")
    prog = {"program": lambda p: p, "jvp": lambda p: jvp_program(p, [True]),
            "vjp": vjp_program}[transform](prog)
    shared = verify(share_condition_values(prog))
    before, after = _whiles(prog)[0], _whiles(shared)[0]
    extra = len(WhileParams.of(after.params).cond.outputs) - 1
    assert extra >= 1
    assert len(after.params["body"].inputs) == len(before.params["body"].inputs) + extra
    assert len(after.params["body"].eqns) < len(before.params["body"].eqns)
    fn = python_function(prog)
    for a in (2.0, 27.0, 0.5):
        args = [a] + [1.0] * (len(prog.inputs) - 1)
        assert [np.asarray(v).tolist() for v in fn(*args)] == \
            [np.asarray(v).tolist() for v in interpret(prog, *args)]
