"""``python -m wengert show ...``: the ``wengert`` command (``wengert.cli``)."""
import sys

from .cli import main

sys.exit(main())
