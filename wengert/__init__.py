"""wengert: automatic differentiation for plain Python and NumPy code.

Layer: root.
"""
from . import primitives, numpy, control  # noqa: F401  (every layer registers its rows)
from .api.transforms import (
    grad, value_and_grad, jvp, vjp, linearize, linear_transpose, make_program)
from .api.jacobians import jacfwd, jacrev, hessian
from .api.sparsity import jacobian_sparsity, hessian_sparsity
from .api.sparse import sparse_jacfwd, sparse_jacrev, sparse_hessian
from .api.loops import fori_loop, while_loop
from .api.jit import jit
from .control.custom import custom_jvp, custom_vjp
from .control.checkpoint_loop import checkpointed
from .api.checkpoint import checkpoint
from .api.explain import explain
from .api.debug import debug_nans, nan_safe
from .api.vmap import vmap
from .api import tree
from .primitives.scatter import IndexUpdater as at
from .primitives.stop import stop_gradient
from .core.errors import (
    WengertError, NonScalarOutputError, NonDifferentiableInputError, NoDerivativeRule,
    ShapeMismatchError, ConcretizationError, UnsupportedSyntax, BackendError, NumbaMissingError,
    NumbaCompileError, NumbaFallbackWarning)
from .api import (  # noqa: F401  (api.pickling: how transformed functions pickle)
    pickling as api_pickle)
from . import testing

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "linearize", "linear_transpose", "jacfwd", "fori_loop", "while_loop",
           "jacrev", "hessian", "make_program", "jit", "custom_jvp", "custom_vjp", "checkpoint",
           "checkpointed", "at", "testing", "stop_gradient", "explain", "debug_nans", "nan_safe",
           "vmap",
           "tree", "jacobian_sparsity", "hessian_sparsity", "sparse_jacfwd", "sparse_jacrev",
           "sparse_hessian",
           "WengertError", "NonScalarOutputError", "NonDifferentiableInputError",
           "NoDerivativeRule", "ShapeMismatchError", "ConcretizationError", "UnsupportedSyntax",
           "BackendError", "NumbaMissingError", "NumbaCompileError", "NumbaFallbackWarning"]
__version__ = "0.1.0"
