"""The shape family (``wengert/numpy/shapes.py``, ``select.py``,
``piecewise.py``, ``stencils.py``) beyond the function table
(``fn_cases_shapes.py``):

* values known only when the code runs (sort orders, partition positions,
  conditions of select/piecewise, indices computed by argmax): a
  source-engine derivative generated at one input is right at another whose
  order or pieces differ, and at another length;
* ``np.cumprod`` at exact zeros: its derivative is the product of the
  others, finite (no division by x);
* ``np.piecewise`` with conditions traced in the source engine never
  evaluates a function off its piece;
* what is refused, and with which typed error.
"""
from __future__ import annotations

import numpy as np
import pytest

import wengert as wg
from wengert.core.errors import InPlaceUpdateError, NoDerivativeRule, NonDifferentiableInputError

import checks

WEIGHTS = np.linspace(0.5, 2.0, 12)


def _w(x):
    return WEIGHTS[:x.size].reshape(x.shape)


# --- values known at run time --------------------------------------------
def by_sort(x):
    return np.sum(np.sort(x, axis=-1) * _w(x))


def by_sort_flat(x):
    return np.sum(np.sort(x, axis=None) ** 2 * _w(x).ravel())


def by_partition(x):
    return np.sum(np.partition(x, 1, axis=-1) * _w(x))


def by_argsort_gather(x):
    return np.sum(x[np.argsort(x)] * _w(x))


def by_take_along_argsort(x):
    return np.sum(np.take_along_axis(x, np.argsort(x, axis=-1), axis=-1) * _w(x))


def by_take_argmax(x):
    return np.sum(np.take(x, np.argmax(x, axis=-1)) ** 2)


def by_select(x):
    return np.sum(np.select([x > 1.0, x < 0.0], [x ** 2, np.sin(x)], 0.5 * x) * _w(x))


def by_piecewise(x):
    return np.sum(np.piecewise(x, [x < 0.0, x > 1.0], [lambda v: v ** 3, np.exp, 0.5]) * _w(x))


RUNTIME = [by_sort, by_sort_flat, by_partition, by_argsort_gather, by_take_along_argsort,
           by_take_argmax, by_select, by_piecewise]


