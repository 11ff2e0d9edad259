"""Which Python the source frontend accepts
(``wengert/frontends/source/check.py``): everything outside the language
raises ``UnsupportedSyntax`` naming the file, line, column and construct,
and a variable assigned in one traced branch only is refused where it is
read.
"""
from __future__ import annotations

import inspect
import os

import pytest

import wengert as wg

import source_cases as C
from source_corpus import X3


# --- outside the language ---------------------------------------------------------------
# (try, raise, global, nonlocal and attribute writes are supported since
# issue 25: ``frontends/source/test_effects.py``, ``test_trying.py``)
UNSUPPORTED = [
    (C.uses_with, "with", "with "),
    (C.uses_del, "delete", "del "),
    (C.uses_import, "import", "import "),
    (C.uses_class, "class definition", "class "),
    (C.uses_yield, "yield", "yield "),
    (C.uses_async, "async def", "async def "),
    (C.uses_walrus, "assignment expression (:=)", "y := "),
    (C.uses_set, "set", "{1, 2, 2}"),
    (C.uses_for_else, "for-else", "for "),
    (C.uses_while_else, "while-else", "while "),
    (C.uses_decorated_def, "decorated nested function", "def inner"),
]
UNSUPPORTED_IDS = [fn.__name__.removeprefix("uses_").replace("<lambda>", "lambda_continued")
                   for fn, _, _ in UNSUPPORTED]


def _marked_line(fn):
    """The file line of ``fn`` marked ``# unsupported``."""
    lines, first = inspect.getsourcelines(fn)
    k, = [k for k, line in enumerate(lines) if "# unsupported" in line]
    return first + k


@pytest.mark.parametrize("fn, construct, token", UNSUPPORTED, ids=UNSUPPORTED_IDS)
def test_unsupported_construct_is_located(fn, construct, token):
    line = _marked_line(fn)
    for run in (lambda: wg.grad(fn, engine="source")(0.4),
                lambda: wg.jvp(fn, (0.4,), (1.0,), engine="source"),
                lambda: wg.make_program(fn, 0.4, engine="source")):
        with pytest.raises(wg.UnsupportedSyntax) as info:
            run()
        err = info.value
        assert err.construct == construct
        assert os.path.samefile(err.filename, C.__file__)
        assert err.lineno == line
        text = open(C.__file__).read().splitlines()[line - 1]
        assert text[err.col - 1:].startswith(token), (text, err.col)
        assert f"source_cases.py:{line}:{err.col}: {construct} is not supported" in str(err)
        assert "engine='trace'" in str(err)


@pytest.mark.parametrize("x", [X3, -X3], ids=["branch-taken", "branch-skipped"])
def test_variable_assigned_in_one_traced_branch_only(x):
    for run in (lambda: wg.grad(C.one_branch_only, engine="source")(x),
                lambda: wg.jvp(C.one_branch_only, (x,), (x,), engine="source")):
        with pytest.raises(wg.UnsupportedSyntax,
                           match=r"variable 'y' is used where it may be unassigned.*"
                                 r"assign it before the branch"):
            run()
