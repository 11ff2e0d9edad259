"""The demo (``wengert/demo.py``): the seed articles' examples, reproduced
(seeds 000, 001, 004).
"""
import numpy as np
import pytest

import wengert as wg
from wengert.backends.interpret import interpret
from wengert.core.ir import Var, verify
from wengert.transforms.dup import explicit_dup
from wengert.transforms.jvp import jvp_program
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program
from wengert.demo import seed000, seed004, two_outputs, trace_of_product


def test_seed004_values_and_gradient():
    z, (gx, gy) = wg.value_and_grad(seed004, argnums=(0, 1))(0.5, 4.2)
    # the article's printed values (seed 004), to the last digit it prints
    assert z == pytest.approx(2.579425538604203, rel=1e-15)
    assert gx == pytest.approx(5.077582561890373, rel=1e-15)
    assert gy == pytest.approx(0.5, rel=1e-15)


def test_seed004_one_tape_two_outputs():
    x = 0.5
    calls = []

    def counted(x):
        calls.append(1)
        return two_outputs(x)

    (z, v), pullback = wg.vjp(counted, x)
    dz, = pullback((1.0, 0.0))
    dv, = pullback((0.0, 1.0))
    assert len(calls) == 1          # the function ran once; both sweeps reuse its tape
    assert dz == pytest.approx(2 + np.cos(x), rel=1e-14)
    assert dv == pytest.approx(4 - np.sin(x), rel=1e-14)


def test_seed001_trace_of_product():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 5)), rng.standard_normal((5, 3))
    ga, gb = wg.grad(trace_of_product, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, b.T, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(gb, a.T, rtol=1e-14, atol=1e-14)


def _seed000_prims(prog):
    return [e.prim.name for e in prog.eqns]


def test_seed000_anf_shape():
    prog = verify(wg.make_program(seed000, 2.0, 3.0))
    # p = mul(7,x); r = div(1,y); i1 = mul(p,x); q = mul(i1,5); i2 = mul(2,p);
    # i3 = mul(i2,q); i4 = mul(3,r); v = add(i3,i4)
    assert _seed000_prims(prog) == ["mul", "div", "mul", "mul", "mul", "mul", "mul", "add"]


def test_seed000_explicit_dup_uses_each_variable_once():
    prog = verify(explicit_dup(wg.make_program(seed000, 2.0, 3.0)))
    uses = {}
    for e in prog.eqns:
        for x in e.inputs:
            if isinstance(x, Var):
                uses[id(x)] = uses.get(id(x), 0) + 1
    assert max(uses.values()) == 1
    # x and p are each used twice in the seed, so exactly two dups appear
    assert _seed000_prims(prog).count("dup") == 2
    assert interpret(prog, 2.0, 3.0)[0] == seed000(2.0, 3.0)


def test_seed000_forward_program_one_tangent_line_per_line():
    prog = wg.make_program(seed000, 2.0, 3.0)
    fwd = verify(simplify(jvp_program(prog)))
    # the seed's forward listing: constants contribute no tangent terms
    v, dv = interpret(fwd, 2.0, 3.0, 1.0, 0.0)
    assert v == seed000(2.0, 3.0)
    # v = 2 (7x)(35x^2) + 3/y = 490 x^3 + 3/y: dv/dx = 1470 x^2, dv/dy = -3/y^2
    assert dv == pytest.approx(1470 * 4.0)
    assert interpret(fwd, 2.0, 3.0, 0.0, 1.0)[1] == pytest.approx(-3 / 9.0)
    # no tangent of a literal is formed: every mul by a constant appears once
    # for the primal and once for its tangent, never as a sum with a zero
    assert "zeros" not in _seed000_prims(fwd)


def test_seed000_reverse_program_dup_add_duality():
    prog = explicit_dup(wg.make_program(seed000, 2.0, 3.0))
    rev = verify(simplify(vjp_program(prog)))
    names = _seed000_prims(rev)
    n_fwd = len(prog.eqns)
    backward = names[n_fwd:]
    # each primal dup becomes an add_any, each primal add a dup of the cotangent
    assert backward.count("add_any") == _seed000_prims(prog).count("dup")
    assert backward.count("dup") >= _seed000_prims(prog).count("add")
    v, gx, gy = interpret(rev, 2.0, 3.0, 1.0)
    assert v == seed000(2.0, 3.0)
    assert gx == pytest.approx(1470 * 4.0)
    assert gy == pytest.approx(-3 / 9.0)


def test_demo_runs_and_every_value_matches(capsys):
    from wengert import demo
    demo.FAILURES.clear()
    demo.main()
    out = capsys.readouterr().out
    assert "program seed000(x: f64[], y: f64[]):" in out
    assert "MISMATCH" not in out
    assert demo.FAILURES == []


def _demo_commands():
    """The ``wengert show`` commands of the Makefile's ``demo`` target (``make demo``, the
    README's main job), as argument lists."""
    import os
    import re
    import shlex
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "Makefile")) as fh:
        target = fh.read().split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    cmds = [shlex.split(line.split("/wengert ", 1)[1]) for line in target.splitlines()
            if re.match(r"\s+\$\(BIN\)/wengert show ", line)]
    return root, cmds


def test_the_demo_commands_run_and_print_derivative_code(tmp_path):
    """Every ``wengert show`` command of ``make demo`` runs as a user runs it (the file loaded
    as ``python FILE.py`` would load it: demo.py once imported its helpers relatively, and the
    command failed), printing the Program or the derivative code; the printed vjp of seed 000
    computes its gradient."""
    import os
    import subprocess
    import sys
    root, cmds = _demo_commands()
    assert len(cmds) >= 3
    env = dict(os.environ, PYTHONPATH=root)
    outs = []
    for argv in cmds:
        argv = [a if not a.endswith(".dot") else str(tmp_path / a) for a in argv]
        done = subprocess.run([sys.executable, "-m", "wengert", *argv], cwd=root, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (argv, done.stderr)
        outs.append(done.stdout)
    vjp_text = next(o for o, a in zip(outs, cmds) if "seed000" in a[1] and "vjp" in a)
    ns = {"np": np}
    exec(vjp_text, ns)
    fn = next(v for k, v in ns.items() if k.startswith("seed000") and callable(v))
    got = fn(1.5, 2.0, 1.0)[1:]
    want = wg.grad(seed000, argnums=(0, 1))(1.5, 2.0)
    np.testing.assert_allclose(got, want, rtol=1e-13)
