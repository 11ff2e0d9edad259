"""The Primitive type and its one registry (``wengert/core/primitive.py``):
``register`` enters a row in ``PRIMITIVES`` once and freezes it, so every field
of a row is given in its constructor call, next to the rules it names (a rule
assigned later, from another module, would leave the row's block an
incomplete account of it). ``tests/test_layers.py`` checks the package's source
for such assignments; here the rows refuse them at run time."""
import pytest

from wengert.core.primitive import NOT_LINEAR, PRIMITIVES, Primitive, register


@pytest.mark.parametrize("field", ["impl", "jvp", "transpose", "name"])
def test_a_registered_row_refuses_assignment(field):
    for name, prim in sorted(PRIMITIVES.items()):
        before = getattr(prim, field)
        with pytest.raises(AttributeError, match=f"primitive {name!r} is registered"):
            setattr(prim, field, None)
        assert getattr(prim, field) is before, name


def test_a_row_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        register(PRIMITIVES["sin"])
    assert PRIMITIVES["sin"].name == "sin"


def test_a_row_takes_no_field_but_its_own_and_is_open_until_registered():
    """A row has its fields alone (no attribute to hang a rule on elsewhere); while it is
    being built, before ``register``, its fields may still be set."""
    with pytest.raises(AttributeError):
        PRIMITIVES["sin"].anything = 1
    row = Primitive("test_frozen_row", nargs=1, impl=abs, abstract_eval=None, jvp=None,
                    transpose=NOT_LINEAR)
    row.emit = None
    try:
        register(row)
        with pytest.raises(AttributeError, match="'test_frozen_row' is registered"):
            row.emit = None
    finally:
        PRIMITIVES.pop("test_frozen_row", None)
    assert "test_frozen_row" not in PRIMITIVES