def _draws(shape, seed):
    """Values away from 0 and 1 (the pieces' edges) and 0.1 apart (sorts),
    in a different order at each seed."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    vals = np.concatenate([np.linspace(-1.6, -0.2, n), np.linspace(0.2, 0.8, n),
                           np.linspace(1.2, 1.8, n)])
    return rng.permutation(rng.choice(vals, n, replace=False)).reshape(shape)


def _fd_grad(f, x):
    e = np.eye(x.size).reshape((x.size,) + x.shape)
    return np.array([checks.fd_jvp(f, (x,), (d,)) for d in e]).reshape(x.shape)


@pytest.mark.parametrize("f", RUNTIME, ids=[f.__name__ for f in RUNTIME])
def test_source_derivative_follows_the_values_it_is_called_with(f):
    grad = wg.grad(f, engine="source")
    for shape, seed in (((2, 4), 0), ((2, 4), 1), ((2, 4), 2), ((3, 4), 3), ((1, 3), 4)):
        x = _draws(shape, seed)
        if f in (by_argsort_gather, by_take_argmax) and x.ndim > 1:
            x = x[0]
        checks.assert_close(grad(x), _fd_grad(f, x), checks.JVP_RTOL_F64,
                            what=f"{f.__name__} at seed {seed}, shape {x.shape}")


@pytest.mark.parametrize("f", RUNTIME, ids=[f.__name__ for f in RUNTIME])
def test_source_hessian_follows_the_values(f):
    hess = wg.hessian(f, engine="source")
    for seed in (5, 6):
        x = _draws((4,), seed)
        want = wg.hessian(f, engine="trace")(x)
        checks.assert_close(hess(x), want, checks.AD_VS_AD_RTOL_F64,
                            what=f"{f.__name__}: source vs trace Hessian at seed {seed}")


def shaped_repeat(x):
    return np.sum(np.repeat(x, 2, axis=0) * np.arange(2.0 * x.shape[0])[:, None])


def shaped_pad(x):
    return np.sum(np.pad(x, ((2, 1), (1, 2)), mode="reflect") ** 2 * 0.5)


def shaped_roll(x):
    return np.sum(np.roll(x, 1, axis=1) * np.arange(float(x.size)).reshape(x.shape))


def shaped_split(x):
    parts = np.array_split(x, 3, axis=1)
    return sum(np.sum(p ** 2) * (k + 1) for k, p in enumerate(parts))


def shaped_tile(x):
    return np.sum(np.tile(x, (1, 2)) * np.arange(2.0 * x.size).reshape(x.shape[0], -1))


def shaped_gradient(x):
    return np.sum(np.gradient(x, axis=1, edge_order=2) ** 2)


def shaped_tril_cumprod(x):
    return np.sum(np.cumprod(np.tril(x) + 1.0, axis=0))


SHAPED = [shaped_repeat, shaped_pad, shaped_roll, shaped_split, shaped_tile, shaped_gradient,
          shaped_tril_cumprod]


@pytest.mark.parametrize("f", SHAPED, ids=[f.__name__ for f in SHAPED])
def test_source_derivative_at_a_new_shape(f):
    """Index arrays made from a shape (repeat, pad, tril) are constants of
    that shape: one source-engine derivative, called at several shapes,
    is right at each."""
    grad = wg.grad(f, engine="source")
    for shape in ((3, 4), (4, 5), (3, 4), (5, 3)):
        x = np.random.default_rng(sum(shape)).uniform(-1.0, 1.0, shape)
        checks.assert_close(grad(x), _fd_grad(f, x), checks.JVP_RTOL_F64,
                            what=f"{f.__name__} at shape {shape}")


def jac_cumprod(x):
    return np.cumprod(x, axis=0) + np.cumprod(x[::-1], axis=1)


def jac_mixed(x):
    return (np.cumprod(np.sort(x, axis=1), axis=1)[:, ::2]
            * np.pad(x, ((0, 0), (1, 0)), mode="wrap")[:, :2])


def jac_pieces(x):
    return np.piecewise(x, [x < 0.0, x > 1.0], [np.sin, lambda v: v ** 2]) * np.roll(x, 1)


@pytest.mark.parametrize("engine", ["trace", "source"])
@pytest.mark.parametrize("f", [jac_cumprod, jac_mixed, jac_pieces], ids=lambda f: f.__name__)
def test_jacobians_forward_and_reverse_agree(f, engine):
    """jacfwd and jacrev run the linear program batched (linrec's batch rule,
    getitem's loop over index arrays)."""
    x = _draws((3, 4), 11)
    fwd = wg.jacfwd(f, engine=engine)(x)
    rev = wg.jacrev(f, engine=engine)(x)
    checks.assert_close(fwd, rev, checks.AD_VS_AD_RTOL_F64, what="jacfwd vs jacrev")
    out = f(x)
    e = np.eye(x.size).reshape((x.size,) + x.shape)
    fd = np.stack([checks.fd_jvp(f, (x,), (d,)) for d in e], axis=-1).reshape(fwd.shape)
    checks.assert_close(fwd, fd, checks.JVP_RTOL_F64, what=f"jacfwd vs FD, out {out.shape}")


# --- cumprod at zeros ----------------------------------------------------
@pytest.mark.parametrize("zeros", [(0,), (2,), (4,), (1, 3), (0, 4)],
                         ids=lambda z: "zeros_at_" + "_".join(map(str, z)))
@pytest.mark.parametrize("engine", ["trace", "source"])
def test_cumprod_derivative_at_zeros_is_the_product_of_the_others(zeros, engine):
    x = np.array([1.5, -0.5, 2.0, 0.75, -1.25])
    x[list(zeros)] = 0.0

    def last(x):
        return np.cumprod(x)[-1]

    want = np.array([np.prod(np.delete(x, j)) for j in range(x.size)])
    got = wg.grad(last, engine=engine)(x)
    assert np.all(np.isfinite(got))
    checks.assert_close(got, want, checks.EXACT_RTOL_F64, what="d prod / dx_j")
    # second order: d2 prod / dx_i dx_j is the product of all but i and j
    want2 = np.array([[0.0 if i == j else np.prod(np.delete(x, [i, j]))
                       for j in range(x.size)] for i in range(x.size)])
    checks.assert_close(wg.hessian(last, engine=engine)(x), want2, checks.EXACT_RTOL_F64,
                        what="Hessian of the product")


def _recurrence(a, b):
    """h[i] = a[i] h[i-1] + b[i] along the last axis, place by place in Python."""
    h = np.zeros(np.broadcast_shapes(a.shape, b.shape))
    for idx in np.ndindex(h.shape[:-1]):
        prev = 0.0
        for i in range(h.shape[-1]):
            prev = a[idx + (i,)] * prev + b[idx + (i,)]
            h[idx + (i,)] = prev
    return h


@pytest.mark.parametrize("n", [129, 1000, 3000])
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_linrec_long_axes_by_blocks(n, reverse):
    """Axes longer than 128 places are scanned in blocks (scan.py): the same
    recurrence, zeros in the coefficients included."""
    from wengert.primitives import scan
    rng = np.random.default_rng(n)
    a, b = rng.uniform(-1.1, 1.1, (2, n)), rng.normal(size=(2, n))
    a[:, rng.choice(n, 5, replace=False)] = 0.0
    want = _recurrence(a[:, ::-1], b[:, ::-1])[:, ::-1] if reverse else _recurrence(a, b)
    for axis in (1, 0):
        got = scan.linrec_impl(np.moveaxis(a, 1, axis), np.moveaxis(b, 1, axis), axis, reverse)
        checks.assert_close(np.moveaxis(got, axis, 1), want, checks.EXACT_RTOL_F64,
                            what=f"linrec, axis {axis}")


def test_linrec_blocks_fall_back_where_a_running_product_overflows():
    """A block's running product of coefficients can overflow where the
    recurrence does not (1e30 ** 40 after 1e-30 ** 100): then the result is
    computed place by place, finite and right."""
    from wengert.primitives import scan
    a = np.full(300, 1e-30)
    a[100:140] = 1e30
    b = np.zeros(300)
    b[139] = 1.0
    got = scan.linrec_impl(a, b, 0, False)
    checks.assert_close(got, _recurrence(a, b), checks.EXACT_RTOL_F64, what="linrec")


@pytest.mark.parametrize("engine", ["trace", "source"])
def test_cumprod_long_axis_gradient_at_zeros(engine):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.95, 1.05, 400)
    x[[57, 301]] = 0.0

    def last(x):
        return np.cumprod(x)[-1]

    # one zero: only its own place has a derivative, the product of the others
    one = np.where(np.arange(x.size) == 301, 1.0, x)
    want = np.zeros_like(x)
    want[57] = np.prod(np.delete(one, 57))
    checks.assert_close(wg.grad(last, engine=engine)(one), want, checks.EXACT_RTOL_F64,
                        what="gradient of a long product with one zero")
    # two zeros: the gradient is 0, the Hessian's (301, 57) entry is not
    e = np.zeros_like(x)
    e[301] = 1.0
    _, row = wg.jvp(wg.grad(last, engine=engine), (x,), (e,), engine=engine)
    want = np.zeros_like(x)
    want[57] = np.prod(np.delete(x, [57, 301]))
    checks.assert_close(row, want, checks.EXACT_RTOL_F64, what="Hessian row, two zeros")


