"""Runtime semantics through ctypes: barriers, shuffles, votes, atomics, shared memory,
multi-dimensional launches, grid-stride loops and the launch/memory error paths."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

CUDA_SUCCESS = 0
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_INVALID_CONFIGURATION = 9
CUDA_ERROR_LAUNCH_FAILURE = 719


def ptr(a: np.ndarray) -> ctypes.c_void_p:
    assert a.flags.c_contiguous
    return ctypes.c_void_p(a.ctypes.data)


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


# ---- libraries of the feature kernels (built once per session, fast mode) ------------------


@pytest.fixture(scope="session")
def feature_lib(tmp_path_factory):
    """Build ``simulator/tests/kernels/NAME.cu`` (fast mode) once and load it with ctypes."""
    from simulator import build_shared

    from .conftest import KERNELS

    out = tmp_path_factory.mktemp("sim-feature-libs")
    loaded: dict[str, ctypes.CDLL] = {}

    def load(name: str) -> ctypes.CDLL:
        if name not in loaded:
            loaded[name] = ctypes.CDLL(str(build_shared(KERNELS / f"{name}.cu", out, "fast")))
        return loaded[name]

    return load


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


# ---- half and bfloat16 -------------------------------------------------------------------------
# Expected bits come from exact rational arithmetic rounded by search over the format's values,
# independent of the simulator's rounding code.

_FORMATS = {"half": (10, -14, 15), "bf16": (7, -126, 127)}


def _decode(bits: int, fmt: str) -> Fraction | None:
    """The value of a non-negative finite bit pattern (None for inf/NaN)."""
    m, emin, emax = _FORMATS[fmt]
    field, mant = bits >> m, bits & ((1 << m) - 1)
    if field == emax - emin + 2:
        return None
    if field == 0:
        return Fraction(mant) * Fraction(2) ** (emin - m)
    return Fraction(mant | (1 << m)) * Fraction(2) ** (field - 1 + emin - m)


def _round(x: Fraction, fmt: str, mode: str = "rn") -> int:
    """Bits of ``x`` rounded to ``fmt`` (rn: nearest even, rz, rd, ru)."""
    m, emin, emax = _FORMATS[fmt]
    inf = (emax - emin + 2) << m
    sign = 0x8000 if x < 0 else 0
    mag = -x if x < 0 else x
    lo, hi = 0, inf  # largest pattern whose value is <= mag, by bisection (inf counts as 2^(emax+1))
    top = Fraction(2) ** (emax + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _decode(mid, fmt) <= mag:
            lo = mid
        else:
            hi = mid
    if mag >= top:
        lo = inf - 1
    below = _decode(lo, fmt)
    above = top if lo + 1 == inf else _decode(lo + 1, fmt)
    if below == mag:
        return sign | lo
    away = {"rz": False, "rd": sign != 0, "ru": sign == 0}.get(mode)
    if away is None:
        d_lo, d_hi = mag - below, above - mag
        away = d_hi < d_lo or (d_hi == d_lo and lo & 1 == 1)
    if not away:
        return sign | lo
    if lo + 1 == inf and mode == "rn" and mag < top - (top - below) / 2:
        return sign | lo
    return sign | (lo + 1)


def _value(bits: int, fmt: str) -> Fraction:
    """The exact value of a finite bit pattern."""
    v = _decode(bits & 0x7FFF, fmt)
    assert v is not None, f"{bits:#06x} is not finite"
    return -v if bits & 0x8000 else v


_NAN = 0x7FFF


def _expected_arith(a: int, b: int, c: int, fmt: str) -> list[int]:
    va, vb, vc = (_value(x, fmt) for x in (a, b, c))

    fa, fb, fc = (-float(v) if x & 0x8000 and v == 0 else float(v) for v, x in ((va, a), (vb, b), (vc, c)))

    def rnd(x: Fraction, same_in_float: float) -> int:
        # An exact zero takes IEEE's sign, which the float computation of the same expression has.
        if x == 0:
            return 0x8000 if np.signbit(same_in_float) else 0
        return _round(x, fmt)

    ab = rnd(va * vb, fa * fb)
    m, emin, emax = _FORMATS[fmt]
    if ab & 0x7FFF == (emax - emin + 2) << m:  # a * b overflowed: inf + c stays inf
        then_add_c = ab
    else:
        then_add_c = rnd(_value(ab, fmt) + vc, (-0.0 if ab == 0x8000 else float(_value(ab, fmt))) + fc)
    out = [
        rnd(va + vb, fa + fb),
        rnd(va - vb, fa - fb),
        ab,
        rnd(va / vb, 1.0) if vb != 0 else None,
        rnd(va * vb + vc, fa * fb + fc),
        a if va > vb or (va == vb and not a & 0x8000) else b,
        a if va < vb or (va == vb and a & 0x8000) else b,
        then_add_c,
        a ^ 0x8000,
        (va < vb) | (va <= vb) << 1 | (va == vb) << 2 | (va != vb) << 3 | (va > vb) << 4 | (va >= vb) << 5,
        rnd(va + vb, fa + fb),
        rnd(vb + vc, fb + fc),
    ]
    return out


def _h(x: float) -> int:
    return int(np.array(x, dtype=np.float16).view(np.uint16))


def _b(x: float) -> int:
    return _round(Fraction(x), "bf16")


# (a, b, c): ties to even, a sticky bit far below a tie (fma), subnormals, overflow to inf.
HALF_CASES = [
    (_h(1.0), _h(2.0**-11), _h(0.0)),  # 1 + half an ulp: tie, stays at the even 1.0
    (_h(1.0 + 2.0**-10), _h(2.0**-11), _h(0.0)),  # tie, rounds up to the even neighbour
    (_h(683.0), _h(1.5), _h(2.0**-24)),  # a*b = 1024.5 is a tie; + the smallest subnormal breaks it up
    (_h(683.0), _h(1.5), _h(-(2.0**-24))),  # ... and down
    (_h(65504.0), _h(16.0), _h(0.0)),  # max + half an ulp: overflows to inf
    (_h(2.0**-24), _h(0.5), _h(3 * 2.0**-25)),  # subnormal products: ties at the bottom of the range
    (_h(-3.0), _h(7.0), _h(0.1)),
    (_h(0.1), _h(0.2), _h(0.3)),
    (_h(-0.0), _h(0.0), _h(-0.0)),
    (_h(1.0 / 3.0), _h(3.0), _h(-1.0)),
]
BF16_CASES = [
    (_b(256.0), _b(1.0), _b(0.0)),  # 257 is a tie between 256 and 258: to the even 256
    (_b(7.0), _b(37.0), _b(-(2.0**-130))),  # a*b = 259 is a tie; c far below decides: 258
    (_b(7.0), _b(37.0), _b(2.0**-130)),  # ... 260
    (_b(7.0), _b(37.0), _b(0.0)),  # exact tie: to the even 260
    (_b(3.0e38), _b(3.0e38), _b(0.0)),  # overflow to inf
    (_b(1.0), _b(3.0), _b(-(2.0**-126))),
    (_b(-1.5), _b(0.1), _b(100.0)),
    (_b(2.0**-133), _b(0.5), _b(0.0)),  # half the smallest subnormal: tie, to zero
]


@pytest.mark.parametrize("fmt,cases", [("half", HALF_CASES), ("bf16", BF16_CASES)])
def test_half_and_bfloat16_arithmetic_bits(feature_lib, fmt, cases):
    lib = feature_lib("fp16")
    data = np.array(cases, dtype=np.uint16)
    out = np.zeros((len(cases), 12), dtype=np.uint16)
    assert lib.f16_arith(ptr(data), ptr(out), len(cases), 1 if fmt == "bf16" else 0) == CUDA_SUCCESS
    for row, (a, b, c) in zip(out, cases, strict=True):
        want = _expected_arith(a, b, c, fmt)
        got = [int(v) for v in row]
        if want[3] is None:  # x / 0 is +-inf or NaN: checked by class only
            want[3] = got[3]
        assert got == want, f"{fmt} a={a:#06x} b={b:#06x} c={c:#06x}: {got} != {want}"


def test_half_and_bfloat16_conversions(feature_lib):
    lib = feature_lib("fp16")
    rng = np.random.default_rng(7)
    special = [
        0.0,
        -0.0,
        1.0,
        -2.5,
        65504.0,
        65519.99,
        65520.0,
        1e6,
        2.0**-24,
        2.0**-25,
        3 * 2.0**-26,
        1e-9,
        1.0 + 2.0**-11,
        1.0 + 3 * 2.0**-11,
        3.0e38,
        -3.4e38,
        1.0 + 2.0**-8,
        1.0 + 3 * 2.0**-8,
    ]
    vals = np.concatenate(
        [
            np.array(special, dtype=np.float32),
            rng.standard_normal(200).astype(np.float32) * np.float32(100.0),
            np.array([np.inf, -np.inf, np.nan], dtype=np.float32),
        ]
    )
    n = len(vals)
    bits = np.zeros((n, 8), dtype=np.uint16)
    back = np.zeros((n, 2), dtype=np.float32)
    assert lib.f16_convert(ptr(vals), ptr(bits), ptr(back), n) == CUDA_SUCCESS
    # Round to nearest even: numpy's float32 -> float16 is correctly rounded.
    with np.errstate(over="ignore"):
        as_half = vals.astype(np.float16)
    np.testing.assert_array_equal(bits[:-1, 0], as_half[:-1].view(np.uint16))
    assert bits[-1, 0] == _NAN and bits[-1, 4] == _NAN  # NaN is the canonical 0x7fff
    for i, v in enumerate(vals[:-3]):
        x = Fraction(float(v))
        want = [_round(x, "half", m) for m in ("rn", "rz", "rd", "ru")]
        want += [_round(x, "bf16", m) for m in ("rn", "rz", "rd", "ru")]
        if v == 0:
            want = [0x8000 if np.signbit(v) else 0] * 8
        assert [int(b) for b in bits[i]] == want, f"{float(v)!r}"
    # bf16 rn by the usual bit trick, as a second witness for ordinary values.
    u = vals[:-3].view(np.uint32).astype(np.uint64)
    np.testing.assert_array_equal(bits[:-3, 4], ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16))
    np.testing.assert_array_equal(back[:-1, 0], as_half[:-1].astype(np.float32))
    np.testing.assert_array_equal(back[:, 1].view(np.uint32) >> 16, bits[:, 4])
    assert (back[:, 1].view(np.uint32) & 0xFFFF == 0).all()


def test_bfloat162_dot_with_shuffles_and_half_atomics(feature_lib):
    lib = feature_lib("fp16")
    blocks = 3
    rng = np.random.default_rng(3)
    xy = rng.integers(-8, 8, size=(blocks * 64, 2)).astype(np.float32) * np.float32(0.25)
    xy_bits = (xy.view(np.uint32) >> 16).astype(np.uint16)  # exact in bf16
    out = np.zeros(blocks, dtype=np.float32)
    count = np.zeros(1, dtype=np.uint16)
    assert lib.f16_dot(ptr(np.ascontiguousarray(xy_bits)), ptr(out), ptr(count), blocks) == CUDA_SUCCESS
    np.testing.assert_array_equal(out, (xy[:, 0] * xy[:, 1]).reshape(blocks, 64).sum(axis=1))
    assert count[0] == _h(float(blocks * 64))


def test_cache_hint_loads_and_stores(feature_lib):
    lib = feature_lib("fp16")
    n = 100
    data = np.random.default_rng(5).standard_normal(n)
    out = np.zeros((n, 6))
    assert lib.cache_hints(ptr(data), ptr(out), n) == CUDA_SUCCESS
    np.testing.assert_array_equal(out, np.repeat(data[:, None], 6, axis=1))


# ---- launch timeout ----------------------------------------------------------------------------

CUDA_ERROR_LAUNCH_TIMEOUT = 702
_TIMEOUT_CODES = [CUDA_ERROR_LAUNCH_TIMEOUT] * 5 + [CUDA_SUCCESS, CUDA_SUCCESS, 0]


_TIMEOUT_CHILD = """
import ctypes, json, sys, time
import numpy as np
sem, lib, other = (ctypes.CDLL(p) for p in sys.argv[1:4])
kind = int(sys.argv[4])
# A launch in another library first: its copy of the runtime installs its own timeout handler.
out = np.zeros(3, dtype=np.int32)
assert sem.sem_sync_count(ctypes.c_void_p(out.ctypes.data), 32, 5) == 0
codes = np.full(8, -1, dtype=np.int32)
start = time.monotonic()
rc = lib.timeout_run(kind, 6, ctypes.c_void_p(codes.ctypes.data))
elapsed = time.monotonic() - start
data = np.arange(10.0)
copies = np.zeros((10, 6))
ok = other.cache_hints(ctypes.c_void_p(data.ctypes.data), ctypes.c_void_p(copies.ctypes.data), 10)
print(json.dumps({"rc": rc, "codes": codes.tolist(), "elapsed": elapsed,
                  "other": ok == 0 and bool((copies == data[:, None]).all())}))
