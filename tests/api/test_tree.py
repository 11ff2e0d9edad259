"""``wg.tree`` (``wengert/api/tree.py``) and the registry of pytree nodes
(``wengert/core/pytree.py``): the functions over trees, named tuples and ``OrderedDict``
as nodes, classes registered with ``register_node`` / ``register_dataclass`` (and the
decorator) as inputs, outputs, ``has_aux`` values, loop carries and ``vmap`` prefixes in
both engines; registration explicit, idempotent and safe across threads; the error for an
object of a class nobody registered says how to register it.
"""
import collections
import dataclasses
import threading

import numpy as np
import pytest

import wengert as wg

import vmap_cases as V
from checks import assert_close, fd_jvp, inner

ENGINES = ["trace", "source"]
RNG = np.random.default_rng(7)
P = V.Params(RNG.standard_normal((3, 2)), RNG.standard_normal(2))
X = RNG.standard_normal(3)


# --- the functions over trees --------------------------------------------------------
def test_flatten_unflatten_leaves_structure_round_trip():
    tree = {"b": (1.0, None, [np.ones(2)]), "a": V.Point(np.zeros(3), 2.0), "c": P}
    leaves, treedef = wg.tree.flatten(tree)
    assert len(leaves) == 6 and leaves[0] is tree["a"].x       # a dict's keys sorted
    assert wg.tree.leaves(tree) == leaves
    assert wg.tree.structure(tree) == treedef
    again = wg.tree.unflatten(treedef, leaves)
    assert isinstance(again["a"], V.Point) and isinstance(again["c"], V.Params)
    assert again["c"].name == "layer" and again["b"][1] is None
    with pytest.raises(ValueError, match="leaves"):
        wg.tree.unflatten(treedef, leaves[:-1])


def test_map_reduce_all_and_is_leaf():
    tree = {"w": np.arange(3.0), "p": (2.0, np.ones(2))}
    doubled = wg.tree.map(lambda x: x * 2, tree)
    assert_close(doubled["w"], np.arange(3.0) * 2, 0.0)
    assert doubled["p"][0] == 4.0
    summed = wg.tree.map(lambda x, y: x + y, tree, doubled)
    assert summed["p"][0] == 6.0
    assert wg.tree.reduce(lambda a, x: a + np.sum(x), tree, 0.0) == 3.0 + 2.0 + 2.0
    assert wg.tree.all({"a": True, "b": (1, np.True_)}) and not wg.tree.all([True, 0])
    first = wg.tree.leaves(tree, is_leaf=lambda x: isinstance(x, tuple))[0]
    assert first is tree["p"]
    with pytest.raises(ValueError, match="same structure"):
        wg.tree.map(lambda x, y: x, tree, {"w": 1.0})


def test_named_tuples_and_ordered_dicts_are_nodes_of_their_own():
    pt = V.Point(np.ones(2), 3.0)
    leaves, treedef = wg.tree.flatten(pt)
    assert len(leaves) == 2 and isinstance(wg.tree.unflatten(treedef, leaves), V.Point)
    od = collections.OrderedDict([("z", 1.0), ("a", 2.0)])
    assert wg.tree.leaves(od) == [1.0, 2.0]                     # its own order
    back = wg.tree.unflatten(wg.tree.structure(od), [5.0, 6.0])
    assert type(back) is collections.OrderedDict and list(back) == ["z", "a"]
    assert wg.tree.structure(od) != wg.tree.structure({"z": 1.0, "a": 2.0})
    assert repr(wg.tree.structure(pt)) == "Point(x=*, y=*)"


def test_static_fields_are_part_of_the_structure():
    other = V.Params(P.W, P.b, name="other")
    assert wg.tree.structure(P) != wg.tree.structure(other)
    assert wg.tree.structure(P) == wg.tree.structure(V.Params(P.W * 2, P.b))


# --- registration -------------------------------------------------------------------
class Pair:
    def __init__(self, a, b, tag):
        self.a, self.b, self.tag = a, b, tag


def pair_flatten(p):
    return (p.a, p.b), p.tag


def pair_unflatten(tag, children):
    return Pair(*children, tag)


def test_register_node_makes_a_class_a_node():
    wg.tree.register_node(Pair, pair_flatten, pair_unflatten)
    p = Pair(np.ones(2), 3.0, "t")
    leaves, treedef = wg.tree.flatten(p)
    assert len(leaves) == 2
    back = wg.tree.unflatten(treedef, [x * 2 for x in leaves])
    assert isinstance(back, Pair) and back.tag == "t" and back.b == 6.0
    g = wg.grad(lambda p: np.sum(p.a * p.b))(p)
    assert isinstance(g, Pair) and np.all(g.a == 3.0) and g.b == 2.0


