"""The backends: a lowered Program (``lower.Lowered``) -> a callable.

``python`` writes readable Python and NumPy, one statement per equation, and ``exec``s it;
``numba`` writes the same code in numba's subset and compiles it; ``interpret`` walks a Program
with NumPy (the reference every backend is tested against); ``dot`` draws a Program. A
backend asks each row for its ``emit`` rule; it never imports the lowering (the api lowers,
with the writer's options, then writes).

Layer: backends (may import control, scipy, numpy, primitives, core).
"""
