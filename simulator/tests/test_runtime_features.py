"""Device features of the feature libraries (kernels/coop_groups.cu, kernels/misc.cu) through
ctypes: cooperative groups' block reductions, tiles and grid ranks, labeled, binary and coalesced
partitions, vector types, scoped atomics and integer dot products; and their run under every
checker."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import ptr

CUDA_SUCCESS = 0


# ---- cooperative groups ----------------------------------------------------------------------


@pytest.mark.parametrize("threads", [32, 96, 1024])
def test_cooperative_groups_block_reduce(feature_lib, threads):
    lib = feature_lib("coop_groups")
    blocks = 3
    rng = np.random.default_rng(threads)
    data = rng.integers(-100000, 100000, size=blocks * threads).astype(np.int32)
    out = np.zeros(blocks * 3, dtype=np.int32)
    assert lib.cg_block_reduce(ptr(data), ptr(out), blocks, threads) == CUDA_SUCCESS
    rows = data.reshape(blocks, threads)
    want = np.stack([rows.sum(axis=1), rows.max(axis=1), rows.min(axis=1)], axis=1).ravel()
    np.testing.assert_array_equal(out, want)


def _expected_tiles(tile: int, threads: int) -> np.ndarray:
    out = np.zeros((threads, 12), dtype=np.int64)
    for t in range(threads):
        r, base = t % tile, t - t % tile

        def v(rank: int, base: int = base) -> int:
            return (base + rank) * 10  # the value of the tile's thread ``rank``

        ballot = sum(1 << k for k in range(tile) if k & 1)
        out[t] = [
            r,
            tile,
            t // tile,
            -(-threads // tile),
            v(1 % tile),
            v(r + 1) if r + 1 < tile else v(r),
            v(r - 2) if r >= 2 else v(r),
            v(r ^ (3 % tile)),
            sum(v(k) for k in range(tile)),
            ballot,
            1,
            1,
        ]
    return out


@pytest.mark.parametrize("tile,threads", [(32, 64), (16, 48), (8, 32), (4, 40)])
def test_cooperative_groups_tiles(feature_lib, tile, threads):
    lib = feature_lib("coop_groups")
    out = np.full((threads, 12), -1, dtype=np.int32)
    assert lib.cg_tiles(ptr(out), tile, threads) == CUDA_SUCCESS
    np.testing.assert_array_equal(out.view(np.uint32), _expected_tiles(tile, threads))


def test_cooperative_groups_float_tiles_and_grid_ranks(feature_lib):
    lib = feature_lib("coop_groups")
    blocks = 3
    n = blocks * 64
    data = (np.arange(n, dtype=np.float32) % 17) * 0.25  # sums stay exact in float32
    out = np.zeros(n, dtype=np.float32)
    ranks = np.zeros(n, dtype=np.uint64)
    assert lib.cg_float_tiles(ptr(data), ptr(out), ptr(ranks), blocks) == CUDA_SUCCESS
    np.testing.assert_array_equal(out, np.repeat(data.reshape(blocks, 64).sum(axis=1), 64))
    np.testing.assert_array_equal(ranks, np.arange(n, dtype=np.uint64) * 1000000 + n)


def test_labeled_binary_and_coalesced_groups(feature_lib):
    lib = feature_lib("misc")
    out = np.zeros((64, 8), dtype=np.int32)
    counter = np.zeros(1, dtype=np.int32)
    assert lib.misc_partitions(ptr(out), ptr(counter)) == CUDA_SUCCESS
    lanes = np.arange(64) % 32
    for t in range(64):
        lane = lanes[t]
        same = [x for x in range(32) if x % 3 == lane % 3]
        want = [sum(same), same.index(lane), len(same), 16, t]
        if lane % 2 == 0:
            want += [lane // 2, 16, (t // 32) * 16 + lane // 2]
        else:
            want += [-1, -1, -1]
        assert out[t].tolist() == want, t
    assert counter[0] == 32


def test_vector_types_scoped_atomics_and_umin(feature_lib):
    lib = feature_lib("misc")
    n = 40
    pix = np.random.default_rng(9).integers(0, 256, size=(n, 4)).astype(np.uint8)
    out = np.zeros((n, 4), dtype=np.uint32)
    total = np.zeros(1, dtype=np.uint32)
    assert lib.misc_vectors(ptr(pix), ptr(out), ptr(total), n) == CUDA_SUCCESS
    p = pix.astype(np.uint32)
    want = np.stack(
        [np.minimum(p[:, 0], p[:, 1]), np.maximum(p[:, 2], p[:, 3]), p[:, 0] + p[:, 1], np.full(n, 442)],
        axis=1,
    )
    np.testing.assert_array_equal(out, want)
    assert total[0] == n


def test_integer_dot_products_follow_the_math_api(feature_lib):
    # __dp4a: the four byte products of a and b plus c; __dp2a_lo/_hi: a's two 16-bit halves
    # times b's low or high two bytes, plus c. Signed forms sign-extend, unsigned ones do not;
    # the sum wraps to 32 bits. Computed here from the bytes in numpy.
    lib = feature_lib("misc")
    rng = np.random.default_rng(61)
    n = 100
    words = rng.integers(-(2**31), 2**31, size=(3, n), dtype=np.int64).astype(np.int32)
    words[:, 0] = [-1, -1, 2**31 - 1]  # all bytes 0xff, and a sum that wraps
    a, b, c = (np.ascontiguousarray(w) for w in words)
    out = np.zeros((n, 12), dtype=np.int32)
    assert lib.misc_dot_products(ptr(a), ptr(b), ptr(c), ptr(out), n) == CUDA_SUCCESS

    def wrap(x):
        return ((x + 2**31) % 2**32 - 2**31).astype(np.int32)

    def parts(words, dtype, count):
        return words.view(dtype).reshape(n, count).astype(np.int64)

    sa, ua = parts(a, np.int8, 4), parts(a, np.uint8, 4)
    sb, ub = parts(b, np.int8, 4), parts(b, np.uint8, 4)
    ha, uha = parts(a, np.int16, 2), parts(a, np.uint16, 2)
    c64 = c.astype(np.int64)
    signed4 = wrap((sa * sb).sum(1) + c64)
    unsigned4 = wrap((ua * ub).sum(1) + (c64 & 0xFFFFFFFF))
    expect = [signed4, signed4, unsigned4, unsigned4]
    for first in (0, 2):  # _lo uses bytes 0-1 of b, _hi bytes 2-3
        signed2 = wrap((ha * sb[:, first : first + 2]).sum(1) + c64)
        unsigned2 = wrap((uha * ub[:, first : first + 2]).sum(1) + (c64 & 0xFFFFFFFF))
        expect += [signed2, signed2, unsigned2, unsigned2]
    np.testing.assert_array_equal(out, np.stack(expect, axis=1))


@pytest.mark.parametrize("mode", ["memcheck", "racecheck", "synccheck"])
def test_new_device_features_run_clean_under_every_checker(mode):
    from .conftest import KERNELS, run_cli

    sources = [str(KERNELS / n) for n in ("features_entry.cu", "coop_groups.cu", "fp16.cu", "misc.cu")]
    proc = run_cli("check", *sources, "--entry", "features_selfcheck", "--mode", mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{mode}: clean" in proc.stdout
