"""libcu++ barriers and pipelines (<cuda/barrier>, <cuda/pipeline>, <cuda_pipeline.h>) compared with
numpy on the same input, in every mode: racecheck passing means every read of another thread's
copy comes after the wait CUDA requires, synccheck that the waits are well formed."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, line_of, mode_args, nvcc_compile, run_cli
from .test_run import _values

PROGRAM = KERNELS / "program_libcu_pipeline.cu"
T, K, BLOCKS = 128, 8, 2


def _ints(text: str) -> np.ndarray:
    return np.array([int(t) for t in text.split(",")], dtype=np.int64)


def _check_barrier(got: np.ndarray, src: np.ndarray) -> None:
    i = np.arange(T)
    np.testing.assert_array_equal(got[:T], src[T - 1 - i])
    sums = src + src[(i + 1) % T]
    np.testing.assert_array_equal(got[T : 2 * T], sums[(i + 5) % T])
    even = i % 2 == 0
    # After the odd threads dropped out, each even thread reads buf[i + 2], which only even
    # threads write (sums * 3) in phase 4.
    np.testing.assert_array_equal(got[2 * T : 3 * T][even], (sums * 3)[(i + 2) % T][even])
    np.testing.assert_array_equal(got[3 * T :][even], src[T - 1 - i][even])
    assert (got[2 * T :][np.concatenate([~even, ~even])] == -1).all()


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_barriers_and_pipelines_match_numpy(mode):
    proc = run_cli("run", str(PROGRAM), *mode_args(mode))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    h = (np.arange(BLOCKS * K * 32 * 2, dtype=np.int64) * 37 + 11) % 1009
    lane = np.arange(32)
    i = np.arange(T)
    for b in range(BLOCKS):
        _check_barrier(_ints(v[f"barrier_{b}"]), h[b * T : (b + 1) * T])
        assert int(v[f"phases_{b}"]) == 4  # four phases completed, one completion call each

        tiles = h[b * K * 32 : (b + 1) * K * 32].reshape(K, 32)
        want = sum(tiles[t, (5 * lane + t) % 32] * (t + 1) for t in range(K))
        np.testing.assert_array_equal(_ints(v[f"prodcons_{b}"]), want)

        rounds = h[b * 3 * T : (b + 1) * 3 * T].reshape(3, T)
        want = sum(rounds[t, (i + 7) % T] - t for t in range(3))
        np.testing.assert_array_equal(_ints(v[f"allroles_{b}"]), want)

        src = h[b * T : (b + 1) * T]
        got = _ints(v[f"threadscope_{b}"])
        np.testing.assert_array_equal(got[:T], src[(i * 3) % T])
        # Threads 0, 4, 8, ... copy 16 bytes with 8 zero-filled: ints 4k and 4k+1 copied, 4k+2, 4k+3 zero.
        quad = np.where(i % 4 < 2, src, 0)
        np.testing.assert_array_equal(got[T:], quad[T - 1 - i])
    np.testing.assert_array_equal(_ints(v["onlybarrier_0"]), (T - 1 - i) * 3 + 1)
    assert v["error"] == "no error"
    assert "finding" not in proc.stderr


@pytest.mark.parametrize(
    ("case", "write_line", "read_line"),
    [
        ("pipeline", "cuda::memcpy_async(&stage[lane], &in[lane]", "PLANT: no consumer_wait"),
        ("barrier", "cuda::memcpy_async(&buf[i], &in[i], sizeof(int), bar)", "PLANT: read before"),
    ],
)
@pytest.mark.parametrize("detector", ["racecheck", "racecheck-all"])
def test_racecheck_reports_a_read_before_the_wait(case, write_line, read_line, detector):
    planted = PROGRAM
    write, read = line_of(planted, write_line), line_of(planted, read_line)
    proc = run_cli("run", str(planted), *mode_args(detector), "--", "planted", case)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    report = proc.stdout + proc.stderr
    assert "racecheck: data race" in report
    # The finding names the program's copy and read, never the stand-in header's copy loop.
    assert f"{planted.name}:{write}" in report
    assert f"{planted.name}:{read}" in report


def test_the_program_builds_unchanged_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path, needs_header="cuda/pipeline")
    assert proc.returncode == 0, proc.stderr


def test_a_barrier_that_never_completes_hits_the_launch_limit():
    # As on a GPU the waiting threads never return; the launch limit stops the kernel.
    proc = run_cli(
        "run",
        str(PROGRAM),
        "--mode",
        "fast",
        "--timeout",
        "2",
        "--",
        "planted",
        "overcount",
    )
    assert "launch timeout: kernel 'overcounted_barrier'" in proc.stderr, proc.stdout + proc.stderr
    assert "error=the launch timed out" in proc.stdout
