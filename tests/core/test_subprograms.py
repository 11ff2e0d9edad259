"""The transforms a row with sub-Programs applies to its bodies
(``wengert/core/subprograms.py``): the interface the control rows call, which
``wengert.transforms`` provides once, when it is imported. Each entry is the
transform it names, the forwarders call it, and the interface is not provided
twice."""
import numpy as np
import pytest

import wengert as wg
from wengert.core import subprograms
from wengert.transforms.batching import batch_eval, batch_flat, batch_program
from wengert.transforms.jvp import jvp_flat, jvp_program
from wengert.transforms.partial_eval import linearize_program
from wengert.transforms.transpose import transpose_program
from wengert.transforms.vjp import vjp_flat

TRANSFORMS = {"jvp_program": jvp_program, "linearize_program": linearize_program,
              "transpose_program": transpose_program, "batch_eval": batch_eval,
              "batch_program": batch_program, "batch_flat": batch_flat,
              "jvp_flat": jvp_flat, "vjp_flat": vjp_flat}


def test_the_names_are_the_interface():
    assert set(subprograms.NAMES) == set(TRANSFORMS)
    assert all(callable(getattr(subprograms, name)) for name in subprograms.NAMES)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_each_entry_is_the_transform_it_names(name):
    assert subprograms.given(name) is TRANSFORMS[name]


def test_the_forwarders_give_the_transforms_results():
    prog = wg.make_program(lambda x: np.sum(np.sin(x) * x), np.array([0.3, -0.7]),
                           engine="trace")
    assert str(subprograms.jvp_program(prog)) == str(jvp_program(prog))
    known, lin, nres = subprograms.linearize_program(prog, [True])
    known2, lin2, nres2 = linearize_program(prog, [True])
    assert (str(known), str(lin), nres) == (str(known2), str(lin2), nres2)
    mask = [k >= nres for k in range(len(lin.inputs))]     # the residuals are not linear
    assert str(subprograms.transpose_program(lin, mask)) == str(transpose_program(lin, mask))


def test_the_interface_is_provided_once():
    with pytest.raises(RuntimeError, match="provided once"):
        subprograms.provide(**TRANSFORMS)
    assert all(subprograms.given(name) is TRANSFORMS[name] for name in TRANSFORMS)
