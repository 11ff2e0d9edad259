"""Pickles made by wengert before its modules moved into their layers' folders (issue 24)
still load, and give what the same transforms give now.

``tests/data/pickles_before_move.pkl`` was written by the package at fa623dc (the layout
before the move) from ``tests/data/pickled_functions.py``: transformed functions (pickled as
their recipe: ``wengert.api_pickle.rebuild``), custom_jvp and checkpoint objects by name and
by state (``wengert.primitives.custom.custom_jvp``, ``wengert.api_checkpoint.checkpoint``).
"""
import os
import pickle
import sys

import numpy as np
import pytest

import wengert as wg

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
sys.path.insert(0, DATA)
import pickled_functions as P  # noqa: E402

with open(os.path.join(DATA, "pickles_before_move.pkl"), "rb") as fh:
    BLOBS = pickle.load(fh)

X = np.linspace(0.1, 1.3, 5)
Y = np.linspace(-0.4, 0.7, 5)
# what each pickle should be, made now; and its arguments
NOW = {
    "grad_source": (wg.grad(P.f, engine="source"), (X,)),
    "grad_trace": (wg.grad(P.f, engine="trace"), (X,)),
    "grad_argnums": (wg.grad(P.g, argnums=1), (X, Y)),
    "grad_grad": (wg.grad(wg.grad(P.softplus)), (0.3,)),
    "jacfwd": (wg.jacfwd(P.f), (X,)),
    "hessian": (wg.hessian(P.f, engine="trace"), (X,)),
    "custom_jvp": (P.softplus, (0.3,)),
    "checkpoint": (P.block, (X,)),
    "grad_checkpoint": (wg.grad(P.block), (X,)),
    "custom_jvp_state": (P.cube, (0.7,)),
    "checkpoint_state": (P.blocked, (X,)),
    "grad_custom_state": (wg.grad(P.cube), (0.7,)),
}


def test_every_pickle_is_checked():
    assert set(BLOBS) == set(NOW)


@pytest.mark.parametrize("name", sorted(NOW))
def test_a_pickle_made_before_the_move_loads_and_agrees(name):
    loaded = pickle.loads(BLOBS[name])
    now, args = NOW[name]
    assert type(loaded) is type(now)
    np.testing.assert_allclose(loaded(*args), now(*args), rtol=1e-13, atol=0)


def test_grad_of_an_unpickled_custom_rule_uses_the_rule():
    """The object unpickled by state still carries its jvp rule: its gradient is the rule's
    (3x^2), checked against finite differences."""
    cube = pickle.loads(BLOBS["custom_jvp_state"])
    x, h = 0.7, 1e-6
    assert abs(wg.grad(cube)(x) - (cube(x + h) - cube(x - h)) / (2 * h)) < 1e-8
    assert wg.grad(cube)(x) == pytest.approx(3 * x * x, rel=1e-14)


def test_the_old_module_names_are_only_the_pickled_ones():
    """Only the three module paths that pickles name were kept; the rest of the old layout
    is gone (``import wengert.api`` is the new package, not the old module)."""
    from wengert.api import pickling
    assert set(pickling.MOVED) == {"wengert.api_pickle", "wengert.primitives.custom",
                                   "wengert.api_checkpoint"}
    with pytest.raises(ImportError):
        __import__("wengert.api_source")
