"""``wengert show`` (``wengert.cli``), every mode, run on a file of functions.

What is printed is checked by what it computes, never against stored text:

* ``program`` and ``dup``: the printed program is parsed and evaluated with
  the primitives' impls; it gives the function's values at fresh inputs.
* ``jvp`` and ``vjp``: the printed code is executed (its header lists the
  names it needs); its values are the function's, its tangents and cotangents
  match a finite-difference Jacobian, and the two modes pass the dot-product
  test against each other. ``--argnums`` picks the differentiated arguments.
* names: the function's own variables are the printed ones.
* ``--graph``: the DOT file parses as a graph whose boxes are the equations of
  the program and of its derivative; an SVG is XML with the same nodes, or,
  where Graphviz's ``dot`` is missing, the CLI says so and exits with 1.
* bad input gives one message (what was wrong, what to do) and exit status
  2, errors in the user's code their file:line and 1; never a traceback.
* ``python -m wengert`` is the same command, run once as a subprocess.
"""
from __future__ import annotations

import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import wengert as wg
from wengert import cli
from wengert.backends.interpret import interpret
from wengert.frontends.source import is_static
from wengert.core.primitive import PRIMITIVES
from wengert.core.pytree import flatten, unflatten
from wengert.transforms.dup import explicit_dup

from checks import EXACT_RTOL_F64, PROGRAM_RTOL_F64, assert_close, dot_product_check, \
    fd_jacobian

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

USER_FILE = '''\
import numpy as np

W = np.array([0.5, -1.0, 2.0])


def poly(x, y):
    p = 7.0 * x
    r = 1.0 / y
    q = p * x * 5.0
    v = 2.0 * p * q + 3.0 * r
    return v


def loop(x, n):
    s = 0.0
    for i in range(n):
        if s > 1.0:
            s = s * 0.5 + np.sin(x * i)
        else:
            s = s + x * x
    return s


def layer(x, w):
    h = np.tanh(w * x + W)
    e = h * h
    return np.sum(e)


def pair(p, x):
    a, b = p
    return a * np.sum(np.sin(x)) + b


def helper(u):
    return u * np.exp(-u)


def two(x, y):
    u = helper(x) * y
    z = np.sin(x) + y
    return u, z


class Model:
    @staticmethod
    def energy(x):
        k = 0.5 * x * x
        return k + np.cos(x)


def broken(x):
    return x / undefined_name


def with_with(x):
    with open(__file__):
        return x
'''

# (function, --args or None for the default 1.0 each, the same arguments as values)
CASES = [
    ("poly", None, (1.0, 1.0)),
    ("poly", "0.7, 1.3", (0.7, 1.3)),
    ("loop", "0.3, 5", (0.3, 5)),
    ("layer", "np.linspace(-1.0, 1.0, 3), 0.8", (np.linspace(-1.0, 1.0, 3), 0.8)),
    ("pair", "(1.5, -0.5), np.array([0.1, 0.2, 0.3])", ((1.5, -0.5), np.array([0.1, 0.2, 0.3]))),
    ("two", "0.4, 2.0", (0.4, 2.0)),
    ("Model.energy", "0.9", (0.9,)),
]
# no control flow: eval_printed_program reads their programs
STRAIGHT = ["poly", "layer", "pair", "two", "Model.energy"]
IDS = [f"{c[0]}-{'default' if c[1] is None else 'args'}" for c in CASES]


@pytest.fixture(scope="module")
def user_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "models.py"
    path.write_text(USER_FILE)
    return str(path)


