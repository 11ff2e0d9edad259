"""The core: what every layer above builds on, and which imports nothing above it.

The IR (``atoms``: avals, variables, literals; ``ir``: equations and Programs, ``dce`` and the
structural keys passes share; ``printing``), symbolic lengths (``dims``, ``context``: what one
generation of code collects), the ``Primitive`` type and its one registry (``primitive``) and
the rule types a row is made of (``rules``, ``pass_rules``), applying a primitive and the
traces (``trace``: ``bind``, ``eval_program``), the recorder (``staging``) and the traced
value (``tracer``, ``inplace``), the interfaces the layers above provide (``tracer``'s NumPy
face, ``subprograms``), how generated code spells literals (``literals``), pytrees, errors.

Layer: core (imports only NumPy and the standard library).
"""
