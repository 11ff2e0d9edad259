"""The Python backend: ``codegen`` (a lowered Program -> readable Python source, exec'd),
``emit`` (the text of one equation's pieces), ``names`` (identifiers and the names the code
reads).

Layer: backends.
"""
