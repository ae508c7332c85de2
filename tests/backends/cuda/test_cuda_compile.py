"""The kernels tier: ci/compile_ptx.py builds every registered numba-cuda kernel for the GPU.

The simulator type-checks nothing, so a kernel can run there and still not compile: a planted
kernel proves the check catches exactly that and names the kernel.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.requires_backend(
    "cuda", installed=True, reason="compiles the numba-cuda kernels to PTX (no GPU needed)"
)

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "ci" / "compile_ptx.py"

PLANTED = """
import numba
from numba import cuda

from torchlight.backends.numba_cuda.kernels import KernelSpec
from torchlight.backends.numba_cuda.provider import CudaProvider


def planted_list_append(out, a, n):
    i = cuda.grid(1)
    if i < n:
        # Plain Python is happy with a list; numba-cuda cannot allocate one on the device.
        seen = []
        seen.append(a[i])
        out[i] = seen[0] * 2.0


PLANTED_SIG = (numba.float32[::1], numba.float32[::1], numba.int64)


class PlantedProvider(CudaProvider):
    @classmethod
    def kernel_specs(cls, launch=None):
        planted = KernelSpec("planted_list_append[float32]", "planted", planted_list_append, PLANTED_SIG)
        return [*super().kernel_specs(launch), planted]
"""


def child_env(tmp_path: Path, simulator: bool) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT), env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep
    )
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    return env


def compile_ptx(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path / "ptx"), *args],
        capture_output=True,
        text=True,
        env=child_env(tmp_path, simulator=False),
        timeout=600,
        check=False,
    )


@pytest.mark.kernels
def test_planted_kernel_runs_in_the_simulator_but_fails_the_compile_check(tmp_path):
    (tmp_path / "planted_kernels.py").write_text(PLANTED)
    simulated = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                """
                import numpy as np
                from numba import cuda
                from planted_kernels import PlantedProvider
                spec = next(s for s in PlantedProvider.kernel_specs() if s.name.startswith("planted"))
                a = np.arange(5, dtype=np.float32)
                out = np.zeros_like(a)
                cuda.jit(spec.signature)(spec.pyfunc)[1, 8](out, a, a.size)
                print("SIM", out.tolist())
                """
            ),
        ],
        capture_output=True,
        text=True,
        env=child_env(tmp_path, simulator=True),
        timeout=300,
        check=False,
    )
    assert simulated.returncode == 0, simulated.stderr
    assert "SIM [0.0, 2.0, 4.0, 6.0, 8.0]" in simulated.stdout

    done = compile_ptx(
        tmp_path, "--provider", "planted_kernels:PlantedProvider", "-k", "planted", "-k", "map_neg[float32]"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL planted_list_append[float32] sm_80" in done.stdout
    assert "FAIL planted_list_append[float32] sm_90" in done.stdout
    assert "planted_list_append[float32] sm_80: compile:" in done.stderr
    # The real kernel selected alongside still builds: the failure is the planted kernel's own.
    assert "ok   map_neg[float32] sm_80" in done.stdout
    assert "map_neg" not in done.stderr


@pytest.mark.kernels
def test_kernels_of_every_kind_compile_for_sm80_and_sm90(tmp_path):
    """A sample across kinds and dtypes (`nox -s kernels` compiles the whole registry)."""
    sample = [
        "map_tanh[float32]",
        "zip_pow[float64]",
        "reduce_max[float32]",
        "matmul[float64]",
        "attn_softmax_fw[float32]",
        "layernorm_bw[float64]",
    ]
    done = compile_ptx(tmp_path, *[arg for name in sample for arg in ("-k", name)])
    assert done.returncode == 0, done.stdout + done.stderr
    for name in sample:
        for sm in ("sm_80", "sm_90"):
            assert f"ok   {name} {sm}" in done.stdout
    assert (tmp_path / "ptx" / "matmul_float64.sm_90.ptx").read_text().lstrip().startswith("//")


def test_compile_check_refuses_a_bad_arch(tmp_path):
    done = compile_ptx(tmp_path, "--arch", "sm_x")
    assert done.returncode == 2
    assert "'x'" in done.stderr and "compute capability" in done.stderr


@pytest.mark.kernels
def test_compile_ptx_writes_its_counts_for_the_matrix_report(tmp_path):
    """``--json`` records the same counts as the summary line (the report's compile section)."""
    out = tmp_path / "compile_ptx.json"
    done = compile_ptx(tmp_path, "--arch", "80", "-k", "map_neg[float32]", "--no-ptxas", "--json", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    counts = json.loads(out.read_text())["compile_ptx"]
    line = re.search(r"compile_ptx: (\d+)/(\d+) kernel builds passed", done.stdout)
    assert line and (counts["passed"], counts["total"]) == (int(line[1]), int(line[2]))
    assert counts["archs"] == ["sm_80"] and counts["failures"] == [] and counts["total"] == 1
