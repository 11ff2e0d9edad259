"""Structured control flow: equations that hold sub-Programs.

One block per primitive, each with all its rules (impl, shape, jvp,
linearize, transpose, batch, and the passes' dce, simplify, print, emit):

* ``cond.py``        ``cond[branches] (index, *ops)``
* ``for_loop.py``    ``for_loop[body, num_consts, num_carry, reverse, length]
  (n, *consts, *carry, *xs)``
* ``while_loop.py``  ``while_loop[cond, body, num_consts, num_carry] (*consts, *carry)``

and what they share: ``params.py`` (the operand and output layouts, written
once), ``stage.py`` (a Python function staged as a loop body), ``loops.py``
(tangents, residuals and types of loops), ``passes.py`` (the loops' dce,
simplify and print rules), ``common.py``.

Layer: control.
"""
from .cond import cond, cond_p
from .for_loop import RAGGED_BATCH, bind_for, for_loop, for_loop_p
from .loops import RaggedStack
from .while_loop import bind_while, while_loop, while_loop_p
from .for_loop import for_loop_jvp, for_loop_linearize  # the checkpointed loops' forward mode

__all__ = ["cond", "cond_p", "for_loop", "for_loop_p", "while_loop", "while_loop_p",
           "bind_for", "bind_while", "RaggedStack", "RAGGED_BATCH", "for_loop_jvp",
           "for_loop_linearize"]
