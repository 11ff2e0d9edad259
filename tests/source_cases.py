"""User functions for source_corpus.py: the source engine reads a function's
source with ``inspect``, so they live in a file.

Each function is plain Python/NumPy written the way a user would. Where the
trace engine cannot run the same text (``x[i] = v`` on a traced array,
``math.sin`` or ``float()`` of a traced value), a ``*_ref`` twin computes
the same mathematics in trace-engine terms (``wg.at``, ``np.sin``).
"""
import math
import types

import numpy as np

import wengert as wg


# --- seed 000 (the demo's: the source engine reads wengert/demo.py) -----------
from wengert.demo import seed000  # noqa: E402,F401


# --- arguments, assignment, arithmetic ------------------------------------------
def default_args(x, a=2.0, k=3):
    return np.sum(a * x ** k + x / a)


def tuple_unpack(x, y):
    a, b = x * y, x - y
    (c, d), e = (a + b, a * b), np.sin(x)
    c, d = d, c
    return np.sum(c * 2.0 + d * e)


def aug_assign(x):
    s = x * 1.0
    s += np.cos(x)
    s *= x
    s -= 0.5
    s /= 1.5 + x * x
    s **= 2
    return np.sum(s)


def arithmetic(x, y):
    a = x * y - x / (1.0 + y * y) + (-x) ** 2 + x ** y
    b = 3.0 - x + y @ x
    return np.sum(a * b)


def comparisons(x):
    # comparisons of traced values give masks (no derivative), used as weights
    m = (x > 0.1) * 1.0 + (x <= -0.5) * 2.0 + (x == x) * 0.5 + (x != 0.7) * 0.25
    return np.sum(m * x * x)


def bool_ops(x):
    # and/or/not on traced scalars (flags), and on Python values
    big = np.sum(x) > 0.0
    small = np.max(np.abs(x)) < 5.0
    flag = (big and small) or not big
    w = np.where(flag, 2.0, 3.0)
    on = True and not False
    if on or big:
        w = w * 1.5
    return np.sum(w * np.sin(x))


def conditional_expr(x):
    s = np.sum(x)
    t = x * x if s > 0.0 else -x * 3.0
    u = 2.0 if len(x) > 2 else 5.0
    return np.sum(t * u)


def chained_compare(x):
    s = np.sum(x)
    y = x * 2.0 if -1.0 < s < 1.0 else x * 4.0
    k = 3
    if 0 < k <= 3:
        y = y + 1.0
    return np.sum(y * y)


# --- calls ---------------------------------------------------------------------
def numpy_calls(x):
    y = np.tanh(x) + np.exp(-x * x) + np.log1p(x * x) + np.sqrt(1.0 + x * x)
    return np.sum(np.dot(y, np.cos(x)) * np.mean(y)) + np.prod(np.sin(x) + 2.0)


def math_calls(x):
    return math.sin(x) * math.exp(x) + math.sqrt(1.0 + x * x) + math.log(2.0 + x) * math.pi


def math_calls_ref(x):
    return np.sin(x) * np.exp(x) + np.sqrt(1.0 + x * x) + np.log(2.0 + x) * np.pi


def _square_plus(z, c):
    return z * z + c


def _twice(f, z):
    return f(f(z, 0.1), 0.2)


def helper_calls(x):
    a = _square_plus(x, 1.0)
    return np.sum(_twice(_square_plus, a * 0.3))


def _iterate(x, n):
    if n == 0:
        return x
    return _iterate(np.sin(x) + 0.5 * x, n - 1)


def recursion(x, n):
    return np.sum(_iterate(x, n) ** 2)


@wg.custom_jvp
def scaled_sin(x):
    return np.sin(x)


@scaled_sin.defjvp
def _scaled_sin_jvp(primals, tangents):
    # deliberately 2x the true derivative: shows the rule, not the body, is used
    x, = primals
    t, = tangents
    return np.sin(x), 2.0 * np.cos(x) * t


@wg.custom_vjp
def cube(x):
    return x ** 3


def _cube_fwd(x):
    return x ** 3, x


def _cube_bwd(x, ct):
    # deliberately 10x the true derivative
    return (30.0 * x * x * ct,)


cube.defvjp(_cube_fwd, _cube_bwd)


def custom_jvp_user(x):
    return np.sum(scaled_sin(x) * x)


