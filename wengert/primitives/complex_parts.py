"""Complex values: the primitives that take them apart (``real``, ``imag``,
``conj``) and the one list of primitives whose rules hold for them.

Conventions (JAX's, so users meet what they know):

* the tangent of a complex value is complex, of its dtype; a real value's
  tangent and cotangent are real;
* transposition is the *linear* transpose, without conjugation: the
  transpose of ``t -> a * t`` is ``ct -> a * ct``. A cotangent ``c`` pairs
  with a tangent ``t`` by ``Re(sum(c * t))`` (bilinear, no conjugate); the
  transpose of every rule, holomorphic or not, satisfies
  ``Re(sum(ct * L(t))) == Re(sum(L^T(ct) * t))``;
* so ``grad`` of a real function of ``z = x + iy`` is ``df/dx - i df/dy``
  (``grad(abs(z)**2)(3+4j) == 6-8j``), and of a holomorphic function (with
  ``holomorphic=True``) it is ``f'(z)``.

``real``, ``imag`` and ``conj`` are linear over the reals but not
holomorphic: under the pairing above their transposes are ``ct + 0j``,
``-1j * ct`` and ``conj(ct)``. ``|z|`` (``arith.abs``) uses
``d|z| = Re(conj(z) dz) / |z|`` on complex operands, written with them.

``COMPLEX_OK`` at the end lists the primitives audited for complex values;
complex operands or results of any other primitive raise
``UnsupportedDtypeError`` naming it (``staging`` and ``transforms.jvp``).
"""
from __future__ import annotations

import numpy as np

from .arith import abs as abs_, convert, div, equal, mul, where
from .core import PRIMITIVES, Primitive, Zero, register, wrapper_of, zero_if_any
from .shape import elementwise_batch
from ..ir import Aval

__all__ = ["real", "imag", "conj", "real_dtype", "complex_abs_jvp", "COMPLEX_OK",
           "declare_complex_ok"]


def real_dtype(dtype):
    """float32 for complex64, float64 for complex128; a real dtype is kept."""
    return np.empty(0, dtype).real.dtype


def _part_aval(x):
    """The real part's aval: same shape, the real dtype of the same width."""
    return Aval(x.shape, real_dtype(x.dtype), weak=x.weak)


_PY_NUMBERS = (int, float, complex)


# --- real --------------------------------------------------------------
def real_impl(x):
    if type(x) in _PY_NUMBERS:
        return float(x.real)            # a Python number's part is one (weakly typed)
    return np.real(x).copy()[()]        # a copy: NumPy's is a view of the operand


def real_jvp(primals, tangents):
    return real(primals[0]), real(tangents[0])


def real_transpose(ct, x):
    # Re(c * real(t)) = Re((c + 0j) * t) for real c: the cotangent is ct as complex
    return (convert(ct, dtype=x.aval.dtype) if x.aval.dtype.kind == "c" else ct,)


real_p = register(Primitive("real", nargs=1, impl=real_impl, jvp=real_jvp,
                            transpose=real_transpose, abstract_eval=_part_aval,
                            complex_ok=True))
real_p.zero_rule = zero_if_any(real_p)
real = wrapper_of(real_p)
real_p.batch = elementwise_batch(real)


# --- imag --------------------------------------------------------------
def imag_impl(x):
    if type(x) in _PY_NUMBERS:
        return float(x.imag)
    return np.imag(x).copy()[()]


def imag_jvp(primals, tangents):
    return imag(primals[0]), imag(tangents[0])


def imag_transpose(ct, x):
    # Re(c * imag(t)) = c * t_y = Re(-1j * c * t) for real c
    if x.aval.dtype.kind != "c":
        return (Zero(x.aval),)          # a real value's imaginary part is constant 0
    return (mul(ct, -1j),)


imag_p = register(Primitive("imag", nargs=1, impl=imag_impl, jvp=imag_jvp,
                            transpose=imag_transpose, abstract_eval=_part_aval,
                            complex_ok=True))
imag_p.zero_rule = zero_if_any(imag_p)
imag = wrapper_of(imag_p)
imag_p.batch = elementwise_batch(imag)


# --- conj --------------------------------------------------------------
def conj_impl(x):
    if type(x) in _PY_NUMBERS:
        return x.conjugate()
    return np.conjugate(x)[()]


