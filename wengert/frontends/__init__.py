"""The frontends: a user's Python function -> a Program.

``source`` reads the function's source (``ast``) and keeps ``if``/``for``/``while`` as
structured regions, following calls into the user's own functions: one Program valid for every
input shape and every path. ``trace`` runs the function on tracers and records what it meets:
a straight-line Program of this call's path (the tape). Both stage through the recorder
(``core.staging``) and the NumPy face (``numpy``).

Layer: frontends (may import every layer below it: transforms, lower, backends, control,
scipy, numpy, primitives, core).

Layer: frontends.
"""
