"""NVTX annotations (profiler ranges and names) build and run with no profiler attached, as on a
GPU without a tool: NVTX's documented no-tool return values, and the program's values unchanged."""

from __future__ import annotations

import pytest

from .conftest import KERNELS, run_cli
from .test_run import _values

PROGRAM = KERNELS / "program_nvtx.cu"


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_nvtx_ranges_and_names_run_without_a_profiler(mode):
    proc = run_cli("run", str(PROGRAM), "--mode", mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    # With no tool attached NVTX tracks no push/pop nesting (NVTX_NO_PUSH_POP_TRACKING is -2),
    # range ids are 0 and domain handles null.
    assert v["pushed"] == "-2"
    assert v["popped"] == "-2"
    assert v["range"] == "0"
    assert v["domain_null"] == "1"
    # saxpy with a = 2 over x[i] = 0.5 i and y = 3: y[i] = i + 3.
    assert float(v["y0"]) == 3.0
    assert float(v["y1"]) == 4.0
    assert float(v["ylast"]) == 999.0 + 3.0
    assert v["error"] == "cudaSuccess"
    assert "finding" not in proc.stderr