def conj_jvp(primals, tangents):
    return conj(primals[0]), conj(tangents[0])


def conj_transpose(ct, x):
    # Re(c * conj(t)) = Re(conj(c) * t): conj is its own transpose
    return (conj(ct),)


def _same_aval(x):
    return x


conj_p = register(Primitive("conj", nargs=1, impl=conj_impl, jvp=conj_jvp,
                            transpose=conj_transpose, abstract_eval=_same_aval,
                            complex_ok=True))
conj_p.zero_rule = zero_if_any(conj_p)
conj = wrapper_of(conj_p)
conj_p.batch = elementwise_batch(conj)


# --- |z| (the complex half of arith.abs's rule) ------------------------
def complex_abs_jvp(x, x_dot):
    """d|z| = Re(conj(z) dz) / |z|, real. At z = 0, where |z| has no
    derivative, the tangent is 0 (JAX's value there too)."""
    out = abs_(x)
    safe = where(equal(out, 0), 1.0, out)
    return out, div(real(mul(conj(x), x_dot)), safe)


# --- the primitives whose rules hold for complex values -----------------
# Each was audited: its jvp is right for complex operands (holomorphic, or
# written with real/imag/conj as above), its transpose is the linear one
# (no conjugation), its shape rule gives NumPy's complex dtype. Absent on
# purpose: orderings (less, greater, maximum, minimum, reduce_max/min,
# argmax/min, sign, floor, ceil, round, remainder, floor_divide, clip...),
# undefined or not holomorphic on C; arctan2, logaddexp, erf, which are real
# functions; slogdet and cholesky (log|det| and Hermitian factors need rules
# of their own); custom_jvp/custom_vjp calls (the user's rules are written
# for what the user had in mind: a complex value reaching one is refused).
COMPLEX_OK = (
    # holomorphic elementwise: d f = f'(z) dz, the same formula as for reals
    "add", "sub", "neg", "mul", "div", "pow", "exp", "log", "log1p", "expm1", "sqrt",
    "sin", "cos", "tan", "sinh", "cosh", "tanh",
    # elementwise.py's: d log2 = dz / (z ln 2), d log10 = dz / (z ln 10),
    # d 2^z = 2^z ln 2 dz, d (1/z) = -dz / z^2, the same algebra over C
    "log2", "log10", "exp2", "reciprocal",
    # |z|: arith.abs_jvp takes complex_abs_jvp above on complex operands
    "abs",
    # equality and finiteness are defined on C (no derivative either way)
    "equal", "not_equal", "isfinite",
    # linear maps over the reals that commute with i: transposes need no conj
    "add_any", "dup", "reduce_sum", "cumsum", "reshape", "transpose", "broadcast_to",
    "concatenate", "getitem", "index_add", "index_set", "where", "zeros_like", "ones_like",
    # multilinear (holomorphic in each operand), transposed without conjugation
    "matmul", "einsum",
    # holomorphic matrix functions: d inv = -inv da inv, d det = det tr(inv da)
    # (matrix.det_jvp takes that form on complex matrices, the adjugate's on real),
    # solve's rule is the same algebra over C
    "solve", "inv", "det",
    # prod: d prod = sum_i dz_i prod_(j != i) z_j, the same algebra over C;
    # the products of the others are a polynomial (holomorphic), their rule
    # built of equality masks, where, div and running sums
    "reduce_prod", "prod_others",
    # real <-> complex: the tangent converts the same way; the transpose of
    # real -> complex is real(ct) (cast_float), of complex -> complex a conversion
    "convert",
    # control flow: structure only. Their rules carry whatever their body's
    # equations produce (each of which is checked on its own), tangent
    # masks are by is_float ("fc"), cotangents are cast by cast_float
    "cond", "while_loop", "for_loop", "loop_forward", "loop_lin", "loop_reverse",
    "checkpoint", "checkpoint_lin", "checkpointed_loop",
)



def declare_complex_ok():
    """Set ``complex_ok`` on the rows above: called once by the package's
    ``__init__`` when every primitive module is imported (control flow and
    checkpointing register after this module)."""
    for name in COMPLEX_OK:
        PRIMITIVES[name].complex_ok = True
