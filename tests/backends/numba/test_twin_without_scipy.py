"""With numba installed but not SciPy (numba alone, not the ``[numba]`` extra), the twin's matmul
takes its own tiled kernel instead of failing in numba's BLAS binding."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.requires_backend("numba", reason="runs the numba CPU twin")


def test_matmul_without_scipy_runs_the_tiled_kernel():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["scipy"] = None  # as if SciPy were not installed
        import numpy as np
        from torchlight.backends.numba_twin.backend import NumbaBackend
        from torchlight.core.tensor_data import TensorData
        rng = np.random.default_rng(0)
        a, b = rng.standard_normal((2, 5, 7)), rng.standard_normal((2, 7, 3))
        backend = NumbaBackend()
        out = backend.matmul(TensorData.from_array(a), TensorData.from_array(b))
        np.testing.assert_allclose(out.array, a @ b, rtol=1e-10)
        print("FALLBACKS", sorted(backend.fallbacks))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_ENABLE_CUDASIM": "0"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "FALLBACKS ['matmul_blas']" in done.stdout
    assert "scipy" not in done.stderr.lower()
