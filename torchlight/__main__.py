"""``python -m torchlight``: the ``torchlight`` command (``torchlight.cli``)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