@pytest.fixture(scope="module")
def user_module(user_file):
    name = cli._module_name(user_file)
    spec = importlib.util.spec_from_file_location(name, user_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def user_fn(module, name):
    """``module.name``, for a dotted name too (``Model.energy``)."""
    for part in name.split("."):
        module = getattr(module, part)
    return module


def run_main(capsys, *argv):
    """``main(argv)`` in-process: (exit status, stdout, stderr)."""
    rc = cli.main(["show", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def show_args(user_file, fn, text, *rest):
    return [f"{user_file}:{fn}", *(["--args", text] if text is not None else []), *rest]


# --- reading what was printed ------------------------------------------------------
_EQN = re.compile(r"^\s*(?P<outs>\(.*\)|\S+) = (?P<prim>\w+)(\[(?P<params>.*)\])? "
                  r"\((?P<args>.*)\)$")


def eval_printed_program(text, leaves):
    """Evaluate a printed straight-line program on its input ``leaves``: each
    line ``outs = prim[params] (args)`` calls ``PRIMITIVES[prim].impl``."""
    lines = text.strip().splitlines()
    head = re.match(r"program \w+\((.*)\):$", lines[0])
    assert head, f"not a program header: {lines[0]!r}"
    names = [p.split(":")[0].strip() for p in head.group(1).split(", ")] if head.group(1) else []
    assert len(names) == len(leaves), f"inputs {names} for {len(leaves)} leaves"
    env = {"np": np, **dict(zip(names, leaves))}
    for line in lines[1:-1]:
        m = _EQN.match(line)
        assert m, f"not an equation: {line!r}"
        outs = [o.strip() for o in m.group("outs").strip("()").split(",")]
        if m.group("prim") == "env_read":           # a global, read when it runs
            module, attr = re.search(r"ref=(\w+)\.(\w+)", m.group("params")).groups()
            value = getattr(sys.modules[module], attr)
        else:
            params = eval(f"dict({m.group('params') or ''})", {"np": np})
            args = eval(f"({m.group('args')},)", env)
            value = PRIMITIVES[m.group("prim")].impl(*args, **params)
        for o, v in zip(outs, value if len(outs) > 1 else [value]):
            env[o] = v
    ret = re.match(r"\s*return \((.*)\)$", lines[-1])
    assert ret, f"not a return: {lines[-1]!r}"
    return eval(f"({ret.group(1)},)", env)


def load_printed_code(text):
    """Execute printed derivative code; the names it reads from outside are
    bound as its header comment says (``#   name = what``)."""
    namespace = {}
    for name, what in re.findall(r"^#   (\w+) = (.*)$", text, re.M):
        if what == "numpy":
            namespace[name] = np
        elif what.startswith("module "):
            namespace[name] = sys.modules[what.split()[1]]
        else:
            namespace[name] = eval(what, {"PRIMITIVES": PRIMITIVES})
    exec(compile(text, "<printed>", "exec"), namespace)
    fname = re.search(r"^def (\w+)\(", text, re.M).group(1)
    return namespace[fname]


def float_view(fn, args):
    """``fn`` as a function of the float and array leaves of ``args`` only
    (the ints stay as given), and those leaves, upcast to arrays."""
    leaves, tree = flatten(tuple(args))
    dyn = [k for k, x in enumerate(leaves) if not is_static(x)]

    def g(*xs):
        full = list(leaves)
        for k, x in zip(dyn, xs):
            full[k] = x
        return tuple(flatten(fn(*unflatten(tree, full)))[0])
    return g, [np.asarray(leaves[k], np.float64) for k in dyn]


def diff_mask(args, argnums):
    """Per float leaf: whether ``argnums`` differentiates it."""
    mask = []
    for k, a in enumerate(args):
        mask += [argnums is None or k in argnums] * sum(not is_static(x) for x in flatten(a)[0])
    return mask


def perturbed(args, rng):
    leaves, tree = flatten(tuple(args))
    return unflatten(tree, [x if is_static(x) else
                            (x + 0.1 * rng.standard_normal(np.shape(x))).astype(np.float64)
                            if np.ndim(x) else float(x + 0.1 * rng.standard_normal())
                            for x in leaves])


# --- program and dup: the printed program computes the function ------------------------
@pytest.mark.parametrize("mode", ["program", "dup"])
@pytest.mark.parametrize("case", [c for c in CASES if c[0] in STRAIGHT],
                         ids=[i for c, i in zip(CASES, IDS) if c[0] in STRAIGHT])
def test_printed_program_computes_the_function(capsys, user_file, user_module, mode, case):
    fn_name, text, args = case
    rc, out, err = run_main(capsys, *show_args(user_file, fn_name, text, "--mode", mode))
    assert rc == 0, err
    fn = user_fn(user_module, fn_name)
    rng = np.random.default_rng(0)
    for at in (args, perturbed(args, rng), perturbed(args, rng)):
        g, xs = float_view(fn, at)
        assert_close(eval_printed_program(out, xs), g(*xs), EXACT_RTOL_F64, what=mode)
    if mode == "dup":        # every variable used twice is split: no name read twice
        reads = [a for line in out.splitlines()[1:-1]
                 for a in re.findall(r"\b[a-z]\w*\b", _EQN.match(line).group("args"))]
        assert len(reads) == len(set(reads)), out


@pytest.mark.parametrize("mode", ["program", "dup"])
def test_program_with_control_flow_is_the_api_program(capsys, user_file, user_module, mode):
    """A loop's program (not parsed here) is the one ``make_program`` gives,
    whose values are checked against the function."""
    rc, out, err = run_main(capsys, *show_args(user_file, "loop", "0.3, 5", "--mode", mode))
    assert rc == 0, err
    prog = wg.make_program(user_module.loop, 0.3, 5, engine="source")
    assert out == str(prog if mode == "program" else explicit_dup(prog)) + "\n"
    assert "for_loop" in out and "cond" in out
    assert_close(interpret(prog, 0.3), [user_module.loop(0.3, 5)], EXACT_RTOL_F64)


@pytest.mark.parametrize("fn_name", ["poly", "layer", "two"])
def test_printed_names_are_the_users(capsys, user_file, user_module, fn_name):
    fn = user_fn(user_module, fn_name)
    local = set(fn.__code__.co_varnames)           # parameters and local variables
    rc, out, _ = run_main(capsys, f"{user_file}:{fn_name}", "--args", "0.5, 1.5")
    assert rc == 0
    printed = set(re.findall(r"\b(\w+)(?=: f64)", out.splitlines()[0]))
    printed |= {o.strip() for line in out.splitlines()[1:-1]
                for o in _EQN.match(line).group("outs").strip("()").split(",")}
    assert local <= printed, f"{sorted(local - printed)} not printed:\n{out}"
    rc, out, _ = run_main(capsys, f"{user_file}:{fn_name}", "--args", "0.5, 1.5", "--mode", "jvp")
    params = list(inspect.signature(fn).parameters)
    def_line = re.search(r"^def \w+\((.*)\):$", out, re.M).group(1)
    assert def_line.split(", ") == params + [f"d_{p}" for p in params]
    assigned = set(re.findall(r"^\s+(\w+) = ", out, re.M))
    # each tangent the code names is a local's (``d_<name>``); a tangent whose sign moved
    # into the sum that reads it (``dr = -(r / y) dy``: ``d_v = v11 - v13``) has no
    # statement of its own, as in the API's code (simplified with ``copies``)
    tangents = {a for a in assigned if a.startswith("d_")}
    assert tangents and tangents <= {f"d_{n}" for n in local - set(params)}, out


# --- jvp and vjp: the printed code's derivatives ----------------------------------------
ARGNUMS = [None, (0,), (1,)]


@pytest.mark.parametrize("argnums", ARGNUMS, ids=["all", "0", "1"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_derivative_code_matches_finite_differences(capsys, user_file, user_module, case,
                                                    argnums):
    fn_name, text, args = case
    if argnums == (1,) and fn_name in ("loop", "Model.energy"):
        argnums = (0,)               # loop's argument 1 is an int (tested below); energy has one
    fn = user_fn(user_module, fn_name)
    extra = [] if argnums is None else ["--argnums", ",".join(map(str, argnums))]
    codes = {}
    for mode in ("jvp", "vjp"):
        rc, out, err = run_main(capsys, *show_args(user_file, fn_name, text, "--mode", mode,
                                                   *extra))
        assert rc == 0, err
        codes[mode] = load_printed_code(out)
    g, xs = float_view(fn, args)
    mask = diff_mask(args, argnums)
    outs = g(*xs)
    n_out = len(outs)
    jac = fd_jacobian(g, xs)                              # all outputs x all float inputs
    sizes = [x.size for x in xs]
    cols = np.repeat(mask, sizes)
    rng = np.random.default_rng(1)
    tangents = [rng.standard_normal(x.shape) for x, m in zip(xs, mask) if m]
    cts = [rng.standard_normal(np.shape(o)) for o in outs]

    jvp_out = codes["jvp"](*xs, *tangents)
    assert_close(jvp_out[:n_out], outs, EXACT_RTOL_F64, what="jvp values")
    t_flat = np.concatenate([np.ravel(t) for t in tangents])
    want_dot = np.split(jac[:, cols] @ t_flat, np.cumsum([np.size(o) for o in outs])[:-1])
    got_dot = [np.ravel(np.broadcast_to(d, np.shape(o))) for d, o in zip(jvp_out[n_out:], outs)]
    assert_close(got_dot, want_dot, PROGRAM_RTOL_F64, what="jvp tangents")

    vjp_out = codes["vjp"](*xs, *cts)
    assert_close(vjp_out[:n_out], outs, EXACT_RTOL_F64, what="vjp values")
    assert len(vjp_out) == n_out + sum(mask), "one cotangent per differentiated input"
    ct_flat = np.concatenate([np.ravel(c) for c in cts])
    want_bar = np.split(jac[:, cols].T @ ct_flat,
                        np.cumsum([x.size for x, m in zip(xs, mask) if m])[:-1])
    got_bar = [np.ravel(np.broadcast_to(c, t.shape)) for c, t in zip(vjp_out[n_out:], tangents)]
    assert_close(got_bar, want_bar, PROGRAM_RTOL_F64, what="vjp cotangents")
    dot_product_check(cts, got_dot, got_bar, [np.ravel(t) for t in tangents])


def test_vjp_names_its_cotangents_after_the_users_variables(capsys, user_file):
    rc, out, _ = run_main(capsys, f"{user_file}:poly", "--mode", "vjp")
    assert rc == 0
    def_line = re.search(r"^def \w+\((.*)\):$", out, re.M).group(1)
    assert def_line == "x, y, ct_v"              # poly returns its variable v


# --- --graph ---------------------------------------------------------------------
def parse_dot(text):
    """(clusters, edges) of the DOT ``to_dot`` writes: per top-level cluster
    the labels of its own boxes in order, and every node declared there;
    edges as (from, to). Fails on anything that is not a well-formed graph."""
    lines = text.strip().splitlines()
    assert lines[0] == "digraph wengert {" and lines[-1] == "}", text[:200]
    depth, clusters, nodes, edges = 0, [], {}, []
    for line in lines[1:-1]:
        s = line.strip()
        if s.startswith("subgraph cluster_"):
            depth += 1
            if depth == 1:
                clusters.append([])
        elif s == "}":
            depth -= 1
            assert depth >= 0, "unbalanced braces"
        elif m := re.match(r'^(\w+) -> (\w+);$', s):
            edges.append(m.groups())
        elif m := re.match(r'^(\w+) \[label="((?:[^"\\]|\\.)*)", shape=(\w+)', s):
            nid, label, shape = m.groups()
            assert nid not in nodes, f"node {nid} declared twice"
            nodes[nid] = label
            if shape == "box" and depth == 1:
                clusters[-1].append(label.split(" [")[0])
        else:
            assert re.match(r"^(rankdir|node|label)", s), f"unexpected DOT line {s!r}"
    assert depth == 0, "unbalanced braces"
    for a, b in edges:
        assert a in nodes and b in nodes, f"edge {a} -> {b} to an undeclared node"
    return clusters, nodes, edges


def _expected_programs(fn, args, mode):
    prog = wg.make_program(fn, *args, engine="source")
    if mode == "program":
        return [prog]
    if mode == "dup":
        return [explicit_dup(prog)]
    return [prog, cli._derivative(prog, mode, None)]


@pytest.mark.parametrize("mode", ["program", "dup", "jvp", "vjp"])
@pytest.mark.parametrize("fn_name,text,args", [CASES[1], CASES[2]], ids=["poly", "loop"])
def test_graph_dot_has_the_programs_equations(capsys, tmp_path, user_file, user_module, mode,
                                              fn_name, text, args):
    path = tmp_path / "g.dot"
    rc, out, err = run_main(capsys, *show_args(user_file, fn_name, text, "--mode", mode,
                                               "--graph", str(path)))
    assert rc == 0, err
    assert out.splitlines()[-1] == f"# wrote {path}"
    clusters, nodes, edges = parse_dot(path.read_text())
    progs = _expected_programs(user_fn(user_module, fn_name), args, mode)
    assert clusters == [[e.prim.name for e in p.eqns] for p in progs]
    inputs = sorted(label.split(":")[0] for label in nodes.values() if ": f64" in label)
    assert {"x"} <= set(inputs)                   # the user's parameter name


@pytest.mark.parametrize("dot_on_path", [True, False], ids=["machine-PATH", "no-dot"])
def test_graph_svg_or_the_message_without_graphviz(capsys, tmp_path, monkeypatch, user_file,
                                                   user_module, dot_on_path):
    if not dot_on_path:
        empty = tmp_path / "bin"
        empty.mkdir()
        monkeypatch.setenv("PATH", str(empty))
    svg = tmp_path / "g.svg"
    rc, out, err = run_main(capsys, f"{user_file}:poly", "--mode", "vjp", "--graph", str(svg))
    clusters, nodes, _ = parse_dot((tmp_path / "g.dot").read_text())   # always written
    progs = _expected_programs(user_module.poly, (1.0, 1.0), "vjp")
    assert clusters == [[e.prim.name for e in p.eqns] for p in progs]
    assert load_printed_code(out)(0.5, 2.0, 1.0)[0] == user_module.poly(0.5, 2.0)
    if shutil.which("dot") is None:
        assert rc == 1
        assert "Graphviz's dot is not on PATH" in err and "install Graphviz" in err
        assert f"--graph {tmp_path / 'g.dot'}" in err and "Traceback" not in err
        assert not svg.exists()
    else:
        assert rc == 0, err
        root = ET.parse(svg).getroot()
        titles = {t.text for t in root.iter("{http://www.w3.org/2000/svg}title")}
        assert set(nodes) <= titles


# --- bad input and errors in the user's code ---------------------------------------
BAD = [
    # (argv after "show", what the message must say)
    (["{file}"], ["expected FILE.py:FUNC", "after a colon"]),
    (["{dir}/missing.py:f"], ["no file", "give the path of a Python file"]),
    (["{dir}:f"], ["is not a Python file"]),
    (["{file}:nope"], ["has no function 'nope'", "poly", "layer"]),
    (["{file}:W"], ["is a ndarray, not a function", "poly"]),
    (["{file}:poly", "--args", "1.0, ("], ["is not a Python expression", "e.g. --args"]),
    (["{file}:poly", "--args", "foo + 1"], ["raised NameError", "np (NumPy)"]),
    (["{file}:poly", "--args", "1.0"], ["gives 1 argument(s) to poly(x, y)",
                                        "one value per parameter"]),
    (["{file}:poly", "--args", "1.0, 2.0, 3.0"], ["gives 3 argument(s)"]),
    (["{file}:poly", "--mode", "vjp", "--argnums", "2"], ["--argnums 2 is out of range",
                                                         "positions 0 to 1"]),
    (["{file}:poly", "--mode", "jvp", "--argnums", "-1"], ["--argnums -1 is out of range"]),
    (["{file}:poly", "--mode", "vjp", "--argnums", "a"], ["comma-separated positions"]),
    (["{file}:loop", "--args", "0.3, 5", "--mode", "vjp", "--argnums", "1"],
     ["argument 1 (n = 5)", "integers have no derivative", "leave it out of --argnums"]),
    (["{file}:poly", "--argnums", "0"], ["--argnums applies to --mode jvp and vjp"]),
    (["{file}:poly", "--graph", "{dir}/g.png"], ["ending in .dot or .svg"]),
    (["{file}:poly", "--graph", "{dir}/no/such/g.dot"], ["cannot write", "existing, writable"]),
]


@pytest.mark.parametrize("argv,says", BAD, ids=[f"bad{k}" for k in range(len(BAD))])
def test_bad_input_gives_a_message_and_status_2(capsys, tmp_path, user_file, argv, says):
    argv = [a.format(file=user_file, dir=tmp_path) for a in argv]
    rc, out, err = run_main(capsys, *argv)
    assert rc == 2
    assert err.startswith("wengert show: ") and err.count("\n") == 1, err
    for phrase in says:
        assert phrase in err, f"{phrase!r} not in {err!r}"
    assert "Traceback" not in out + err


def _line_of(text, needle):
    return next(k for k, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize("kind", ["runtime", "unsupported", "import", "syntax"])
def test_errors_in_the_users_code_name_its_line(capsys, tmp_path, user_file, kind):
    target, needle, says = {
        "runtime": (f"{user_file}:broken", "undefined_name", "NameError"),
        "unsupported": (f"{user_file}:with_with", "with open", "UnsupportedSyntax"),
    }.get(kind, (None, None, None))
    if kind in ("import", "syntax"):
        text = ("import numpy as np\nX = np.ones(2) @ np.ones(3)\ndef f(x):\n    return x\n"
                if kind == "import" else "def f(x):\n    return x +\n")
        path = tmp_path / f"{kind}_file.py"
        path.write_text(text)
        target = f"{path}:f"
        user = str(path)
        needle, says = ("@", "ValueError") if kind == "import" else ("x +", "SyntaxError")
    else:
        user = user_file
    rc, out, err = run_main(capsys, target)
    assert rc == 1, err
    assert err.startswith("wengert show: ") and says in err, err
    assert f"{user}:{_line_of(open(user).read(), needle)}" in err, err
    assert "Traceback" not in out + err


def test_the_files_own_imports_and_class_methods(capsys, tmp_path):
    """As ``python FILE.py`` would, the file imports modules beside it (and
    the path is left as it was); ``Class.method`` names a static method."""
    (tmp_path / "sibling_helpers.py").write_text("import numpy as np\n"
                                                 "def act(u):\n    return np.tanh(u)\n")
    (tmp_path / "main_model.py").write_text(
        "from sibling_helpers import act\n\n"
        "class Net:\n    @staticmethod\n    def f(x):\n        return act(x) * x\n")
    before = list(sys.path)
    rc, out, err = run_main(capsys, f"{tmp_path}/main_model.py:Net.f", "--args", "0.3",
                            "--mode", "jvp")
    assert rc == 0, err
    assert sys.path == before
    value, tangent = load_printed_code(out)(0.3, 1.0)
    assert_close(value, np.tanh(0.3) * 0.3, EXACT_RTOL_F64)
    assert_close(tangent, (1.0 - np.tanh(0.3) ** 2) * 0.3 + np.tanh(0.3), PROGRAM_RTOL_F64)


def test_traceback_flag_reraises(user_file):
    with pytest.raises(cli.UserCodeError) as info:
        cli.main(["show", f"{user_file}:broken", "--traceback"])
    assert isinstance(info.value.__cause__, NameError)


# --- python -m wengert is the wengert command ------------------------------------------
def test_python_dash_m_wengert_is_the_command(capsys, user_file, user_module):
    argv = ["show", f"{user_file}:layer", "--args", "np.linspace(-1.0, 1.0, 3), 0.8",
            "--mode", "vjp"]
    env = dict(os.environ, PYTHONPATH=REPO)
    done = subprocess.run([sys.executable, "-m", "wengert", *argv], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert cli.main(argv) == 0
    assert done.stdout == capsys.readouterr().out
    x = np.linspace(-1.0, 1.0, 3)
    got = load_printed_code(done.stdout)(x, 0.8, 1.0)
    g, xs = float_view(user_module.layer, (x, 0.8))
    want = fd_jacobian(g, xs)[0]
    assert_close(np.concatenate([np.ravel(c) for c in got[1:]]), want, PROGRAM_RTOL_F64)
    bad = subprocess.run([sys.executable, "-m", "wengert", "show", f"{user_file}:nope"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith("wengert show: ") and "Traceback" not in bad.stderr


# --- wengert explain (issue 27) ----------------------------------------------------------
def test_explain_prints_the_code_the_checks_and_the_cost(capsys, user_file):
    """``wengert explain FILE:FUNC --args ...``: ``wg.explain``'s report; exit 0 when
    every gradient matches its finite differences."""
    rc = cli.main(["explain", f"{user_file}:poly", "--args", "0.5, 1.5"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "def poly_grad(x, y):" in out and "# grad of: " in out and "(models.py:" in out
    assert re.search(r"^   x +grad\.u = .* ok$", out, re.M), out
    assert re.search(r"^   y +grad\.u = .* ok$", out, re.M), out
    assert "inputs the output does not depend on: none" in out and "x the function's" in out
    rc = cli.main(["explain", f"{user_file}:poly", "--args", "0.5, 1.5", "--argnums", "1"])
    out, _ = capsys.readouterr()
    assert rc == 0 and re.search(r"^   y +grad", out, re.M) and not re.search(r"^   x +grad",
                                                                            out, re.M)


def test_explain_reports_bad_input_as_show_does(capsys, user_file):
    rc = cli.main(["explain", f"{user_file}:nothing_here"])
    _, err = capsys.readouterr()
    assert rc == 2 and err.startswith("wengert explain: ") and "has no function" in err
    rc = cli.main(["explain", f"{user_file}:poly", "--argnums", "5", "--args", "0.5, 1.5"])
    _, err = capsys.readouterr()
    assert rc == 2 and "out of range" in err