def custom_vjp_user(x):
    return np.sum(cube(x) + x)


# --- if / elif / else ----------------------------------------------------------
def if_traced(x):
    s = np.sum(x)
    if s > 1.0:
        y = np.sin(x) * s
    elif s > -1.0:
        y = x * x
    else:
        y = np.exp(x)
    return np.sum(y)


def if_python(x, mode):
    if mode == "sin":
        y = np.sin(x)
    elif mode == "cube":
        y = x ** 3
    else:
        y = x
    return np.sum(y)


def if_nested(x):
    # an if inside the body of an if, both on traced values
    s = np.sum(x)
    y = x
    if s > 0.0:
        if s > 1.0:
            y = x * 3.0
        else:
            y = np.sin(x)
    return np.sum(y * y)


def if_assigns_outer_value(x):
    # a branch that gives y a value computed before the if, unchanged
    s = np.sum(x * x)
    y = x[0]
    if np.sum(x) > 0.0:
        y = s
    return y * 2.0


def if_no_else(x):
    y = x * 2.0
    if np.sum(x) < 0.0:
        y = y * y
    return np.sum(y)


# --- for ------------------------------------------------------------------------
def for_range_n(x, n):
    y = x
    for i in range(n):
        y = np.sin(y) * 0.9 + 0.1 * i
    return np.sum(y)


