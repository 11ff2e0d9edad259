"""Where an equation comes from (``wengert/core/where.py``, ``Eqn.where``; issue 27).

The source frontend records each equation with the user's line that made it; the
transforms record the tangent and cotangent equations of an equation under its line; the
code writer heads each block of a reverse sweep (and of forward-mode code) with that
line, and ``line_map`` reads the headings back. Printed Programs do not show it.
"""
import os
import textwrap

import numpy as np
import pytest

import wengert as wg
from wengert.api.source import source_program
from wengert.core.ir import sub_programs
from wengert.core.where import heading, line_map, statement
from wengert.transforms.jvp import jvp_program
from wengert.transforms.simplify import simplify
from wengert.transforms.vjp import vjp_program

SOURCE = '''\
import numpy as np


def f(x, n):
    s = 0.0
    for i in range(n):
        if x[i] > 0:
            s = s + (x[i]
                     * x[i])
        else:
            s = s - np.sin(x[i])
    return s
'''


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    import importlib.util
    path = tmp_path_factory.mktemp("where") / "wheremod.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("wheremod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _wheres(prog):
    out = []
    for e in prog.eqns:
        out.append((e.prim.name, e.where))
        for sub in sub_programs(e):
            out += _wheres(sub)
    return out


X = np.array([0.5, -1.0, 2.0])


def test_the_source_frontend_records_each_line(module):
    prog = source_program(module.f, (X, 3))[0]
    found = _wheres(prog)
    lines = {name: w[1] for name, w in found}
    assert lines["for_loop"] == 6 and lines["cond"] == 7 and lines["sin"] == 11
    assert lines["add"] in (8, 9)            # the statement spans two lines
    assert all(w is not None and os.path.basename(w[0]) == "wheremod.py" for _, w in found)
    assert "wheremod" not in str(prog)       # printing does not show it


@pytest.mark.parametrize("transform", [lambda p: jvp_program(p, [True]),
                                       lambda p: vjp_program(p, [True])], ids=["jvp", "vjp"])
def test_derivatives_keep_the_line_they_differentiate(module, transform):
    prog = source_program(module.f, (X, 3))[0]
    der = simplify(transform(prog), copies=True)
    found = _wheres(der)
    assert found and all(w is not None for _, w in found), found
    assert {w[1] for _, w in found} <= {6, 7, 8, 9, 11}


def test_statement_gives_the_whole_statement_and_a_headers_line(module):
    path = module.__file__
    assert statement((path, 9)) == (8, "s = s + (x[i] * x[i])")
    assert statement((path, 7)) == (7, "if x[i] > 0:")
    assert statement((path, 6)) == (6, "for i in range(n):")
    assert heading((path, 11), "grad") == "# grad of: s = s - np.sin(x[i])   (wheremod.py:11)"
    assert statement(None) is None


def test_the_code_heads_its_blocks_and_line_map_reads_them(module):
    g = wg.grad(module.f)
    g(X, 3)
    src = g.source
    assert "# grad of: s = s + (x[i] * x[i])   (wheremod.py:8)" in src, src
    assert "# grad of: if x[i] > 0:   (wheremod.py:7)" in src
    assert "# program" not in src
    found = line_map(src, [module.__file__])
    lines = src.splitlines()
    for k, (path, line) in found.items():
        assert path == module.__file__
        assert not lines[k - 1].lstrip().startswith(("#", "return"))
    # every statement of the reverse sweep is mapped, to the line its heading names
    reverse = lines.index("    # reverse sweep")
    body = [k for k in range(reverse + 2, len(lines)) if lines[k - 1].strip()
            and not lines[k - 1].lstrip().startswith(("#", "return"))]
    assert body and all(k in found for k in body)
    k = next(k for k in body if "- r" in lines[k - 1])
    assert found[k] == (module.__file__, 11)


def test_line_map_nests_by_indentation():
    src = textwrap.dedent('''\
        def f(x):
            # grad of: for i in range(3):   (m.py:2)
            a = 1
            for i in range(3):
                # grad of: y = x   (m.py:3)
                b = 2
            c = 3
            return (a,)
        ''')
    assert line_map(src) == {3: ("m.py", 2), 4: ("m.py", 2), 6: ("m.py", 3), 7: ("m.py", 2)}


def test_a_generated_function_maps_its_lines_to_the_users(module):
    """``GeneratedFunction.line_map``: a line of the generated code (a traceback's, a NaN's)
    names the user's line, with its full path."""
    g = wg.grad(module.f)
    g(X, 3)
    found = g.last.fn.line_map
    lines = g.source.splitlines()
    k = next(k for k, line in enumerate(lines, 1) if "- r" in line)
    assert found[k] == (module.__file__, 11)


def test_the_forward_sweep_maps_each_line_to_the_users(module):
    """The forward sweep has no heading comments, yet each of its statements maps to the
    user's line it computes (``backends/python/headings.mark``): the loop and what it
    stores to ``for``'s line, ``np.cos`` (the derivative of ``np.sin``) to line 11, the
    read of ``x[i]`` and the test to line 7. Before, only lines under a ``grad of:`` heading were
    mapped: a NaN or a traceback in the forward sweep named no user line."""
    g = wg.grad(module.f)
    g(X, 3)
    found = g.last.fn.line_map
    lines = g.source.splitlines()
    start = lines.index("    # forward sweep") + 1
    stop = lines.index("    # reverse sweep")
    body = [k for k in range(start + 1, stop + 1) if lines[k - 1].strip()
            and not lines[k - 1].lstrip().startswith(("#", "else"))]
    assert body and all(k in found for k in body), [lines[k - 1] for k in body if k not in found]
    assert all(path == module.__file__ for path, _ in found.values())

    def line_of(text):
        return {found[k][1] for k in body if text in lines[k - 1]}
    assert line_of("np.cos(") == {11}
    assert line_of("for i in range(n)") == {6}
    assert line_of(" > 0") == {7}
    assert line_of("[None] * n") == {6}
    assert line_of("x.item(i)") == {7}
    # the text itself is unchanged: no mark is left in it
    assert "#@" not in g.source
    # explain reports the same map
    e = wg.explain(module.f, X, 3, argnums=0)
    assert {k: v for k, v in e.line_map.items() if start < k <= stop} == \
        {k: found[k] for k in body}
