"""`run --mode racecheck` (`--racecheck-memory shared`) judges shared memory byte by byte, however
wide the accesses and however the runtime keeps its shadow (a cell per whole word, split into a
cell per byte where an access covers part of one): program_shared_race_bytes.cu."""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, line_of, run_cli, run_findings

PROGRAM = KERNELS / "program_shared_race_bytes.cu"


def _run(case: str):
    return run_cli("run", str(PROGRAM), "--mode", "racecheck", "--racecheck-memory", "shared", "--", case)


def _line(marker: str) -> int:
    return line_of(PROGRAM, f"PLANT: {marker}")


def _pairs(findings: list[str]) -> set[frozenset[int]]:
    """Each finding's two program lines, in either order (the order threads run in is not the point)."""
    out = set()
    for f in findings:
        lines = [int(n) for n in re.findall(rf"{PROGRAM.name}:(\d+)", f)]
        assert len(lines) == 2, f
        out.add(frozenset(lines))
    return out


def _bytes_of_words_output() -> str:
    # byte b of the array was stored by thread (b // 2) + 32 * (b % 2); words are little-endian
    def word(k: int) -> int:
        value = sum(((b // 2) + 32 * (b % 2)) << (8 * (b - 4 * k)) for b in range(4 * k, 4 * k + 4))
        return value - (1 << 32) if value >= 1 << 31 else value

    return f"bytes_of_words {word(0)} {word(1)} {word(2)}"


def test_threads_of_both_warps_on_different_bytes_of_one_word_are_no_hazard():
    proc = _run("bytes_of_words")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == _bytes_of_words_output()
    assert "racecheck" not in proc.stderr


HAZARDS = {
    # a word written whole by one thread, one byte of it read by a thread of another warp
    "word_then_byte": {frozenset((_line("one byte read"), _line("whole word write")))},
    # a half-word over bytes 0-1 against byte 1 (another warp); byte 3's writer shares no byte
    "sub_word": {frozenset((_line("half write"), _line("byte one write")))},
    # an 8-byte write over two words against a byte of its second word; a 16-byte read over four
    # words against a byte of its last; an 8-byte read beside that byte is no hazard
    "wide_spans": {
        frozenset((_line("byte six write"), _line("wide write"))),
        frozenset((_line("vector read"), _line("byte thirty write"))),
    },
    # a 4-byte read at offset 2 shares byte 5 with a write; one at offset 6 shares none
    "misaligned": {frozenset((_line("straddling read"), _line("byte five write")))},
    # a word split by a byte write and written whole again, then read whole by another warp
    "rejoined": {frozenset((_line("whole read"), _line("rejoining write")))},
    # lanes of one warp storing different values to one byte in one statement
    "warp_byte_differ": {frozenset((_line("a byte value per lane"),))},
}


@pytest.mark.parametrize("case", sorted(HAZARDS))
def test_an_unordered_pair_sharing_a_byte_is_one_finding_and_bytes_apart_are_none(case):
    proc = _run(case)
    assert proc.returncode == 66, proc.stdout + proc.stderr
    findings = run_findings(proc.stderr)
    assert all(f.startswith("racecheck: data race (shared memory): ") for f in findings), findings
    assert _pairs(findings) == HAZARDS[case]
    assert len(findings) == len(HAZARDS[case])


def test_lanes_of_a_warp_storing_one_byte_value_in_one_statement_are_a_warning_only():
    proc = _run("warp_byte_same")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "warp_byte_same 1 2 0"
    assert run_findings(proc.stderr) == []
    warnings = [ln for ln in proc.stderr.splitlines() if "racecheck: warning (not a hazard)" in ln]
    assert len(warnings) == 1, proc.stderr
    assert f"{PROGRAM.name}:{_line('one byte value per warp')}" in warnings[0]
