"""racecheck and atomics: an atomic orders memory only where the program publishes through it
(after a __threadfence(), and at that address from then on), so a histogram of plain atomicAdds
costs no vector-clock pass per atomic and still runs clean, a fenced threadfence reduction runs
clean, and the same reduction without its fence is the data race it is on a GPU."""

from __future__ import annotations

import pytest

from .conftest import KERNELS, line_of, mode_args, run_cli

PROGRAM = KERNELS / "program_racecheck_atomics.cu"


# What the program prints: 4096 values of 7i+3 fall evenly into 4 bins; the sum of i % 5 over
# 2048 values is 409 whole cycles of 10 plus 0 + 1 + 2.
EXPECTED = {"hist": "bins 4096 4096 4096 4096", "fenced": f"total {409 * 10 + 3}"}


@pytest.mark.parametrize("case", sorted(EXPECTED))
@pytest.mark.parametrize("mode", ["fast", "racecheck", "racecheck-all"])
def test_atomics_that_publish_nothing_or_publish_after_a_fence_run_clean(case, mode):
    proc = run_cli("run", str(PROGRAM), *mode_args(mode), "--", case)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == EXPECTED[case]
    assert "finding" not in proc.stderr and "ThreadSanitizer" not in proc.stderr


def test_a_publication_without_its_threadfence_is_a_race():
    # The race is on global memory: ThreadSanitizer's to judge, not the __shared__-memory default.
    proc = run_cli("run", str(PROGRAM), *mode_args("racecheck-all"), "--", "unfenced")
    assert proc.returncode == 66, proc.stderr
    assert proc.stdout.strip() == EXPECTED["fenced"]  # the answer is right; the order is not guaranteed
    races = [ln.strip() for ln in proc.stderr.splitlines() if ln.startswith("  racecheck: data race")]
    assert len(races) == 1, proc.stderr
    assert f"{PROGRAM}:{line_of(PROGRAM, 'PLANT: publish')}" in races[0], races[0]
    assert f"{PROGRAM}:{line_of(PROGRAM, 'PLANT: read')}" in races[0], races[0]