"""


@pytest.mark.parametrize("kind", ["spin without barriers", "loop over barriers"])
def test_endless_launch_times_out_from_python(feature_lib, sim_lib_dir, kind):
    # In a child Python process, so that a launch that is not stopped fails the test, not hangs it.
    paths = [str(sim_lib_dir / "semantics.so"), feature_lib("timeout")._name, feature_lib("fp16")._name]
    env = dict(os.environ, SIMULATOR_TIMEOUT="0.5")
    env.pop("SIMULATOR_QUIET", None)
    proc = subprocess.run(
        [sys.executable, "-c", _TIMEOUT_CHILD, *paths, "0" if kind.startswith("spin") else "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["rc"] == CUDA_SUCCESS
    assert result["codes"] == _TIMEOUT_CODES
    assert 0.4 < result["elapsed"] < 20, result
    assert "launch timeout: kernel '" in proc.stderr and "SIMULATOR_TIMEOUT=0.5 s" in proc.stderr
    # The process stays usable: another library's launches still run.
    assert result["other"]


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_endless_launch_times_out_in_a_host_program(mode, tmp_path):
    from simulator.build import build_executable

    from .conftest import KERNELS

    exe = build_executable([KERNELS / "timeout.cu"], "timeout_selfcheck", mode)
    env = dict(os.environ, SIMULATOR_TIMEOUT="0.5", ASAN_OPTIONS="detect_leaks=1")
    env.pop("SIMULATOR_QUIET", None)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr.count("launch timeout: kernel 'spin_kernel'") == 1, proc.stderr
    assert proc.stderr.count("launch timeout: kernel 'barrier_loop_kernel'") == 1, proc.stderr


def test_launch_timeout_default_is_shared_with_the_front_end():
    from simulator.limits import DEFAULT_LAUNCH_TIMEOUT_S, launch_timeout

    from .conftest import REPO

    header = (REPO / "simulator" / "runtime" / "sim_internal.h").read_text()
    assert f"kDefaultLaunchTimeoutS = {DEFAULT_LAUNCH_TIMEOUT_S!r};" in header
    assert launch_timeout({}) == DEFAULT_LAUNCH_TIMEOUT_S
    assert launch_timeout({"SIMULATOR_TIMEOUT": "2.5"}) == 2.5
    assert launch_timeout({"SIMULATOR_TIMEOUT": "0"}) == 0.0
    with pytest.raises(ValueError, match="SIMULATOR_TIMEOUT='soon'"):
        launch_timeout({"SIMULATOR_TIMEOUT": "soon"})


# ---- sticky and non-sticky errors ----------------------------------------------------------------

CUDA_ERROR_MEMORY_ALLOCATION = 2


def test_non_sticky_errors_are_reported_once_and_leave_the_device_usable(feature_lib, capfd):
    lib = feature_lib("errors")
    codes = np.full(16, -1, dtype=np.int32)
    assert lib.errors_nonsticky(ptr(codes)) == CUDA_SUCCESS
    oom, inval, config = (
        CUDA_ERROR_MEMORY_ALLOCATION,
        CUDA_ERROR_INVALID_VALUE,
        CUDA_ERROR_INVALID_CONFIGURATION,
    )
    want = [oom, oom, oom, CUDA_SUCCESS, oom, 1, oom, CUDA_SUCCESS, config, CUDA_SUCCESS, inval, inval, 1]
    want += [oom, CUDA_SUCCESS, CUDA_SUCCESS]
    assert codes.tolist() == want
    assert "not inside one live device allocation" in capfd.readouterr().err


def test_sticky_error_fails_every_later_call_until_reset(feature_lib, capfd):
    lib = feature_lib("errors")
    codes = np.full(14, -1, dtype=np.int32)
    assert lib.errors_sticky(ptr(codes)) == CUDA_SUCCESS
    fail = CUDA_ERROR_LAUNCH_FAILURE
    want = [fail] * 7 + [5, CUDA_SUCCESS, fail, fail, CUDA_SUCCESS, CUDA_SUCCESS, 1]
    assert codes.tolist() == want
    assert "deadlock in kernel 'stuck_kernel'" in capfd.readouterr().err


# ---- reports name the right launch -------------------------------------------------------------


def test_each_race_report_names_its_own_kernel_when_several_launch():
    from .conftest import KERNELS, run_cli

    src = KERNELS / "planted_two_kernel_races.cu"
    lines = src.read_text().splitlines()

    def line_of(marker: str) -> str:
        return f"{src}:{next(i for i, ln in enumerate(lines, 1) if marker in ln)}"

    proc = run_cli("check", str(src), "--entry", "planted_two_kernel_races", "--mode", "racecheck")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    races = [ln for ln in proc.stdout.splitlines() if ln.startswith("  racecheck: data race")]
    assert len(races) == 2, proc.stdout
    for race, name, which in zip(
        races, ("first_racy_kernel", "second_racy_kernel"), ("first", "second"), strict=True
    ):
        other = "second_racy_kernel" if which == "first" else "first_racy_kernel"
        assert f"write by kernel {name} block (0,0,0) thread (1,0,0)" in race, race
        assert f"read by kernel {name} block (0,0,0) thread (0,0,0)" in race, race
        assert line_of(f"PLANT: {which} write") in race and line_of(f"PLANT: {which} read") in race, race
        assert other not in race, race


@pytest.mark.parametrize("mode", ["memcheck", "racecheck", "synccheck"])
def test_new_device_features_run_clean_under_every_checker(mode):
    from .conftest import KERNELS, run_cli

    sources = [str(KERNELS / n) for n in ("features_entry.cu", "coop_groups.cu", "fp16.cu", "misc.cu")]
    proc = run_cli("check", *sources, "--entry", "features_selfcheck", "--mode", mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{mode}: clean" in proc.stdout


_FAULT_CHILD = """
import ctypes, json, sys
import numpy as np
sem, lib = (ctypes.CDLL(p) for p in sys.argv[1:3])
out = np.zeros(3, dtype=np.int32)
assert sem.sem_sync_count(ctypes.c_void_p(out.ctypes.data), 32, 5) == 0  # another runtime copy first
codes = np.full(7, -1, dtype=np.int32)
rc = lib.errors_illegal_address(ctypes.c_void_p(codes.ctypes.data))
asserts = np.full(4, -1, dtype=np.int32)
rc_assert = lib.errors_assert(ctypes.c_void_p(asserts.ctypes.data))
print(json.dumps({"rc": rc, "codes": codes.tolist(), "rc_assert": rc_assert, "asserts": asserts.tolist()}))
"""


def test_wild_pointer_stack_overflow_and_device_assert_are_sticky_errors(feature_lib, sim_lib_dir):
    # In a child process: without the model, the fault would kill the interpreter.
    env = dict(os.environ)
    env.pop("SIMULATOR_QUIET", None)
    paths = [str(sim_lib_dir / "semantics.so"), feature_lib("errors")._name]
    proc = subprocess.run(
        [sys.executable, "-c", _FAULT_CHILD, *paths], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    illegal = 700
    assert result["rc"] == 0 and result["rc_assert"] == 0
    assert result["codes"] == [illegal, illegal, CUDA_SUCCESS, 1, illegal, CUDA_SUCCESS, 1]
    # A failed device assert(): cudaErrorAssert (710), sticky, the process goes on.
    assert result["asserts"] == [710, 710, CUDA_SUCCESS, 1]
    assert "block: [2,0,0], thread: [3,0,0] Assertion `!(blockIdx.x == 2 && threadIdx.x == 3)` failed" in (
        proc.stderr
    )
    assert "illegal address: kernel 'wild_kernel' block (1,0,0) thread (5,0,0) accessed 0x10" in proc.stderr
    assert "illegal address: kernel 'deep_kernel' block (0,0,0)" in proc.stderr  # stack overflow


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
