"""Importing torchlight stays light: numba loads only when a backend that needs it is built."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
import torchlight
import torchlight.backends
import torchlight.backends.cuda
t = torchlight.tensor([1.0, 2.0], requires_grad=True)
(t * t).sum().backward()
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "numba_cuda", "llvmlite"))
print(",".join(heavy))
"""


def test_import_does_not_load_numba():
    env = dict(os.environ)
    # The checkout first on the path, so this tests these sources even when not installed.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("TORCHLIGHT_DEVICE", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"import torchlight loaded {done.stdout.strip()}"
