"""What the benchmark scripts import beyond the standard library: the module, or a clear stop.

Every script runs the same way from the repository root (``python benchmarks/NAME.py``) and
imports the *installed* torchlight (README, "Set up on a fresh machine"); a missing package
stops the script at once with the line that installs it, instead of a traceback.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

# Package -> the install line, run from the repository root (torchlight is on no package index).
INSTALL = {
    "torchlight": 'pip install ".[numba]"',
    "numpy": 'pip install ".[numba]"',
    "numba": 'pip install ".[numba]"',
    "numba.cuda": 'pip install ".[cuda]"  (".[cuda12]" on a CUDA 12 driver)',
}


def require(module: str, why: str) -> ModuleType:
    """Import ``module``, or exit with status 2 naming it, why it is needed and its install line."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        # Only the package itself being absent is "not installed"; a missing module inside an
        # installed package is a broken install, whose traceback says more.
        top = module.split(".")[0]
        if err.name is None or err.name.split(".")[0] != top:
            raise
        script = Path(sys.argv[0]).name or "this script"
        install = INSTALL.get(module, INSTALL.get(top, f"pip install {top}"))
        print(
            f"{script}: needs {module} ({why}), which is not installed here: "
            f"from the repository root run  {install}",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
