"""``python -m torchlight info``."""

import sys

from .info import main

sys.exit(main())
