"""The public functions, one module per family, composed from the stages below.

``transforms`` (grad, value_and_grad, jvp, vjp, linearize, linear_transpose, make_program),
``loops`` (fori_loop), ``jacobians`` (jacfwd, jacrev, hessian), ``checkpoint``, ``jit``, ``pickling`` (how
the returned functions travel), ``checks`` (what every entry point checks); the source
engine's side (``source``: one generated code per function, its cache ``codes``, the
specialisations ``compiled``), the ``backend`` option, and what every entry does before and
after its transform (``prepare``, ``points``, ``transformed``). Here the stages meet: a
frontend makes a Program, the transforms derive it, ``lower`` makes it imperative, a backend
writes it. The package's ``__init__`` exposes the names of DESIGN.md.

Layer: api (may import every layer).
"""
