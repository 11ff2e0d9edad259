"""What every test folder shares: the support modules in ``tests/`` (``checks``,
``cases``, ``fn_cases*``, ``*_cases``, ``source_corpus``...), imported by name
from any folder, and the repository root (``bench``).

The test files are imported by path (``--import-mode=importlib`` in
pyproject.toml), so two folders may hold files of one name
(``tests/core/test_rules.py``, ``tests/primitives/test_rules.py``), and no test
folder is a package that could shadow a module. A worker process started by
spawn (``api/test_pickling.py``) inherits this ``sys.path``.
"""
import os
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)

for path in (ROOT, TESTS):
    if path not in sys.path:
        sys.path.insert(0, path)
