"""wmma kernels as block loops (simulator/block_loops_wmma.py): a kernel whose warp-collective
calls the whole block reaches in block-uniform control flow runs as loops in a fast build, with
the same output as with fibers (SIMULATOR_FIBERS=1) and the host's product; one that calls them
under a branch on the thread's warp and one whose mma_sync arguments step a counter keep their
fibers and are still right; the checkers keep fibers.

The program (kernels/wmma_shares.cu's "loops" case) checks each result against the host's and
prints it; ``SIMULATOR_LAUNCH_LOG=1`` makes the runtime say how each launch ran. The wmma programs of
test_wmma_shares.py and test_wmma_double.py are compared the same way here.
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, run_apart

PROGRAM = KERNELS / "wmma_shares.cu"
LOOPS = ("loops",)  # the program's case of these kernels


@pytest.fixture(scope="module")
def fast_runs():
    """The program in a fast build: block loops allowed, then fibers forced."""
    return run_apart(PROGRAM, "fast", "0", *LOOPS), run_apart(PROGRAM, "fast", "1", *LOOPS)


def test_uniform_wmma_kernel_runs_as_block_loops_and_a_warp_branch_keeps_fibers(fast_runs):
    (_, _, ways), (_, _, forced) = fast_runs
    assert ways == {"tiles_loop": "as block loops", "warp_branch": "with fibers", "counted": "with fibers"}
    assert forced == dict.fromkeys(ways, "with fibers")


def test_results_are_the_hosts_and_bit_identical_to_fibers(fast_runs):
    (loops_out, loops_err, _), (fibers_out, fibers_err, _) = fast_runs
    assert re.findall(r"^(\w+) (ok|WRONG) (\w+)$", loops_out, re.M) == [
        ("tiles_loop", "ok", "cudaSuccess"),
        ("warp_branch", "ok", "cudaSuccess"),
        ("counted", "ok", "cudaSuccess"),
    ]
    assert loops_out == fibers_out
    assert loops_err == fibers_err == ""


@pytest.mark.parametrize(
    ("program", "args", "kernels"),
    [("wmma_shares.cu", (), {"chain", "partial"}), ("wmma_shares.cu", ("double",), {"dmma"})],
    ids=["shares", "double"],
)
def test_the_wmma_test_programs_run_as_block_loops_with_the_fibers_output_and_reports(program, args, kernels):
    loops_out, loops_err, ways = run_apart(KERNELS / program, "fast", "0", *args)
    fibers_out, fibers_err, forced = run_apart(KERNELS / program, "fast", "1", *args)
    assert ways == dict.fromkeys(kernels, "as block loops")
    assert forced == dict.fromkeys(kernels, "with fibers")
    assert loops_out == fibers_out
    # wmma_shares' 16-thread block: the same report of the partial warp, at the same line.
    assert loops_err == fibers_err


@pytest.mark.parametrize("mode", ["memcheck", "synccheck"])
def test_the_checkers_keep_fibers_and_the_results(mode):
    out, _, ways = run_apart(PROGRAM, mode, "0", *LOOPS)
    assert ways == {"tiles_loop": "with fibers", "warp_branch": "with fibers", "counted": "with fibers"}
    assert re.findall(r"^(\w+) (ok|WRONG) ", out, re.M) == [
        ("tiles_loop", "ok"),
        ("warp_branch", "ok"),
        ("counted", "ok"),
    ]


# nvcc builds the program in test_wmma_shares.py (one program holds this module's case).
