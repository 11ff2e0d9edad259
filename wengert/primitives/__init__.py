"""The primitive table. Importing this package registers every primitive;
``PRIMITIVES`` maps names to rows."""
from .core import PRIMITIVES, NOT_LINEAR, Primitive, Zero, Linear, bind  # noqa: F401
from . import arith, shape, reduce, index, linalg, matrix, composite, custom, control, numpy_api  # noqa: F401
from . import checkpoint, host, complex_parts, fft, eig  # noqa: F401

complex_parts.declare_complex_ok()
