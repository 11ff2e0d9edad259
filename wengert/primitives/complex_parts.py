"""Complex values: the conventions, and the one list of primitives whose
rules hold for them. The primitives that take complex values apart
(``real``, ``imag``, ``conj``) are in ``arith``, beside ``convert``: each
one's rules use the other (the transpose of real -> complex is ``real``).

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
``-1j * ct`` and ``conj(ct)``. ``|z|`` (``ordering.abs``) uses
``d|z| = Re(conj(z) dz) / |z|`` on complex operands, written with them.

``COMPLEX_OK`` at the end lists the primitives audited for complex values;
complex operands or results of any other primitive raise
``UnsupportedDtypeError`` naming it (``staging`` and ``transforms.jvp``).
"""
from __future__ import annotations

from ..core.primitive import PRIMITIVES

__all__ = ["COMPLEX_OK", "declare_complex_ok"]


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
    # |z|: ordering.abs_jvp takes complex_abs_jvp on complex operands
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
