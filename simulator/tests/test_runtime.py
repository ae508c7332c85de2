"""Runtime semantics through ctypes: barriers, shuffles, votes, atomics, shared memory,
multi-dimensional launches, grid-stride loops and the launch/memory error paths."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from .conftest import ptr

CUDA_SUCCESS = 0
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_INVALID_CONFIGURATION = 9
CUDA_ERROR_LAUNCH_FAILURE = 719


def test_barriers_tree_reduction(sem):
    rng = np.random.default_rng(0)
    blocks = 5
    data = rng.integers(-1000, 1000, size=blocks * 128).astype(np.int32)
    out = np.zeros(blocks, dtype=np.int32)
    assert sem.sem_block_sum(ptr(data), ptr(out), blocks) == CUDA_SUCCESS
    np.testing.assert_array_equal(out, data.reshape(blocks, 128).sum(axis=1))


def _expected_shuffles(threads: int) -> np.ndarray:
    out = np.zeros((threads, 8), dtype=np.int32)
    for t in range(threads):
        lane = t % 32
        v = lambda src: src * 10  # noqa: E731 - value held by lane ``src``
        seg8 = lane & ~7
        out[t] = [
            v(3),
            v(lane - 1) if lane >= 1 else v(lane),
            v(lane + 2) if lane + 2 < 32 else v(lane),
            v(lane ^ 5),
            v(seg8 + 1),
            v(lane - 2) if lane - seg8 >= 2 else v(lane),
            v(lane + 3) if lane - seg8 + 3 < 8 else v(lane),
            v(lane ^ 4),
        ]
    return out


@pytest.mark.parametrize("threads", [32, 96])
def test_shuffles_idx_up_down_xor_and_widths(sem, threads):
    out = np.zeros((threads, 8), dtype=np.int32)
    assert sem.sem_shuffles(ptr(out), threads) == CUDA_SUCCESS
    np.testing.assert_array_equal(out, _expected_shuffles(threads))


def test_shuffle_of_doubles_and_xor_butterfly_sum(sem):
    dout = np.zeros(64, dtype=np.float64)
    fout = np.zeros(64, dtype=np.float32)
    assert sem.sem_shuffle_types(ptr(dout), ptr(fout)) == CUDA_SUCCESS
    lanes = np.arange(64) % 32
    want = np.where(lanes < 31, (lanes + 1) * 0.5, lanes * 0.5)
    np.testing.assert_array_equal(dout, want)
    np.testing.assert_array_equal(fout, np.full(64, float(sum(range(32))), dtype=np.float32))


def test_votes_ballot_any_all(sem):
    warps = 3
    out = np.zeros((warps, 4), dtype=np.uint32)
    assert sem.sem_votes(ptr(out), warps) == CUDA_SUCCESS
    ballot = sum(1 << lane for lane in range(32) if lane % 3 == 0)
    np.testing.assert_array_equal(out, np.tile(np.array([ballot, 1, 1, 0], dtype=np.uint32), (warps, 1)))


def test_disjoint_half_warp_masks(sem):
    out = np.zeros(32, dtype=np.int32)
    assert sem.sem_half_masks(ptr(out)) == CUDA_SUCCESS
    np.testing.assert_array_equal(out, np.where(np.arange(32) < 16, 0, 16 * 3))


def test_atomics_across_parallel_blocks(sem):
    blocks, threads = 8, 64
    counter = np.zeros(1, dtype=np.int32)
    fsum = np.zeros(1, dtype=np.float32)
    maxv = np.zeros(1, dtype=np.int32)
    cas = np.zeros(1, dtype=np.uint64)
    assert sem.sem_atomics(blocks, threads, ptr(counter), ptr(fsum), ptr(maxv), ptr(cas)) == CUDA_SUCCESS
    n = blocks * threads
    gids = np.arange(n)
    assert counter[0] == n
    assert fsum[0] == np.float32(0.5 * n)  # exact: every partial sum is a multiple of 0.5 below 2**24
    assert maxv[0] == (gids * 7 % 1000).max()
    assert cas[0] == gids.sum()


@pytest.mark.parametrize("n,block", [(1000, 128), (64, 64), (5, 32)])
def test_dynamic_shared_memory_sized_by_launch(sem, n, block):
    data = np.arange(n, dtype=np.float32) * 1.5
    out = np.zeros(n, dtype=np.float32)
    assert sem.sem_dynamic_shared(ptr(data), ptr(out), n, block) == CUDA_SUCCESS
    want = np.concatenate([chunk[::-1] for chunk in np.array_split(data, range(block, n, block))])
    np.testing.assert_array_equal(out, want)


def test_grid_stride_loop(sem):
    n = 5000
    out = np.zeros(n, dtype=np.float32)
    assert sem.sem_grid_stride(ptr(out), n, 3, 64) == CUDA_SUCCESS
    np.testing.assert_array_equal(out, 2.0 * np.arange(n, dtype=np.float32))


def test_three_dimensional_grid_and_block(sem):
    g, b = (2, 3, 2), (4, 2, 3)
    nb, nt = int(np.prod(g)), int(np.prod(b))
    out = np.full(nb * nt * 2, -1, dtype=np.int32)
    assert sem.sem_dims(ptr(out), *g, *b) == CUDA_SUCCESS
    pairs = out.reshape(nb, nt, 2)
    np.testing.assert_array_equal(pairs[..., 0], np.repeat(np.arange(nb)[:, None], nt, axis=1))
    np.testing.assert_array_equal(pairs[..., 1], np.repeat(np.arange(nt)[None, :], nb, axis=0))


@pytest.mark.parametrize("threshold,want", [(10, [10, 0, 1]), (64, [64, 1, 1]), (0, [0, 0, 0])])
def test_syncthreads_count_and_or(sem, threshold, want):
    out = np.zeros(3, dtype=np.int32)
    assert sem.sem_sync_count(ptr(out), 64, threshold) == CUDA_SUCCESS
    np.testing.assert_array_equal(out, want)


def test_exited_threads_do_not_block_a_barrier(sem):
    live = 40
    out = np.zeros(64, dtype=np.int32)
    assert sem.sem_early_exit(ptr(out), live) == CUDA_SUCCESS
    t = np.arange(live)
    np.testing.assert_array_equal(out[:live], (t + 1) % live + 1)
    np.testing.assert_array_equal(out[live:], 0)


def test_deadlock_is_reported_not_hung(sem, capfd):
    assert sem.sem_deadlock() == CUDA_ERROR_LAUNCH_FAILURE
    err = capfd.readouterr().err
    assert "deadlock in kernel 'deadlock_kernel' block (0,0,0)" in err
    assert "__syncthreads" in err and "__shfl_sync" in err
    # cudaDeviceReset cleared the sticky error: the next launch works again.
    out = np.zeros(3, dtype=np.int32)
    assert sem.sem_sync_count(ptr(out), 32, 5) == CUDA_SUCCESS


@pytest.mark.parametrize(
    "block,smem,optin,want",
    [
        (1024, 0, 0, CUDA_SUCCESS),
        (1025, 0, 0, CUDA_ERROR_INVALID_CONFIGURATION),
        (0, 0, 0, CUDA_ERROR_INVALID_CONFIGURATION),
        (32, 48 * 1024, 0, CUDA_SUCCESS),
        (32, 64 * 1024, 0, CUDA_ERROR_INVALID_VALUE),
        (32, 64 * 1024, 1, CUDA_SUCCESS),
    ],
)
def test_launch_limits(sem, block, smem, optin, want):
    assert sem.sem_launch_error(block, smem, optin) == want


def test_memcpy_past_allocation_end_is_refused(sem, capfd):
    assert sem.sem_memcpy_past_end() == CUDA_ERROR_INVALID_VALUE
    assert "not inside one live device allocation" in capfd.readouterr().err


def test_error_strings(sem):
    sem.sem_error_string.restype = ctypes.c_char_p
    assert sem.sem_error_string(0) == b"no error"
    assert sem.sem_error_string(CUDA_ERROR_INVALID_CONFIGURATION) == b"invalid configuration argument"
