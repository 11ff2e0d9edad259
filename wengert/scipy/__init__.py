"""SciPy's face: ``scipy.special``, ``scipy.stats``, ``scipy.linalg`` and ``scipy.signal``
on traced values, as families of the library table (``numpy.library``).

Nothing here imports SciPy when wengert is imported: ``numpy.library`` imports a family the
first time a SciPy callable is looked up, and only if SciPy is installed (wengert itself needs
NumPy only).

Layer: scipy (may import numpy, primitives, core).
"""
