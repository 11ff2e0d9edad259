"""The code a person would write (``docs/generated-code.md``, issue 27): for eight
programs -- seed 000, the loop with a branch (the README's and the demo's), ``x[i] = v`` in
a loop, prefix products, the MLP, a Newton ``while``, a checkpointed ``fori_loop`` -- the
reverse and forward derivative code wengert generates (``wg.grad(...).source``, ``wengert
show --mode vjp/jvp``) is the listing written there by hand, token for token up to the
names it leaves free (``golden_listings.same_code``), comments included: the heading of
each block names the user's line it differentiates.

Before, the loop with a branch computed the primal sum ``grad`` throws away (with an
``np.sin`` per element), copied values between branches and loop steps (``s_3 = s_2``,
``ct_s_1 = ct_s``), headed its blocks with internal program names and named a sum of
integers as a cotangent; the MLP's in-place writes gave names to values they did not
hold (``h = v0`` after ``np.tanh(v0, out=v0)``, ``err *= 2.0`` then read as a cotangent).
"""
import numpy as np
import pytest

import wengert as wg

import golden_listings as GL
from checks import assert_close, fd_jvp

KEYS = sorted(GL.listings()[1])


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return GL.load_model(str(tmp_path_factory.mktemp("golden")))


def test_the_page_holds_every_program_both_ways():
    """Eight programs, a reverse and a forward listing each, and a call for each."""
    names = {name for name, _ in KEYS}
    assert names == set(GL.CALLS) and len(names) == 8
    assert {kind for _, kind in KEYS} == {"reverse", "forward"} and len(KEYS) == 16


@pytest.mark.parametrize("name, kind", KEYS, ids=[f"{n}-{k}" for n, k in KEYS])
def test_generated_code_is_the_listing(model, name, kind):
    module, path = model
    want = GL.listings()[1][(name, kind)]
    got = GL.generate(module, path, name, kind)
    assert GL.same_code(want, got) is None, GL.same_code(want, got) + "\n" + got


@pytest.mark.parametrize("name", sorted(GL.CALLS))
def test_the_listed_gradients_are_right(model, name):
    """The gradient the listed code computes, against finite differences."""
    module, _ = model
    argnums, _, _ = GL.CALLS[name]
    fn, args = getattr(module, name), GL.arguments(name)
    grads = wg.grad(fn, argnums=argnums)(*args)
    rng = np.random.default_rng(7)
    for k, g in zip(argnums, grads):
        direction = rng.standard_normal(np.shape(args[k]))

        def along(x, k=k):
            full = list(args)
            full[k] = x
            return fn(*full)
        x = args[k] if np.ndim(args[k]) else float(args[k])
        want = fd_jvp(along, (x,), (direction if np.ndim(x) else float(direction),))
        assert_close(np.sum(np.asarray(g) * direction), want, 1e-6,
                     what=f"{name}: gradient of argument {k}")


def test_same_code_maps_free_names_one_to_one():
    """Free names (a role prefix and a counter) map one to one; fixed names must match,
    and so must comments."""
    a = "def f(x):\n    v0 = x * 2.0\n    v1 = v0 + v0\n    return (v1,)\n"
    assert GL.same_code(a, a.replace("v0", "v7").replace("v1", "v3")) is None
    assert GL.same_code(a, a.replace("v1", "v0")) is not None          # two names -> one
    assert GL.same_code(a, a.replace("x * 2.0", "x * 3.0")) is not None
    assert GL.same_code(a, a.replace("(x)", "(y)").replace("x *", "y *")) is not None
    c = "def f(x):\n    # grad of: y = x   (m.py:3)\n    return (x,)\n"
    assert GL.same_code(c, c.replace("m.py:3", "m.py:4")) is not None
