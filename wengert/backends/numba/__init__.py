"""The numba backend: the Python backend's code, spelled in numba's subset (``codegen``) and
compiled with ``numba.njit``, with numba's ``@`` for more than 2-d (``matmul``) and the buffers
the code never returns kept between calls (``scratch``, after the escape analysis of
``escape``). numba is an optional dependency: it is imported when first needed.

Layer: backends.
"""
