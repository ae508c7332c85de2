"""cg::memcpy_async / cg::wait / cg::wait_prior (<cooperative_groups/memcpy_async.h>) by a block,
warp tiles and a tile of 128 threads, compared with numpy gathers of the same input, in every
mode: racecheck passing means every read of copied data comes after the group's wait."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, mode_args, run_cli
from .test_run import _values

PROGRAM = KERNELS / "program_cg_memcpy_async.cu"
T, M, BLOCKS = 256, 1000, 2


def _ints(text: str) -> np.ndarray:
    return np.array([int(t) for t in text.split(",")], dtype=np.int64)


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_memcpy_async_and_wait_match_numpy(mode):
    proc = run_cli("run", str(PROGRAM), *mode_args(mode))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    h = (np.arange(BLOCKS * M, dtype=np.int64) * 53 + 17) % 997
    i = np.arange(T)
    for b in range(BLOCKS):
        src = h[b * M : (b + 1) * M]
        np.testing.assert_array_equal(
            _ints(v[f"block_{b}"]), src[M - 1 - i] + src[(i * 7) % M] + src[T - 1 - i]
        )
        base = (i // 32) * 32
        mirrored = base + 31 - i % 32
        np.testing.assert_array_equal(
            _ints(v[f"warps_{b}"]), src[500 + mirrored] * 1000 + src[700 + mirrored]
        )
        qbase = (i // 128) * 128
        np.testing.assert_array_equal(_ints(v[f"quarter_{b}"]), src[100 + qbase + 127 - i % 128])
        np.testing.assert_array_equal(_ints(v[f"complete_{b}"]), np.zeros(T, dtype=np.int64))
    assert v["error"] == "cudaSuccess"
    assert "finding" not in proc.stderr