def for_range_len(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * x[i] * (i + 1)
    return s


def for_over_array(x):
    s = 0.0
    for row in x:
        s = s + np.sum(np.sin(row)) * np.sum(row)
    return s


def for_over_list(x):
    s = 0.0
    for c in [1.0, 2.0, 0.5]:
        s = s + np.sum(np.cos(x * c))
    return s


def for_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        s = s + v * v * i
    return s


def for_enumerate_start(x):
    s = 0.0
    for i, v in enumerate(x, start=2):
        s = s + v * v * i
    for i, v in enumerate(x, 1):
        s = s + np.sin(v) * i
    return s


def for_enumerate_list(x):
    # over a Python list of traced values: the loop runs as Python
    s = 0.0
    for i, v in enumerate([x[0], x[2]], start=3):
        s = s + v * i
    for a, b in zip([x[1], x[2]], x):
        s = s + a * b
    return s


def gather_by_index_array(x, idx):
    # idx is an argument: an integer array known only when the code runs
    y = x * 1.0
    y[idx[:1]] = y[idx[:1]] * 2.0 + 1.0
    return np.sum(x[idx] ** 3) + np.sum(np.sin(y))


def gather_by_index_array_traced(x, idx):
    y = wg.at(x * 1.0)[idx[:1]].set((x * 1.0)[idx[:1]] * 2.0 + 1.0)
    return np.sum(x[idx] ** 3) + np.sum(np.sin(y))


def for_zip(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s = s + a * np.sin(b)
    return s


def while_newton(a):
    # sqrt(a) by Newton's iteration: the condition depends on the traced value
    y = a
    while np.abs(y * y - a) > 1e-12:
        y = 0.5 * (y + a / y)
    return y


def break_in_for(x):
    s = 0.0
    for i in range(len(x)):
        if s > 1.0:
            break
        s = s + x[i] * x[i]
    return s


def continue_in_for(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] < 0.0:
            continue
        s = s + np.sin(x[i]) * x[i]
    return s


def early_return_if(x):
    s = np.sum(x * x)
    if s > 2.0:
        return np.sqrt(s)
    return s * 0.5


def early_return_loop(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * x[i]
        if s > 1.0:
            return s * 10.0
    return s


def break_inner(a):
    # break out of the inner loop only
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            if a[i, j] < 0.0:
                break
            s = s + a[i, j] * a[i, j] * (j + 1)
    return s


def return_in_nested_loops(a):
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s = s + a[i, j] ** 2
            if s > 1.0:
                return s
    return -s


def sqrt_each(x):
    # a Newton iteration per element: the inner trip count varies with the element
    s = 0.0
    for a in x:
        y = a
        while np.abs(y * y - a) > 1e-12:
            y = 0.5 * (y + a / y)
        s = s + y * a
    return s


def nested_loops(a):
    n, m = a.shape
    s = 0.0
    for i in range(n):
        for j in range(m):
            s = s + a[i, j] * a[j % n, i % m] * (i + 1)
    return s


def loop_with_branch(x):
    s = 0.0
    for v in x:
        if v > 0.0:
            s = s + v * v
        else:
            s = s - np.sin(v)
    return s


def combined(x, n):
    # everything at once: a Python-int loop, a traced branch inside, a
    # helper, a list, a comprehension, an early exit
    acc = []
    y = x
    for k in range(n):
        y = _square_plus(np.tanh(y), 0.1 * k)
        if np.sum(y) > 3.0:
            y = y * 0.5
        acc.append(np.sum(y * y))
    total = sum(acc) + sum(v * 2.0 for v in acc)
    if total > 1e6:
        return total * 0.0
    return total


def combined_structured(x, y):
    # a structured loop over zip holding an if/elif/else, a while, a
    # helper call and a conditional expression
    s = 0.0
    for a, b in zip(x, y):
        if a > 0.5:
            t = np.sin(a) * b
        elif a > -0.5:
            t = _square_plus(a, b)
        else:
            t = a * 3.0
        while t > 1.0:
            t = t * 0.5
        s = s + (t if b > 0.0 else -t)
    return s


def while_with_break(x):
    k = 0
    y = x
    while k < 10:
        y = y * 1.7
        if y > 4.0:
            break
        k = k + 1
    return y * k


# --- subscripts and updates -------------------------------------------------------
def read_subscripts(a):
    return np.sum(a[0] * a[1, ::-1]) + a[1, 2] * a[-1, -1] + np.sum(a[:, 1:] ** 2)


def setitem_loop(x):
    y = np.zeros(x.shape[0])
    for i in range(len(x)):
        y[i] = x[i] * x[i] + i
    return np.sum(np.sin(y))


def setitem_loop_ref(x):
    y = np.zeros(x.shape[0])
    for i in range(len(x)):
        y = wg.at(y)[i].set(x[i] * x[i] + i)
    return np.sum(np.sin(y))


def aug_setitem_2d(a):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a[i, j] += a[i, j] * a[i, j] * 0.5
    return np.sum(a * a)


def aug_setitem_2d_ref(a):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            a = wg.at(a)[i, j].add(a[i, j] * a[i, j] * 0.5)
    return np.sum(a * a)


def slice_setitem(x):
    n = len(x)
    for k in range(2):
        x[0:n - 1] = x[1:n] * 0.5 + x[0:n - 1]
    return np.sum(x * x)


def slice_setitem_ref(x):
    n = len(x)
    for k in range(2):
        x = wg.at(x)[0:n - 1].set(x[1:n] * 0.5 + x[0:n - 1])
    return np.sum(x * x)


def append_stack(x):
    out = []
    for i in range(3):
        out.append(np.sin(x * (i + 1)))
    return np.stack(out)


def append_sum(x):
    out = []
    for v in x:
        out.append(v * v)
    return sum(out)


# --- attributes and methods ----------------------------------------------------------
def attrs_methods(a, b):
    n, m = a.shape
    c = a.T.dot(b).reshape(m * m) * (1.0 / n)
    return c.sum() + a.sum() * b.T.sum() + float(a.ndim)


# --- nested def, lambda, fori_loop --------------------------------------------------------
def nested_def(x):
    w = np.cos(x)

    def inner(z):
        return z * w + 1.0

    return np.sum(inner(inner(x)))


def lambda_direct(x):
    scale = np.sum(x)
    f = lambda z: z * scale
    return np.sum(f(x) * f(2.0))


def nested_fori(x):
    a = np.sin(x)

    def body(i, c):
        return c * a + 0.1 * i

    return np.sum(wg.fori_loop(4, body, x))


def lambda_fori(x):
    a = x * 0.5
    return np.sum(wg.fori_loop(3, lambda i, c: np.tanh(c) + a, x))


# --- comprehensions and builtins -------------------------------------------------------------
def comprehensions(x):
    sq = [v * v for v in x]
    s = sum(sq) + sum(np.sin(v) for v in x)
    return s * sum([x[i] * i for i in range(len(x))]) + max(w * 2.0 for w in sq)


def comprehensions_zip_enumerate(x, y):
    pairs = [a * np.sin(b) for a, b in zip(x, y)]
    return sum(pairs) + sum(i * v * v for i, v in enumerate(x))


def builtins_mix(x):
    n = len(x)
    lo = min(x[0], x[1])
    hi = max(x[0] * 2.5, x[2], 0.0)
    k = int(n / 2)
    t = float(k) + abs(x[1] - 3.0)
    s = sum(x[i] for i in range(k))
    if isinstance(x, np.ndarray) and isinstance(n, int):
        s = s + 1.0
    return lo * hi + t * s + max(x) * min(x) + abs(np.sum(x))


def builtins_mix_ref(x):
    # builtins_mix for the trace engine, whose tracers are not np.ndarray instances
    n = len(x)
    lo = min(x[0], x[1])
    hi = max(x[0] * 2.5, x[2], 0.0)
    k = int(n / 2)
    t = float(k) + abs(x[1] - 3.0)
    s = sum(x[i] for i in range(k)) + 1.0
    return lo * hi + t * s + max(x) * min(x) + abs(np.sum(x))


def float_of_traced(x):
    return float(x) * 3.0 + float(np.sin(x))


def float_of_traced_ref(x):
    return x * 3.0 + np.sin(x)


# --- integers stay Python --------------------------------------------------------------------
def python_counter(x):
    # a loop over a Python list runs as Python: k is a Python int throughout
    k = 0
    y = x
    for c in [0.5, 1.0, 1.5]:
        k = k + 2
        y = y * np.sin(y) * c + k
    return np.sum(y) * k


def shapes_stay_python(x):
    n = x.shape[0]
    m = n * 2 + len(x) - x.ndim
    return np.sum(x) * m


def loop_trip(x, n):
    for i in range(n):
        x = np.sin(x) * 1.01 + 0.1
    return np.sum(x)


def traced_trip(x):
    # the trip count depends on the traced value: a structured loop
    n = 0
    y = x
    while y < 10.0:
        y = y * 1.5 + 0.25
        n = n + 1
    return y * n


# --- outside the accepted language -----------------------------------------------------
# Each function marks the offending line with "# unsupported"; each still runs as
# plain Python and under the trace engine (the fallback of engine="auto").
SCALE = 1.5


def _keep(f):
    return f


def uses_try(x):
    try:  # once unsupported
        y = np.sin(x)
    except ValueError:
        y = x
    return y * 2.0


def uses_with(x):
    with np.errstate(over="ignore"):  # unsupported
        y = np.exp(x)
    return y


def uses_raise(x, n=1):
    if n < 0:
        raise ValueError("n must be >= 0")  # once unsupported
    return np.sin(x) * n


def uses_global(x):
    global SCALE  # once unsupported
    return x * SCALE


def uses_nonlocal(x):
    y = x * 2.0

    def bump():
        nonlocal y  # once unsupported
        y = y + 1.0

    bump()
    return y * x


def uses_del(x):
    t = np.sin(x)
    y = t * x
    del t  # unsupported
    return y


def uses_import(x):
    import math  # unsupported
    return x * math.pi


def uses_class(x):
    class Box:  # unsupported
        k = 3.0
    return x * Box.k


def uses_yield(x):
    def gen():
        yield np.sin(x)  # unsupported
    return sum(gen())


def uses_async(x):
    async def later():  # unsupported
        return 1.0
    return x * 2.0


def uses_walrus(x):
    z = (y := np.sin(x)) * y  # unsupported
    return z


def uses_set(x):
    k = len({1, 2, 2})  # unsupported
    return x * k


def uses_attribute_store(x):
    box = types.SimpleNamespace()
    box.v = x * 2.0  # once unsupported
    return box.v * x


def uses_for_else(x):
    s = x
    for i in range(2):  # unsupported
        s = s * x
    else:
        s = s + 1.0
    return s


def uses_while_else(x):
    s, k = x, 0
    while k < 2:  # unsupported
        s, k = s * x, k + 1
    else:
        s = s + 1.0
    return s


def uses_decorated_def(x):
    @_keep
    def inner(z):  # unsupported
        return np.sin(z)
    return inner(x) * x


# a lambda on the second line of an expression: its source lines do not parse alone
# (refused until issue 25; the source engine now finds it in the whole file)
uses_lambda_continued = (1.0,
                         lambda x: x * np.sin(x))[1]


def one_branch_only(x):
    if np.sum(x) > 0.0:
        y = x * 2.0
    return np.sum(y)


# --- a user's closure fixing the trailing non-differentiated arguments ------------------
def with_static(f, *static):
    def bound(*xs):
        return f(*xs, *static)
    return bound
