"""The rows of the primitive table, one module per family; importing this package registers
them all in ``PRIMITIVES`` (``core.primitive``). The rows with sub-Programs are in ``control``,
the functions users call (``np.sin``...) in ``numpy`` and ``scipy``: importing ``wengert``
imports every layer, so the table is complete before any rule runs.

Layer: primitives.
"""
from ..core.primitive import PRIMITIVES  # noqa: F401  (the table, read by the tests)
from . import (  # noqa: F401  (each family registers its rows)
    adjugate, arith, bessel, casts, convolution, correlation, decomp, dft, eig, einsum,
    elementwise, fanout, gather, gauge, host, index, linalg, lstsq, matfuncs, matrix,
    ordering, parts, positions, predicates, reduce, runtime_shapes, safe, scan, scatter,
    selection, shape, special, stop, transcendental, triangular)
