"""User functions for the tests of issue 10 (no silent wrong derivative).

The source engine reads a function's source, so each case lives in a file.
Every function here once gave a wrong derivative without an error; the test
that uses it (in its component's file, its docstring saying "Issue 10" or the
mechanism at fault) says which.
"""
import numpy as np

import wengert as wg


# --- results that depended on what ran before (id() reuse in simplify) ----------
def abs_tanh(s):
    b = s * s
    t = np.abs(-b)
    u = t ** 2
    return np.tanh(t + 0.7 / (1 + t ** 2)) + 0.0 * u


R = np.array([1.0, 4.0, 7.0])


def entropy_like(x):
    return np.sum((R + x) * np.log(R + x))


def logistic(x):
    return 1 / (1 + np.exp(x))


def sum_logistic(x):
    return np.sum(logistic(x))


def d1_sum_logistic(x):
    return np.sum(wg.grad(sum_logistic, engine="source")(x))


def d2_sum_logistic(x):
    return np.sum(wg.grad(d1_sum_logistic, engine="source")(x))


def d3_sum_logistic(x):
    return np.sum(wg.grad(d2_sum_logistic, engine="source")(x))


# --- threads ---------------------------------------------------------------------------
def loop_branch(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            s = s + x[i] ** 2
        else:
            s = s - np.sin(x[i])
    return s * np.mean(x)


def loop_branch_grad(x):
    """The gradient of ``loop_branch`` by hand."""
    n = x.shape[0]
    s = np.sum(np.where(x > 0.0, x ** 2, -np.sin(x)))
    ds = np.where(x > 0.0, 2 * x, -np.cos(x))
    return ds * np.mean(x) + s / n


# --- control flow: which flag an exit sets --------------------------------------------
def inner_break(x):
    s = x
    for i in range(3):
        s = s * 0.5
        for j in range(2):
            break
        if i > 100:
            break
    return s


def inner_break_traced(x):
    s = x
    for i in range(4):
        s = s * 0.5
        for j in range(3):
            if s > 100.0:
                break
            s = s + 1.0
        if s > 1000.0:
            break
    return s


def inner_continue(x):
    s = x
    for i in range(3):
        for j in range(3):
            if j == 1:
                continue
            s = s * 1.5
        s = s - 0.25
    return s


def return_in_nested_loop_in_if(x):
    s = x
    for i in range(3):
        if i > 0:
            for j in range(2):
                if s > 10.0:
                    return s
                s = s * 2.0
        s = s + 1.0
    return s


def return_in_while_in_for(x):
    s = x
    for i in range(3):
        k = 0
        while k < 2:
            if s * s > 50.0:
                return 3.0 * s
            s = s * 1.5
            k = k + 1
        s = s + 0.5
    return s


# --- the function converted is the one called ---------------------------------------
def make_with_default(g=lambda x: 0.5 * np.dot(x, x)):
    return g


def twice(f):
    import functools

    @functools.wraps(f)
    def wrapper(x):
        return 2.0 * f(x)
    return wrapper


@twice
def doubled_square(x):
    return x ** 2


def cube(x):
    return x ** 3


def grad_inside(x):
    return wg.grad(cube, engine="trace")(x) * x


# --- custom_vjp under grad of one float ----------------------------------------------
@wg.custom_vjp
def clip_gradient(x):
    return x


clip_gradient.defvjp(lambda x: (x, None), lambda res, ct: (np.clip(ct, -1.0, 1.0),))


def scaled_clip(x):
    return 10.0 * clip_gradient(x)


# --- values that may differ between calls: read or made at each call ----------------
RS = np.random.RandomState(0)


def noisy(w):
    eps = RS.randn(3)
    return np.sum((w + eps) ** 2)


def noisy_module_rng(w):
    eps = np.random.randn(3)           # the global RandomState behind np.random
    return np.sum((w + eps) ** 2)


def noisy_generator(w, rng):
    eps = rng.standard_normal(3)
    return np.sum(w * eps) + 0.5 * np.sum(w * w)


def noisy_in_loop(w, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(w * RS.randn(w.shape[0]))
    return s


def noisy_scalar_branch(x):
    if RS.rand() > 0.5:                # a runtime value decides the branch
        return x * x
    return 3.0 * x


W = np.array([1.0, 2.0, 3.0])
K = 2.0
COEFFS = [1.0, 0.5, 0.25]


def uses_global_array(x):
    return np.sum(W * x)


def scale_by_k(x):
    return K * x


def uses_helper_global(x):
    return np.sum(scale_by_k(x))


def k_beside_comprehensions(x):
    # each comprehension binds K in its own scope only: the K read is the global
    n = len([K for K in range(3)]) + len({K: 0 for K in range(2)}) + sum(K for K in range(2))
    return np.sum(K * x) * n


def uses_global_list(x):
    acc = 0.0
    for c in COEFFS:
        acc = acc * x + c
    return acc


def square_fn(x):
    return x * x


def cube_fn(x):
    return x * x * x


G_FN = square_fn


def uses_global_function(x):
    return np.sum(G_FN(x))


def make_closure_over_array(a):
    def f(x):
        return np.sum(a * np.sin(x))
    return f


class Model:
    def __init__(self, w):
        self.w = w
        self.layers = [np.eye(2), 2.0 * np.eye(2)]

    def predict(self, x):
        h = x
        for m in self.layers:
            h = np.tanh(m @ h)
        return np.sum(self.w * h)


MODEL = Model(np.array([1.0, -1.0]))


def uses_model(x):
    return MODEL.predict(x)


def uses_model_arg(x, model):
    return np.sum(model.w * x * x)


def prints_its_value(x):
    y = x * x
    print("value", y)
    return y


def draw_in_condition(x):
    s = x
    k = 0
    while RS.rand() < 0.8 and k < 20:
        s = s * 1.1
        k = k + 1
    return s


# --- the caller may write to its arrays after the derivative kept them ------------
def rescaled_after_use(w, x):
    w = 1.0 * w
    y = w * x
    w *= 0.25
    return np.sum(y)


def expm(x):
    return np.exp(x)


M = np.array([[0.5, -0.25], [0.125, 0.75]])


def iterated_map(y):
    for _ in range(20):         # the trace engine meets M at each step
        y = np.tanh(M @ y)
    return y


def row_of_global(x):
    return M[0] * x             # a view of M


# --- edge values -------------------------------------------------------------------------
def remainder(x, y):
    return x % y


Y = np.arange(1.0, 5.0)


def remainder_by_constant(x):
    return x % Y


def power_of_zero(y):
    return np.power(0.0, y)


def to_the_zero(x):
    return x ** 0.0


def complex_norm(z):
    return np.linalg.norm(z)


def complex_inside(x):
    return np.abs(x * (1.0 + 2.0j))


def noisy_structured_loop(w):
    s = 0.0
    for i in range(w.shape[0]):        # a loop over a length: one structured loop
        s = s + w[i] * RS.randn()
    return s


def draw_in_and(x):
    return x * 2.0 if x > 0.0 and RS.rand() < 0.5 else x


def draws_in_checkpointed_loop(x):
    for i in wg.checkpointed(range(4)):
        x = x * (1.0 + 0.1 * RS.rand())
    return np.sum(x)


from collections import deque  # noqa: E402

QUEUE = deque()


def consumes_queue(x):
    return np.sum(x * QUEUE.popleft())


# --- a return in a traced if inside a Python if -----------------------------------
def return_in_traced_if_in_python_if(x):
    c = 1.0
    if c > 0.0:
        if x > 1.0:
            return x
        b = 2.0 * x
    else:
        b = x
    return b


def reads_unassigned(x):
    if x > 1.0:
        return x
    if x > 0.0:
        b = 2.0 * x
    return b                # unassigned where x <= 0: plain Python raises


def assigned_except_where_returned(x):
    if x > 0.0:                 # traced
        w = 2.0 * x
    else:
        if x < 10.0:            # traced too: both paths of the else return
            return -x
        return x
    return w * x                # read only where it was assigned


# --- what the code reads outside, however it reaches it (a review's findings) ----------
class Config:
    scale = 2.0
    W = np.array([1.0, 2.0, 3.0])


def uses_class_attributes(x):
    return Config.scale * np.sum(Config.W * x)


def is_config(c):
    return c is Config


C_SCALE = 2.0


def scaled_by_global(x, k):
    return C_SCALE * k * x


import functools  # noqa: E402

SCALED = functools.partial(scaled_by_global, k=1.0)
RNG = np.random.default_rng(0)
NOISE = functools.partial(RNG.standard_normal, 3)


def uses_partial(x):
    return SCALED(x)


def uses_partial_draw(x):
    return np.sum(x * NOISE())


def uses_map_and_reduce(x):
    return sum(map(scale_by_k, [x, 2.0 * x])) + functools.reduce(lambda a, b: a + K * b, [x, x])


def uses_fori_body(x):
    def body(i, c):
        return c * K
    return wg.fori_loop(3, body, x)


@wg.custom_jvp
def k_times(x):
    return K * x


@k_times.defjvp
def _k_times_jvp(primals, tangents):
    return k_times(primals[0]), K * tangents[0]


def uses_custom_rule(x):
    return k_times(x) * x


ITEMS = iter([float(i) for i in range(1000)])


def uses_next(x):
    return x * next(ITEMS)


W_DEFAULT = np.array([1.0, 2.0, 3.0])


def uses_default(x, w=W_DEFAULT):
    return np.sum(w * x)


ZERO = 0.0


def uses_sign_of_zero(x):
    return x * np.copysign(1.0, ZERO)


QUEUE_FLAG = deque([1.0])


def uses_truth(x):
    if QUEUE_FLAG:
        return x * 2.0
    return x


class Holder:
    pass


HOLDER = Holder()


def uses_hasattr(x):
    factor = getattr(HOLDER, "factor", 1.0)
    if hasattr(HOLDER, "scale"):
        return x * 3.0 * factor
    return x * factor


def inner_k(x):
    return K * x * x


GRAD_INNER = wg.grad(inner_k, engine="source")


def uses_cached_derivative(x):
    return GRAD_INNER(x) * x


BOUND = MODEL.predict


def uses_bound_method(x):
    return BOUND(x)


LOG = []


def appends_to_global(x):
    y = x * x
    LOG.append(y)
    return y
