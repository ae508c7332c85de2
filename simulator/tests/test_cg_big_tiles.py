"""Cooperative-groups tiles of 64..1024 threads (block_tile_memory, and CUDA 11's experimental
spelling): ranks, sizes, sync() around a shared-memory exchange, shfl, any/all, cg::reduce and the
scans, compared with numpy over the same segments of the input, in every mode."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, mode_args, run_cli
from .test_run import _values

PROGRAM = KERNELS / "program_cg_big_tiles.cu"
N = 1024
SIZES = (64, 128, 256, 512, 1024)


def _ints(text: str) -> np.ndarray:
    return np.array([int(t) for t in text.split(",")], dtype=np.int64)


def _per_tile(x: np.ndarray, size: int, fn) -> np.ndarray:
    return np.concatenate([fn(x[s : s + size]) for s in range(0, len(x), size)])


def _exclusive(seg: np.ndarray) -> np.ndarray:
    out = np.zeros_like(seg)
    out[1:] = np.cumsum(seg)[:-1]
    return out


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_big_tiles_match_numpy(mode):
    proc = run_cli("run", str(PROGRAM), *mode_args(mode))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    x = (np.arange(N, dtype=np.int64) * 37 + 11) % 82 - 40
    x[700] = 42
    i = np.arange(N)
    for s in SIZES:
        rank, meta = i % s, i // s
        np.testing.assert_array_equal(_ints(v[f"ranks_{s}"]), rank * 100000 + meta * 100 + N // s)
        np.testing.assert_array_equal(_ints(v[f"sizes_{s}"]), np.full(N, s * 10 + 1))
        np.testing.assert_array_equal(_ints(v[f"next_{s}"]), x[meta * s + (rank + 1) % s])
        np.testing.assert_array_equal(_ints(v[f"shfl5_{s}"]), x[meta * s + 5])
        has42 = _per_tile(x, s, lambda seg: np.full(len(seg), int((seg == 42).any())))
        np.testing.assert_array_equal(_ints(v[f"anyall_{s}"]), has42 * 10 + 1)
        np.testing.assert_array_equal(
            _ints(v[f"sum_{s}"]), _per_tile(x, s, lambda g: np.full(len(g), g.sum()))
        )
        np.testing.assert_array_equal(
            _ints(v[f"max_{s}"]), _per_tile(x, s, lambda g: np.full(len(g), g.max()))
        )
        np.testing.assert_array_equal(_ints(v[f"inc_{s}"]), _per_tile(x, s, np.cumsum))
        np.testing.assert_array_equal(_ints(v[f"exc_{s}"]), _per_tile(x, s, _exclusive))
    np.testing.assert_array_equal(_ints(v["xsum_256"]), _per_tile(x, 256, lambda g: np.full(len(g), g.sum())))
    np.testing.assert_array_equal(_ints(v["group_128"]), (i % 128) * 1000 + 128)
    assert v["error"] == "cudaSuccess"
    assert "finding" not in proc.stderr
