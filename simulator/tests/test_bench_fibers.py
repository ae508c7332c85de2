"""benchmarks/bench_simulator.py runs each row the way its label says: the rows named
``SIMULATOR_FIBERS=1`` with fibers and the others as built (block loops, plain loops), checked
from the runtime's own launch log at small sizes. The runtime reads SIMULATOR_FIBERS once per
loaded library, so a row that only set the variable around its calls would run as built.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from .conftest import REPO

_LOG = re.compile(r"launch log \(\w+\): kernel '(\w+)' \(launched at [^)]*\) runs ([^:]+)(?:: .+)?$")
_ROW = re.compile(r"^bench row: (\w+)$")

# Each row and how every one of its launches must run.
EXPECTED = {
    "add_plain": "as a plain loop",
    "add_fibers": "with fibers",
    # Launched by name or by address, add_one's column index narrows in a loop of its own
    # (block_loops_plain.py); add_plain's launch knows only "barrier-free".
    "add_built": "as block loops",
    "add_graph": "as block loops",
    "add_address": "as block loops",
    "add_stride": "as block loops",  # its grid-stride loop runs in lockstep rounds
    "tree_sum": "as block loops",
    "tree_sum_fibers": "with fibers",
    "warp_sum": "as block loops",  # its shuffles run as lockstep exchanges (block_loops_warps.py)
    "warp_sum_fibers": "with fibers",
    "naive": "as block loops",  # its column walk runs in lockstep order (block_loops_interchange.py)
    "tiled": "as block loops",
    "tiled_fibers": "with fibers",
}

SCRIPT = """
import sys
sys.path.insert(0, "benchmarks")
import bench_simulator as b
b.time_against_numpy(4 * b.BLOCK, 1)
b.time_matmul(32, 1)
"""


def _ways(stderr: str) -> dict[str, set[str]]:
    """How the launches of each bench row ran, from the launch log lines after its marker."""
    ways: dict[str, set[str]] = {}
    row = None
    for line in stderr.splitlines():
        if m := _ROW.match(line):
            row = m.group(1)
            ways[row] = set()
        elif (m := _LOG.match(line)) and row is not None:
            ways[row].add(m.group(2))
    return ways


def test_every_bench_row_runs_as_labelled():
    env = {**os.environ, "SIMULATOR_LAUNCH_LOG": "1"}
    env.pop("SIMULATOR_FIBERS", None)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=400, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    ways = _ways(proc.stderr)
    assert ways == {row: {how} for row, how in EXPECTED.items()}, proc.stderr[-3000:]
