"""The primitive table. Importing this package registers every primitive;
``PRIMITIVES`` maps names to rows."""
from .core import PRIMITIVES, NOT_LINEAR, Primitive, Zero, Linear  # noqa: F401
from .trace import bind  # noqa: F401
from . import arith, ordering, transcendental, shape, reduce, index, linalg, einsum, decomp, matrix, lstsq, composite, custom, control, numpy_api  # noqa: F401
from . import numpy_families  # noqa: F401
from . import checkpoint, checkpoint_loop, host, special_prims, special_bessel  # noqa: F401
from . import gather, scan  # noqa: F401
from . import index_lower  # noqa: F401
from . import elementwise, convolution  # noqa: F401
from . import triangular, matfuncs, correlation  # noqa: F401
from . import complex_parts, fft, eig  # noqa: F401

complex_parts.declare_complex_ok()
