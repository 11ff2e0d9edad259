"""The transforms: Program -> Program, each a pass that asks the rows for their rules.

``jvp`` (forward mode, interleaved), ``partial_eval`` (linearize = jvp + partial evaluation),
``transpose`` (a linear Program backwards), ``vjp`` (transpose . linearize), ``batching``
(many tangents in one pass), ``simplify`` (identities, constants, common subexpressions, dead
code), ``dup`` (explicit duplication, seed 000). The rows with sub-Programs (``control``)
apply them to their bodies through ``core.subprograms``, given here.

Layer: transforms.
"""
from ..core import subprograms
from .batching import batch_eval, batch_flat, batch_program
from .jvp import jvp_flat, jvp_program
from .partial_eval import linearize_program
from .transpose import transpose_program
from .vjp import vjp_flat

subprograms.provide(jvp_program=jvp_program, linearize_program=linearize_program,
                    transpose_program=transpose_program, batch_eval=batch_eval,
                    batch_program=batch_program, batch_flat=batch_flat,
                    jvp_flat=jvp_flat, vjp_flat=vjp_flat)
