"""The source engine's corpus: every construct it accepts, alone and
combined, as ``Case`` entries over the user functions of ``source_cases.py``
(``fn(*args)`` differentiated in ``argnums``; ``ref`` what the trace engine
runs where it cannot run the same text).

Read by the corpus tests of the source frontend
(``frontends/source/test_corpus.py``), by the tests that call the same
programs at other shapes (``core/test_dims.py``), through the numba backend
(``backends/numba/test_codegen.py``) and as generated text
(``backends/python/test_source_text.py``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import source_cases as C

X3 = np.array([0.3, -0.8, 0.6])
Y3 = np.array([0.7, 0.4, -0.9])
A23 = np.array([[0.3, -0.5, 0.7], [0.2, 0.9, -0.4]])
B23 = A23 * 0.5 + 0.1
X4 = np.array([0.5, 0.9, 1.2, 0.3])         # the running sum of squares passes 1 at i = 2
X4_SMALL = np.array([0.1, 0.2, 0.3, 0.25])  # ... and never does


@dataclass(frozen=True)
class Case:
    """``fn(*args)``, differentiated in ``argnums`` (leading positions); the
    trailing arguments are Python values (ints, strings) that stay fixed.
    ``ref`` is what the trace engine runs (default ``fn``)."""
    id: str
    fn: Callable
    args: tuple
    argnums: Any = 0
    ref: Callable | None = None

    @property
    def nums(self):
        return (self.argnums,) if isinstance(self.argnums, int) else tuple(self.argnums)

    @property
    def traced(self):
        return self.ref or self.fn

    def fresh(self):
        """The arguments, arrays copied (a plain call of ``x[i] = v`` code writes them)."""
        return tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a
                     for a in self.args)

    def dyn(self, args):
        return tuple(args[i] for i in self.nums)

    def bound(self, fn):
        """``fn`` of the differentiated arguments only (a user's closure, in
        source_cases, so the source engine can read it)."""
        static = self.args[len(self.nums):]
        return C.with_static(fn, *static) if static else fn

    def plain(self):
        """The plain Python function of the differentiated arguments, called
        on copies: ``x[i] = v`` code writes its arguments, and finite
        differences reuse theirs."""
        fn = self.bound(self.fn)
        return lambda *xs: fn(*[np.array(x, copy=True) for x in xs])


CASES = [
    # arguments, assignment, arithmetic
    Case("seed000", C.seed000, (2.0, 3.0), (0, 1)),
    Case("default-args", C.default_args, (X3,)),
    Case("default-args-given", C.default_args, (X3, 0.5, 2), (0, 1)),
    Case("tuple-unpack", C.tuple_unpack, (X3, Y3), (0, 1)),
    Case("aug-assign", C.aug_assign, (X3,)),
    Case("arithmetic", C.arithmetic, (np.abs(X3) + 0.5, X3), (0, 1)),
    Case("comparisons", C.comparisons, (X3,)),
    Case("bool-ops-true", C.bool_ops, (X3,)),
    Case("bool-ops-not-big", C.bool_ops, (-X3,)),
    Case("bool-ops-false", C.bool_ops, (np.array([6.0, -0.5, 0.2]),)),
    Case("ifexp-pos", C.conditional_expr, (X3,)),
    Case("ifexp-neg", C.conditional_expr, (-X3,)),
    Case("chained-compare-in", C.chained_compare, (X3,)),
    Case("chained-compare-out", C.chained_compare, (2.0 * X3 + 1.0,)),
    # calls
    Case("numpy-calls", C.numpy_calls, (X3,)),
    Case("math-calls", C.math_calls, (0.4,), ref=C.math_calls_ref),
    Case("helper-calls", C.helper_calls, (X3,)),
    Case("recursion-n3", C.recursion, (X3, 3)),
    Case("recursion-n0", C.recursion, (X3, 0)),
    # if / elif / else
    Case("if-traced-first", C.if_traced, (3.0 * X3 + 1.0,)),
    Case("if-traced-elif", C.if_traced, (X3,)),
    Case("if-traced-else", C.if_traced, (-3.0 * X3 - 1.0,)),
    Case("if-python-sin", C.if_python, (X3, "sin")),
    Case("if-python-cube", C.if_python, (X3, "cube")),
    Case("if-python-else", C.if_python, (X3, "id")),
    Case("if-nested-outer", C.if_nested, (-X3,)),
    Case("if-nested-inner-true", C.if_nested, (3.0 * X3,)),
    Case("if-nested-inner-false", C.if_nested, (X3,)),
    Case("if-assigns-outer-value", C.if_assigns_outer_value, (X3,)),
    Case("if-no-else-skip", C.if_no_else, (X3,)),
    Case("if-no-else-take", C.if_no_else, (-X3,)),
    # loops
    Case("for-range-n", C.for_range_n, (X3, 4)),
    Case("for-range-0", C.for_range_n, (X3, 0)),
    Case("for-range-len", C.for_range_len, (X3,)),
    Case("for-array", C.for_over_array, (A23,)),
    Case("for-list", C.for_over_list, (X3,)),
    Case("for-enumerate", C.for_enumerate, (X3,)),
    Case("for-enumerate-start", C.for_enumerate_start, (X3,)),
    Case("for-enumerate-list", C.for_enumerate_list, (X3,)),
    Case("for-zip", C.for_zip, (X3, Y3), (0, 1)),
    Case("while-newton", C.while_newton, (2.0,)),
    Case("while-newton-long", C.while_newton, (50.0,)),
    Case("while-traced-trip", C.traced_trip, (1.3,)),
    Case("while-break-late", C.while_with_break, (0.3,)),
    Case("while-break-early", C.while_with_break, (1.1,)),
    Case("break-taken", C.break_in_for, (X4,)),
    Case("break-not-taken", C.break_in_for, (X4_SMALL,)),
    Case("continue", C.continue_in_for, (X3,)),
    Case("return-in-if-early", C.early_return_if, (3.0 * X3,)),
    Case("return-in-if-late", C.early_return_if, (X3,)),
    Case("return-in-loop-early", C.early_return_loop, (X4,)),
    Case("return-in-loop-late", C.early_return_loop, (X4_SMALL,)),
    Case("break-inner-same-trips", C.break_inner,
         (np.array([[0.3, 0.5, -0.7], [0.6, 0.9, -0.4]]),)),
    Case("break-inner-ragged", C.break_inner, (A23,)),
    Case("return-in-nested-first-row", C.return_in_nested_loops, (np.abs(A23) + 0.2,)),
    Case("return-in-nested-second-row", C.return_in_nested_loops,
         (np.array([[0.3, 0.5, 0.4], [0.6, 0.9, 0.4]]),)),
    Case("return-in-nested-late", C.return_in_nested_loops, (A23 * 0.3,)),
    Case("while-in-for-same-trips", C.sqrt_each, (np.array([2.0, 2.1, 1.9]),)),
    Case("while-in-for-ragged", C.sqrt_each, (np.array([2.0, 50.0, 0.3]),)),
    Case("nested-loops", C.nested_loops, (A23,)),
    Case("loop-with-branch", C.loop_with_branch, (X3,)),
    Case("combined-python", C.combined, (X3, 3)),
    Case("combined-structured", C.combined_structured,
         (np.array([0.9, 0.1, -0.8, 0.7]), np.array([1.5, 0.4, -0.9, -2.5])), (0, 1)),
    # subscripts, updates, lists
    Case("read-subscripts", C.read_subscripts, (A23,)),
    Case("setitem-loop", C.setitem_loop, (X3,), ref=C.setitem_loop_ref),
    Case("aug-setitem-2d", C.aug_setitem_2d, (A23,), ref=C.aug_setitem_2d_ref),
    Case("slice-setitem", C.slice_setitem, (X4,), ref=C.slice_setitem_ref),
    Case("append-stack", C.append_stack, (X3,)),
    Case("append-sum", C.append_sum, (X3,)),
    # attributes, closures, comprehensions, builtins
    Case("attrs-methods", C.attrs_methods, (A23, B23), (0, 1)),
    Case("nested-def", C.nested_def, (X3,)),
    Case("lambda-direct", C.lambda_direct, (X3,)),
    Case("nested-def-fori", C.nested_fori, (X3,)),
    Case("lambda-fori", C.lambda_fori, (X3,)),
    Case("comprehensions", C.comprehensions, (X3,)),
    Case("comprehensions-zip-enumerate", C.comprehensions_zip_enumerate, (X3, Y3), (0, 1)),
    Case("builtins", C.builtins_mix, (X3,), ref=C.builtins_mix_ref),
    Case("float-of-traced", C.float_of_traced, (0.4,), ref=C.float_of_traced_ref),
    # integers stay Python
    Case("python-counter", C.python_counter, (X3,)),
    Case("shapes-python", C.shapes_stay_python, (X3,)),
    Case("loop-trip", C.loop_trip, (X3, 5)),
]
CASE_IDS = [c.id for c in CASES]
assert len(set(CASE_IDS)) == len(CASE_IDS)


def is_scalar(case):
    out = case.fn(*case.fresh())
    return not isinstance(out, (tuple, list, dict)) and np.ndim(out) == 0


SCALAR_CASES = [c for c in CASES if is_scalar(c)]
SCALAR_IDS = [c.id for c in SCALAR_CASES]
