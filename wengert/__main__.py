"""``python -m wengert show ...``: the ``wengert`` command (``wengert.cli``).

Layer: root.
"""
import sys

from .cli import main

sys.exit(main())
