"""simulator.findings: a report's first frame in the runtime is skipped for the program's own,
wherever the runtime lives (simulator/runtime/ in the repository, torchlight/simulator/runtime/
when installed)."""

from __future__ import annotations

import pytest

from simulator.findings import parse_findings

RUNTIMES = [
    "/work/repo/simulator/runtime",
    "/venv/lib/python3.11/site-packages/torchlight/simulator/runtime",
]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_race_names_the_first_frame_outside_the_runtime(runtime):
    report = f"""==================
WARNING: ThreadSanitizer: data race (pid=1)
  Write of size 4 at 0x7b0400000010 by thread T2:
    #0 __sim::helper(int*) {runtime}/include/cooperative_groups/memcpy_async.h:40 (prog+0x1)
    #1 copy_then_read(int const*, int*, bool) /home/u/prog.cu:78 (prog+0x2)

  Previous read of size 4 at 0x7b0400000010 by thread T3:
    #0 copy_then_read(int const*, int*, bool) /home/u/prog.cu:80 (prog+0x3)

  Thread T2 'kernel copy_then_read block (0,0,0) thread (1,0,0)' (tid=5, running) created by main thread at:
  Thread T3 'kernel copy_then_read block (0,0,0) thread (0,0,0)' (tid=6, running) created by main thread at:

SUMMARY: ThreadSanitizer: data race /home/u/prog.cu:78 in copy_then_read
=================="""
    assert parse_findings("racecheck", report) == [
        "racecheck: data race: write by kernel copy_then_read block (0,0,0) thread (1,0,0) in "
        "copy_then_read(int const*, int*, bool) at /home/u/prog.cu:78; read by kernel copy_then_read "
        "block (0,0,0) thread (0,0,0) in copy_then_read(int const*, int*, bool) at /home/u/prog.cu:80"
    ]
