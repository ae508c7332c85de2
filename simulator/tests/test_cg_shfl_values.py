"""Cooperative-groups shuffles of values over 8 bytes (uint4, a 24-byte struct): CUDA's
thread_block_tile shfl/shfl_up/shfl_down/shfl_xor take any trivially copyable type. Each lane's
result is worked out here from CUDA's definitions of the four shuffles."""

from __future__ import annotations

import pytest

from .conftest import KERNELS, run_cli

PROGRAM = KERNELS / "program_cg_shfl_values.cu"


def _quad(lane: int) -> tuple[int, int, int, int]:
    """The uint4 lane ``lane`` offers."""
    return (lane, 100 + lane, 200 + lane, 300 + lane)


def _expected_line(i: int) -> str:
    quad = _quad
    xor = quad(i ^ 3)  # within the 32-lane tile: i ^ 3 stays in it
    base8 = i - i % 8
    down = i + 2 if i % 8 + 2 < 8 else i  # a lane past the tile's end keeps its own value
    up = i - 1 if i % 8 >= 1 else i
    src5 = (i - i % 32) + 5
    mixed = (down, 0.5 * down, 0.25 * down, -down)
    assert base8 <= down < base8 + 8
    return " ".join(
        [str(i), *map(str, xor), str(mixed[0]), f"{mixed[1]:g}", f"{mixed[2]:g}", str(mixed[3])]
        + [str(quad(up)[3]), str(quad(src5)[2])]
    )


@pytest.mark.parametrize("mode", ["fast", "memcheck", "racecheck", "synccheck"])
def test_group_shuffles_move_values_of_any_size(mode):
    proc = run_cli("run", str(PROGRAM), "--mode", mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [_expected_line(i) for i in range(64)]