# --- piecewise keeps each function on its piece ------------------------------
def log_piece(x):
    return np.sum(np.piecewise(x, [x > 0.0], [np.log, 0.0]))


def sqrt_pieces(x):
    return np.sum(np.piecewise(x, [x < 0.0, x >= 0.0], [lambda v: np.sqrt(-v), np.sqrt]))


@pytest.mark.parametrize("engine", ["trace", "source"])
def test_piecewise_functions_see_only_their_piece(engine):
    x = np.array([-1.0, 0.5, -0.25, 2.0, 4.0])
    with np.errstate(all="raise"):      # log or sqrt of a negative would raise
        g = wg.grad(log_piece, engine=engine)(x)
        checks.assert_close(g, np.where(x > 0, 1.0 / np.abs(x), 0.0), checks.EXACT_RTOL_F64,
                            what="d log on its piece")
        g2 = wg.grad(sqrt_pieces, engine=engine)(x)
        want = np.where(x < 0, -0.5 / np.sqrt(np.abs(x)), 0.5 / np.sqrt(np.abs(x)))
        checks.assert_close(g2, want, checks.EXACT_RTOL_F64, what="d sqrt on each piece")


def empty_piece(x):
    return np.sum(np.piecewise(x, [x > 0.0, x <= 0.0], [np.sqrt, lambda v: v * v]))


