"""`run --mode racecheck` (`--racecheck-memory shared`, the default): the simulator's own detector
of hazards on __shared__ memory (runtime/shared_races.cpp). A barrier, a __syncwarp within a warp, one thread
or atomics order accesses; every other pair of accesses of one block to a shared byte, one of
them a write, is a finding that names both program lines (program_shared_races.cu)."""

from __future__ import annotations

import re

import pytest

from simulator.run import run_program

from .conftest import KERNELS, line_of, run_cli, run_findings

PROGRAM = KERNELS / "program_shared_races.cu"


def _run(case: str, *options: str, memory: str = "shared"):
    return run_cli(
        "run", str(PROGRAM), "--mode", "racecheck", "--racecheck-memory", memory, *options, "--", case
    )


def _pairs(findings: list[str]) -> set[tuple[int, int]]:
    """Each finding's two program lines: the later access's, then the earlier one's."""
    out = set()
    for f in findings:
        lines = [int(n) for n in re.findall(rf"{PROGRAM.name}:(\d+)", f)]
        assert len(lines) == 2, f
        out.add((lines[0], lines[1]))
    return out


def _line(marker: str) -> int:
    return line_of(PROGRAM, f"PLANT: {marker}")


# What the clean kernels compute, worked out here independently of the program.
_SUM = sum(i % 97 for i in range(1024))
CLEAN = {
    "sum": f"sum {_SUM} {_SUM} {_SUM}",  # three blocks, one tree reduction each
    "warp_sync": f"warp_sync {1 * 3} {0 * 3} {3 * 3}",  # out[i] = 3 * (i ^ 1)
    "bytes": f"bytes {sum(i & 0x7F for i in range(256))} 0 0",
    "copy_wait": f"copy_wait {1 % 97} {2 % 97} {3 % 97}",  # out[i] = in[(i + 1) % 64], in[j] = j % 97
    # each warp's sum stored by all its lanes (in[j] = j % 97): 0 + ... + 31, 32 + ... + 63
    "warp_same": f"warp_same {sum(range(32))} {sum(range(32, 64))} 0",
}


@pytest.mark.parametrize("case", sorted(set(CLEAN) - {"warp_same"}))
def test_ordered_accesses_run_clean_and_compute_what_they_compute(case):
    proc = _run(case)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == CLEAN[case]
    assert "racecheck" not in proc.stderr


def test_lanes_of_a_warp_storing_one_value_in_one_statement_are_a_warning_only():
    # As compute-sanitizer classifies it: a warning that leaves the status alone, not a finding.
    proc = _run("warp_same")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == CLEAN["warp_same"]
    assert run_findings(proc.stderr) == []
    warnings = [ln for ln in proc.stderr.splitlines() if "racecheck: warning (not a hazard)" in ln]
    assert len(warnings) == 1 and f"{PROGRAM.name}:{_line('one value per warp')}" in warnings[0], proc.stderr


HAZARDS = {
    # thread 0 runs first (no barrier): its read of s[1] precedes thread 1's write, and the
    # last thread's read of s[0] follows thread 0's write
    "no_barrier": {(_line("write"), _line("read")), (_line("read"), _line("write"))},
    "raw": {(_line("late read"), _line("early write"))},
    "warp_nosync": {(_line("lane write"), _line("lane read")), (_line("lane read"), _line("lane write"))},
    # a __syncwarp orders the lanes of one warp, not two warps
    "cross_warp": {(_line("cross write"), _line("cross read")), (_line("cross read"), _line("cross write"))},
    "readers": {(_line("one writer"), _line("many readers")), (_line("many readers"), _line("one writer"))},
    # cg::memcpy_async's copy (made at once, each thread its part) read before cg::wait
    "copy_early": {(_line("async copy"), _line("early read")), (_line("early read"), _line("async copy"))},
    # one statement of one warp, but its lanes store different values
    "warp_lanes_differ": {(_line("a value per lane"), _line("a value per lane"))},
    # the same value, but from two warps
    "warps_one_address": {(_line("every warp to one address"), _line("every warp to one address"))},
    # an 8-byte read whose first word many threads read (no judging needed there) and whose
    # second word another thread wrote
    "wide_read": {(_line("wide read"), _line("high word write"))},
}


@pytest.mark.parametrize("case", sorted(HAZARDS))
def test_each_unordered_pair_is_one_finding_naming_both_lines(case):
    proc = _run(case)
    assert proc.returncode == 66, proc.stdout + proc.stderr
    findings = run_findings(proc.stderr)
    assert all(f.startswith("racecheck: data race (shared memory): ") for f in findings), findings
    assert _pairs(findings) == HAZARDS[case]
    assert len(findings) == len(HAZARDS[case])  # once per pair of lines, not per block or byte


def test_findings_name_the_threads_of_the_block():
    findings = run_findings(_run("raw").stderr)
    assert len(findings) == 1
    assert "write by kernel read_then_write block (0,0,0) thread (5,0,0)" in findings[0]
    assert "read by kernel read_then_write block (0,0,0) thread (900,0,0)" in findings[0]


def test_global_memory_is_judged_only_by_the_full_racecheck():
    shared = _run("global")
    assert shared.returncode == 0, shared.stderr
    assert run_findings(shared.stderr) == []
    full = _run("global", memory="all")
    assert full.returncode == 66, full.stderr
    assert f"{PROGRAM.name}:{_line('global write')}" in "\n".join(run_findings(full.stderr))


def test_racecheck_judges_shared_memory_unless_asked_for_all():
    # As compute-sanitizer's racecheck: without the option, a race on global memory is not judged
    # and one on shared memory is reported by the simulator's own detector.
    plain = run_cli("run", str(PROGRAM), "--mode", "racecheck", "--", "global")
    assert plain.returncode == 0 and run_findings(plain.stderr) == [], plain.stderr
    plain = run_cli("run", str(PROGRAM), "--mode", "racecheck", "--", "no_barrier")
    assert plain.returncode == 66, plain.stderr
    assert _pairs(run_findings(plain.stderr)) == HAZARDS["no_barrier"]
    assert all(f.startswith("racecheck: data race (shared memory): ") for f in run_findings(plain.stderr))


def test_launch_filters_choose_the_launches_judged():
    proc = _run("no_barrier", "--kernel-name-exclude", "no_barrier")
    assert proc.returncode == 0, proc.stderr
    assert run_findings(proc.stderr) == []


def test_the_option_is_refused_outside_racecheck_and_for_an_unknown_value():
    proc = run_cli("run", str(PROGRAM), "--mode", "memcheck", "--racecheck-memory", "shared")
    assert proc.returncode == 2
    assert "--racecheck-memory is a racecheck option: add --mode racecheck (not memcheck)" in proc.stderr
    proc = run_cli("run", str(PROGRAM), "--mode", "racecheck", "--racecheck-memory", "global")
    assert proc.returncode == 2 and "invalid choice: 'global'" in proc.stderr
    with pytest.raises(ValueError, match="racecheck_memory='global'"):
        run_program([str(PROGRAM)], "racecheck", racecheck_memory="global")
    with pytest.raises(ValueError, match="not for --mode fast"):
        run_program([str(PROGRAM)], "fast", racecheck_memory="shared")