def test_registration_is_idempotent_and_refuses_other_functions():
    wg.tree.register_node(Pair, pair_flatten, pair_unflatten)
    wg.tree.register_node(Pair, pair_flatten, pair_unflatten)       # the same: no-op
    with pytest.raises(ValueError, match="already registered"):
        wg.tree.register_node(Pair, lambda p: ((p.a,), None), pair_unflatten)
    wg.tree.register_dataclass(V.Params)         # the decorator registered the same fields
    with pytest.raises(ValueError, match="already registered"):
        wg.tree.register_dataclass(V.Params, data_fields=["W"], meta_fields=["b", "name"])
    with pytest.raises(ValueError, match="pytree node already"):
        wg.tree.register_node(dict, pair_flatten, pair_unflatten)


def test_register_dataclass_checks_its_fields():
    @dataclasses.dataclass
    class Two:
        u: np.ndarray
        v: float
    with pytest.raises(ValueError, match="name each of its __init__ fields"):
        wg.tree.register_dataclass(Two, data_fields=["u"], meta_fields=[])
    with pytest.raises(TypeError, match="register_node"):
        wg.tree.register_dataclass(Pair)
    wg.tree.register_dataclass(Two, data_fields=["u"], meta_fields=["v"])
    assert wg.tree.leaves(Two(np.ones(2), 3.0))[0].shape == (2,)
    assert len(wg.tree.leaves(Two(np.ones(2), 3.0))) == 1


def test_registration_from_many_threads_registers_once():
    @dataclasses.dataclass
    class Shared:
        w: np.ndarray
    errors = []

    def register():
        try:
            wg.tree.register_dataclass(Shared, data_fields=["w"], meta_fields=[])
        except Exception as err:       # noqa: BLE001 -- collected, asserted below
            errors.append(err)
    threads = [threading.Thread(target=register) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(wg.tree.leaves(Shared(np.ones(3)))) == 1


# --- registered types through the transforms, both engines -------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_a_registered_class_is_an_input_and_an_output(engine):
    g = wg.grad(V.layer_loss, engine=engine)(P, X)
    assert isinstance(g, V.Params) and g.name == "layer"
    direction = V.Params(RNG.standard_normal((3, 2)), RNG.standard_normal(2))
    want = fd_jvp(lambda W, b: V.layer_loss(V.Params(W, b), X), (P.W, P.b),
                  (direction.W, direction.b))
    assert abs(inner(g.W, direction.W) + inner(g.b, direction.b) - want) < 1e-6


@pytest.mark.parametrize("engine", ENGINES)
def test_a_registered_class_as_aux_and_loop_carry(engine):
    (value, aux), g = wg.value_and_grad(V.layer_loss_aux, has_aux=True, engine=engine)(P, X)
    assert isinstance(aux, V.Params) and np.allclose(aux.W, 2 * P.W)
    for fn in (V.layer_loop, V.layer_fori):
        g = wg.grad(fn, engine=engine)(P, X)
        want = wg.grad(fn, engine="trace")(P, X)
        assert isinstance(g, V.Params)
        assert_close(g, want, 1e-12, what=fn.__name__)


@pytest.mark.parametrize("engine", ENGINES)
def test_named_tuples_and_ordered_dicts_through_grad(engine):
    g = wg.grad(V.point_norm, engine=engine)(V.Point(np.ones(2), 3.0))
    assert isinstance(g, V.Point) and np.allclose(g.x, 6.0) and g.y == 2.0
    od = collections.OrderedDict(b=np.ones(2), a=np.arange(2.0))
    g = wg.grad(V.ordered_product, engine=engine)(od)
    assert type(g) is collections.OrderedDict and list(g) == ["b", "a"]
    assert_close(g["b"], np.arange(2.0), 0.0)


@pytest.mark.parametrize("engine", ENGINES)
def test_vmap_over_registered_classes_and_their_prefixes(engine):
    xs = RNG.standard_normal((5, 3))
    per_example = wg.vmap(wg.grad(V.layer_loss, engine=engine), in_axes=(None, 0),
                          engine=engine)(P, xs)
    assert isinstance(per_example, V.Params) and per_example.W.shape == (5, 3, 2)
    Ws = np.stack([P.W * (1 + k) for k in range(5)])
    out = wg.vmap(V.layer_loss, in_axes=(V.Params(0, None), 0), engine=engine)(
        V.Params(Ws, P.b), xs)
    assert_close(out, np.array([V.layer_loss(V.Params(w, P.b), x) for w, x in zip(Ws, xs)]),
                 1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_unregistered_object_is_an_error_that_says_how_to_register(engine):
    with pytest.raises(wg.NonDifferentiableInputError, match="register_node"):
        wg.grad(V.opaque_sum, engine=engine)(V.Opaque(np.ones(2)))
    # (the source engine refuses the result, an UnsupportedSyntax, with the same advice)
    with pytest.raises((TypeError, wg.UnsupportedSyntax), match="register_dataclass"):
        wg.vjp(V.returns_opaque, np.ones(2), engine=engine)