@pytest.mark.parametrize("engine", ["trace", "source"])
def test_piecewise_with_an_empty_piece_has_the_other_pieces_derivative(engine):
    """No entry is in sqrt's piece: sqrt's stand-in value is then outside its
    domain (a nan, discarded), and it must not leak into the derivative."""
    x = np.array([-1.0, -0.5, -2.0])
    with np.errstate(invalid="ignore"):
        g = wg.grad(empty_piece, engine=engine)(x)
        h = wg.hessian(empty_piece, engine=engine)(x)
    checks.assert_close(g, 2.0 * x, checks.EXACT_RTOL_F64, what="gradient")
    checks.assert_close(h, 2.0 * np.eye(3), checks.EXACT_RTOL_F64, what="Hessian")


# --- array methods -------------------------------------------------------------
def cumprod_method(x):
    return np.sum(x.cumprod(axis=1) * _w(x))


def repeat_method(x):
    return np.sum(x.repeat([1, 0, 2], axis=0) ** 2)


def take_method(x):
    return np.sum(x.take(x[0].argsort(), axis=1) * _w(x))


def argsort_method(x):
    return np.sum(x.ravel()[x.argsort(axis=None)] * _w(x).ravel())


METHODS = [cumprod_method, repeat_method, take_method, argsort_method]


@pytest.mark.parametrize("engine", ["trace", "source"])
@pytest.mark.parametrize("f", METHODS, ids=[f.__name__ for f in METHODS])
def test_array_methods_are_the_functions(f, engine):
    x = _draws((3, 4), 7)
    checks.assert_close(wg.grad(f, engine=engine)(x), _fd_grad(f, x), checks.JVP_RTOL_F64,
                        what=f.__name__)


def sort_in_place(x):
    x.sort()
    return np.sum(x * _w(x))


def partition_in_place(x):
    x.partition(1)
    return np.sum(x * _w(x))


@pytest.mark.parametrize("engine", ["trace", "source"])
@pytest.mark.parametrize("f", [sort_in_place, partition_in_place], ids=lambda f: f.__name__)
def test_sorting_in_place_is_refused(f, engine):
    with pytest.raises(InPlaceUpdateError, match="np\\.(sort|partition)"):
        wg.grad(f, engine=engine)(np.array([0.5, -1.0, 2.0]))


# --- refusals ------------------------------------------------------------------
def repeat_traced(x):
    return np.sum(np.repeat(x, np.argmax(x) + 1))


def roll_traced(x):
    return np.sum(np.roll(x, np.argmax(x)) * _w(x))


def pad_mean(x):
    return np.sum(np.pad(x, 1, mode="mean"))


def pad_odd(x):
    return np.sum(np.pad(x, 1, mode="reflect", reflect_type="odd"))


def sort_order(x):
    return np.sum(np.sort(x, order="a"))


REFUSED = [
    # a count or a shift that decides the result's shape, known only at run time
    (repeat_traced, ("source",), NonDifferentiableInputError, "repeats"),
    (roll_traced, ("source",), NonDifferentiableInputError, "shift"),
    (pad_mean, ("trace", "source"), NoDerivativeRule, "mode"),
    (sort_order, ("trace", "source"), NoDerivativeRule, "order"),
]


@pytest.mark.parametrize("f, engine, err, words",
                         [pytest.param(f, e, err, w, id=f"{f.__name__}-{e}")
                          for f, engines, err, w in REFUSED for e in engines])
