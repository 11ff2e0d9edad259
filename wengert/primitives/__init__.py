"""The primitive table. Importing this package registers every primitive;
``PRIMITIVES`` maps names to rows."""
from ..core.primitive import PRIMITIVES, NOT_LINEAR, Primitive, Zero, Linear  # noqa: F401
from ..core.trace import bind  # noqa: F401
from . import (  # noqa: F401
    arith, ordering, transcendental, shape, reduce, index, linalg, einsum, decomp, matrix, lstsq)
from ..numpy import composite, array_methods as numpy_api
from ..control import custom
from .. import control
from .. import numpy as numpy_families  # noqa: F401
from ..control import checkpoint, checkpoint_loop  # noqa: F401
from . import host, special as special_prims, bessel as special_bessel
from . import gather, scan  # noqa: F401
from . import index_lower  # noqa: F401
from . import elementwise, convolution  # noqa: F401
from . import triangular, matfuncs, correlation  # noqa: F401
from . import complex_parts, eig  # noqa: F401
from ..numpy import fft

complex_parts.declare_complex_ok()
