"""cg::inclusive_scan / cg::exclusive_scan (<cooperative_groups/scan.h>) over tiles and a coalesced
group, compared with numpy's running sums and maxima over the same groups; and tiles' shuffles
of values over 8 bytes (same program, its argument shfl_values)."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, mode_args, run_cli
from .test_run import _values

PROGRAM = KERNELS / "program_cg_scan.cu"
N = 64


def _segments(x: np.ndarray, size: int, fn) -> np.ndarray:
    return np.concatenate([fn(x[s : s + size]) for s in range(0, len(x), size)])


def _exclusive_sum(seg: np.ndarray) -> np.ndarray:
    out = np.zeros_like(seg)
    out[1:] = np.cumsum(seg)[:-1]  # rank 0 gets T() = 0
    return out


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_tile_and_coalesced_scans_match_numpy(mode):
    proc = run_cli("run", str(PROGRAM), *mode_args(mode))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    arr = {
        k: np.array([int(t) for t in v[k].split(",")])
        for k in ("in", "inc32", "exc32", "max8", "exc8", "odd_inc")
    }
    x = (np.arange(N) * 37 + 11) % 23 - 7
    np.testing.assert_array_equal(arr["in"], x)
    np.testing.assert_array_equal(arr["inc32"], _segments(x, 32, np.cumsum))
    np.testing.assert_array_equal(arr["exc32"], _segments(x, 32, _exclusive_sum))
    np.testing.assert_array_equal(arr["max8"], _segments(x, 8, np.maximum.accumulate))
    np.testing.assert_array_equal(arr["exc8"], _segments(x, 8, _exclusive_sum))
    # The odd lanes of each warp form one coalesced group of 16.
    odd = np.full(N, -1)
    for w in (0, 32):
        lanes = np.arange(w + 1, w + 32, 2)
        odd[lanes] = np.cumsum(x[lanes])
    np.testing.assert_array_equal(arr["odd_inc"], odd)
    assert v["error"] == "cudaSuccess"
    assert "finding" not in proc.stderr


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


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_group_shuffles_move_values_of_any_size(mode):
    """A tile's shfl, shfl_up, shfl_down and shfl_xor of a uint4 and of a 24-byte struct: each
    lane's result worked out from CUDA's definitions of the four shuffles."""
    proc = run_cli("run", str(PROGRAM), *mode_args(mode), "--", "shfl_values")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [_expected_line(i) for i in range(64)]