def test_refused_with_a_typed_error_at_the_users_line(f, engine, err, words):
    x = np.array([0.5, -1.0, 2.0, 1.5])
    with pytest.raises(err) as info:
        wg.grad(f, engine=engine)(x)
    msg = str(info.value)
    assert words in msg, msg
    assert __file__.rsplit("/", 1)[-1] in msg, f"the error does not name the user's line: {msg}"


@pytest.mark.parametrize("f", [repeat_traced, roll_traced], ids=lambda f: f.__name__)
def test_trace_engine_takes_shape_values_of_this_call(f):
    """The trace engine records one call, so a count or shift computed from
    the values is a plain number there, and the derivative is right."""
    for x in (np.array([0.5, -1.0, 2.0, 1.5]), np.array([2.5, -1.0, 0.0, 1.5])):
        checks.assert_close(wg.grad(f, engine="trace")(x), _fd_grad(f, x),
                            checks.JVP_RTOL_F64, what=f.__name__)


# --- NumPy's signatures ----------------------------------------------------------
def _family_table():
    from wengert.numpy import shapes as numpy_shapes
    return numpy_shapes.FUNCTIONS


@pytest.mark.parametrize("np_fn", list(_family_table()),
                         ids=[f.__name__ for f in _family_table()])
def test_wrapper_takes_numpys_parameters(np_fn):
    import inspect
    from robust_prims_cases import assert_takes_parameters
    assert_takes_parameters(inspect.signature(np_fn), inspect.signature(_family_table()[np_fn]),
                            np_fn.__name__)


# --- piecewise with pieces known at run time: only elementwise functions ---------
def pw_elementwise(x):
    return np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda v: -v ** 2, lambda v: np.sin(v) * 2.0]))


def pw_centered(x):
    return np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda v: v - v.mean(), lambda v: v * 2.0]))


def pw_sorted(x):
    return np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda v: np.cumsum(v), lambda v: v]) * x)


def test_piecewise_at_run_time_needs_elementwise_functions():
    """The source engine applies a piece's function to every entry where the
    pieces are known only at run time; NumPy applies it to x[cond]. A
    function that is not elementwise (a mean, a running sum) would give
    another value, silently: it is refused; an elementwise one agrees with
    the trace engine (which knows the pieces) and finite differences."""
    x = np.array([-1.0, 0.5, 2.0, -0.3])
    got = wg.grad(pw_elementwise, engine="source")(x)
    checks.assert_close(got, wg.grad(pw_elementwise, engine="trace")(x), 1e-12)
    checks.assert_close(got, checks.fd_jacobian(pw_elementwise, (x,)).ravel(), 1e-6)
    for f in (pw_centered, pw_sorted):
        with pytest.raises(NoDerivativeRule, match=r"test_shapes\.py:\d+: np\.piecewise"):
            wg.grad(f, engine="source")(x)
        g = wg.grad(f, engine="trace")(x)       # the pieces known: NumPy's own semantics
        checks.assert_close(g, checks.fd_jacobian(f, (x,)).ravel(), 1e-6)


def cross_of_2_vectors(a, b):
    return np.sum(np.cross(a, b))


@pytest.mark.parametrize("engine", ["trace", "source"])
def test_cross_of_2_vectors_follows_the_installed_numpy(engine):
    """np.cross of 2-vectors: NumPy 2.5 refuses them (2.0-2.4 warned); the
    wrapper does what the installed NumPy does."""
    from wengert.numpy.shapes import _CROSS_2D
    a, b = np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([[0.3, 0.1], [2.0, 1.0]])
    if _CROSS_2D:
        with pytest.warns(DeprecationWarning):
            g = wg.grad(cross_of_2_vectors, engine=engine)(a, b)
        checks.assert_close(g, np.stack([b[:, 1], -b[:, 0]], axis=1), 1e-12)
    else:
        with pytest.raises(ValueError):
            np.cross(a, b)
        with pytest.raises(ValueError, match="3-dimensional vectors"):
            wg.grad(cross_of_2_vectors, engine=engine)(a, b)
