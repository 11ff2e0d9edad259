"""The code of ``backend="numba"`` for the programs of ``docs/generated-code.md``
(issue 27): each is the listing of ``docs/generated-code-numba.md``, token for token up to
its free names (``golden_listings.same_code``), and the compiled gradients are the Python
backend's. The listings differ from the Python backend's only where that page says
(numba's typing and spellings, buffers kept between calls). The checkpointed loop's
reverse sweep once fell back to Python with a warning (its schedule a Python generator
numba could not compile); its sweeps are now numba twins, and no listing falls back
(``golden_listings.NUMBA_FALLS_BACK`` is empty).
"""
import warnings

import pytest

import wengert as wg

import golden_listings as GL
from checks import assert_close

pytestmark = pytest.mark.numba
pytest.importorskip("numba")

KEYS = sorted(GL.listings("numba")[1])


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return GL.load_model(str(tmp_path_factory.mktemp("golden_numba")))


def test_the_page_holds_every_listing_of_the_first():
    assert set(KEYS) == set(GL.listings()[1])


@pytest.mark.parametrize("name, kind", KEYS, ids=[f"{n}-{k}" for n, k in KEYS])
def test_generated_code_is_the_listing(model, name, kind):
    module, path = model
    want = GL.listings("numba")[1][(name, kind)]
    got = GL.generate(module, path, name, kind, backend="numba")
    assert GL.same_code(want, got) is None, GL.same_code(want, got) + "\n" + got


@pytest.mark.parametrize("name", sorted(GL.CALLS))
def test_compiled_gradients_are_the_python_backends(model, name):
    module, _ = model
    argnums = GL.CALLS[name][0]
    fn, args = getattr(module, name), GL.arguments(name)
    nums = argnums if len(argnums) > 1 else argnums[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # numba's own
        got = wg.grad(fn, argnums=nums, backend="numba")(*args)
    want = wg.grad(fn, argnums=nums)(*args)
    assert_close(got, want, 1e-13, what=f"{name}: numba against Python")
