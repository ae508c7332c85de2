"""Host API that real programs use beyond the core: stream-ordered memory and memory pools,
stream attributes, the device attributes programs test first, names gone from current CUDA,
and the C headers NVIDIA's <cuda_runtime.h> brings in. Expected values come from the programs'
own arithmetic and from the modelled sm_80 device described in simulator/docs/device.md."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, case_lines, col_major, mode_args, nvcc_compile, run_cli
from .test_run import _values

# The stream-ordered memory program is warp_match_reduce.cu's "stream_memory" case: one build per
# mode for both.
STREAM_MEMORY = KERNELS / "warp_match_reduce.cu"
LEGACY = KERNELS / "program_legacy.cu"
N = 1000  # the programs' element count


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_stream_ordered_memory_pools_and_stream_attributes(mode):
    proc = run_cli("run", str(STREAM_MEMORY), *mode_args(mode), "--", "stream_memory")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    assert "failed" not in v, v
    # An A100 (sm_80): pools supported, a 30 MiB persisting-L2 limit, 128 MiB - 4 KiB windows.
    assert v["pools_supported"] == "1"
    assert v["fresh_nonzero"] == "0"  # fresh cudaMalloc/cudaMallocManaged memory reads as zero
    assert int(v["persisting_max"]) == 30 * 1024 * 1024
    assert int(v["window_max"]) == 128 * 1024 * 1024 - 4096
    assert v["prop_matches"] == "1"
    # The default pool holds the one cudaMallocAsync buffer of N floats.
    assert int(v["default_used"]) == N * 4
    assert int(v["threshold"]) == 1 << 20
    # A pool of 6000 bytes takes one buffer of 4000 and refuses a second.
    assert v["over_limit"] == "cudaErrorMemoryAllocation"
    assert int(v["own_used"]) == N * 4
    assert int(v["own_used_after_free"]) == 0
    assert int(v["own_high"]) == N * 4
    assert int(v["window_bytes"]) == N * 4
    assert float(v["window_hit_ratio"]) == pytest.approx(0.6)
    assert v["window_too_big"] == "cudaErrorInvalidValue"
    assert float(v["last"]) == 2.0 * (N - 1)  # iota_scaled with scale 2, through the copies
    assert "finding" not in proc.stderr


def test_legacy_names_run_as_their_current_equivalents_with_one_note_each():
    proc = run_cli("run", str(LEGACY), "--mode", "memcheck")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    assert v["last"] == str(63 + 3)  # three launches of add_one on iota
    assert v["stack"] == "1024"  # cudaLimitStackSize's default on sm_80
    assert v["clock_ok"] == "1"  # time() without <time.h>, memcpy() without <string.h>
    assert v["missing_configuration"] == "52 __global__ function call is not configured"
    notes = [ln for ln in proc.stderr.splitlines() if "gone from current CUDA" in ln]
    # Three launches call cudaThreadSynchronize three times: one note for it, one for each other name.
    assert notes == [
        "note (simulator): cudaThreadSynchronize is gone from current CUDA; it runs as cudaDeviceSynchronize",
        "note (simulator): cudaThreadGetLimit is gone from current CUDA; it runs as cudaDeviceGetLimit",
        "note (simulator): cudaThreadExit is gone from current CUDA; it runs as cudaDeviceReset",
    ]


WARP = KERNELS / "warp_match_reduce.cu"


def _lanes(stdout: str) -> list[dict[str, int]]:
    rows = []
    for line in stdout.splitlines():
        if line.startswith("lane "):
            rows.append({k: int(v) for k, v in (f.split("=") for f in line.split()[2:])})
    return rows


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_match_reduce_nanosleep_and_clock64(mode):
    proc = run_cli("run", str(WARP), *mode_args(mode))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _lanes(proc.stdout)
    assert len(rows) == 64
    u32 = 0xFFFFFFFF
    for warp in (rows[:32], rows[32:]):
        values = [r["in"] for r in warp]
        for lane, r in enumerate(warp):
            # match_any: the lanes of this warp holding the same value as this lane.
            assert r["any"] == sum(1 << k for k, v in enumerate(values) if v == values[lane])
            # match_all of a value every lane shares: the full mask, predicate 1; of differing
            # values: 0 and predicate 0 (so pred is 1*10 + 0, and no +100).
            assert r["all"] == u32
            assert r["pred"] == 10
            assert r["add"] == sum(values)
            assert r["min"] == min(values)
            assert r["max"] == max(values)
            as_unsigned = [v & u32 for v in values]
            and_, or_, xor_ = u32, 0, 0
            for v in as_unsigned:
                and_ &= v
                or_ |= v
                xor_ ^= v
            assert (r["and"], r["or"], r["xor"]) == (and_, or_, xor_)
            assert r["umin"] == min(as_unsigned)
    v = _values(proc.stdout)
    # The spin-wait ends only if __nanosleep lets the block's last thread run.
    assert v["spin_status"] == "cudaSuccess"
    assert v["spin_seen"] == "7"
    assert v["spin_elapsed_nonnegative"] == "1"


# The GEMM is wmma_shares.cu's "gemm" case: one wmma build per mode for this module and the wmma ones.
WMMA = KERNELS / "wmma_shares.cu"


def _inputs(kind: str, rows: int, cols: int, which: str) -> np.ndarray:
    """The program's input formulas (value_a/value_b, fine_a/fine_b), computed in float32."""
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    if kind == "coarse":
        v = ((i * 7 + j * 3) % 9 - 4) if which == "a" else ((i * 5 + j * 11) % 7 - 3)
        return v.astype(np.float32) * np.float32(0.25)
    num, den = ((i * 37 + j * 101) % 1000, 997.0) if which == "a" else ((i * 53 + j * 29) % 1000, 991.0)
    return num.astype(np.float32) / np.float32(den) - np.float32(0.5)


def _tf32(x: np.ndarray) -> np.ndarray:
    """Round float32 to tf32 (10 mantissa bits), to nearest with ties away from zero."""
    bits = x.astype(np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


# name -> (m, n, k, input formulas, alpha, conversion of the inputs)
WMMA_CASES = {
    "half_m16n16k16": (32, 32, 32, "coarse", 2.0, None),
    "half_m32n8k16": (32, 16, 32, "coarse", 1.0, None),
    "bf16_m8n32k16": (16, 32, 32, "coarse", 1.0, None),
    "tf32_m16n16k8": (16, 32, 16, "fine", 1.0, _tf32),
    "s8_m16n16k16": (16, 16, 32, "coarse", 1.0, lambda x: np.trunc(x * 4)),
    "f64_m8n8k4": (16, 8, 8, "fine", 1.0, None),
}


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_wmma_fragments_multiply_as_the_documented_formula(mode):
    proc = run_cli("run", str(WMMA), *mode_args(mode), "--", "gemm")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    got = {}
    for line in proc.stdout.splitlines():
        if line.startswith("case "):
            _, name, status, *values = line.split()
            assert status == "cudaSuccess", name
            got[name] = np.array(values, dtype=np.float64)
    assert sorted(got) == sorted(WMMA_CASES)
    for name, (m, n, k, kind, alpha, convert) in WMMA_CASES.items():
        a = _inputs(kind, m, k, "a").astype(np.float64)
        b = _inputs(kind, k, n, "b").astype(np.float64)
        if convert is not None:
            a, b = (
                convert(a.astype(np.float32)).astype(np.float64),
                convert(b.astype(np.float32)).astype(np.float64),
            )
        want = alpha * (a @ b)
        if kind == "coarse":  # multiples of 1/16 (or integers): every float sum is exact
            np.testing.assert_array_equal(got[name], want.ravel(), err_msg=name)
        else:  # float (tf32) or double accumulation in some order: its rounding error only
            eps = np.finfo(np.float32 if name.startswith("tf32") else np.float64).eps
            bound = k * eps * (np.abs(a) @ np.abs(b)) + 1e-30
            assert np.all(np.abs(got[name] - want.ravel()) <= bound.ravel()), name


CUBLAS = KERNELS / "cublas_calls.cu"


def _formula(which: int, count: int) -> np.ndarray:
    """The program's input values: ((i * (7 + 2w) + 5w) % 13 - 6) / 8, exact in half and bf16."""
    i = np.arange(count)
    return ((i * (7 + 2 * which) + which * 5) % 13 - 6).astype(np.float64) * 0.125


def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_cublas_and_cublaslt_compute_the_column_major_products(mode):
    proc = run_cli("run", str(CUBLAS), *mode_args(mode))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    got = case_lines(proc.stdout)
    m, n, k, batch = 5, 4, 3, 3

    def check(name, want, exact=True):
        status, values = got[name]
        assert status == 0, name
        flat = want.T.ravel() if want.ndim == 2 else want
        if exact:  # multiples of 1/8: every float sum here is exact
            np.testing.assert_array_equal(values, flat, err_msg=name)
        else:
            np.testing.assert_allclose(values, flat, rtol=1e-6, atol=1e-7, err_msg=name)

    a, b, c = _formula(0, m * k), _formula(1, k * n), _formula(2, m * n)
    for ta in "NT":
        for tb in "NT":
            op_a = col_major(a, m, k) if ta == "N" else col_major(a, k, m).T
            op_b = col_major(b, k, n) if tb == "N" else col_major(b, n, k).T
            check(f"sgemm_{ta}{tb}", 1.5 * op_a @ op_b - 0.5 * col_major(c, m, n))
    check("dgemm_beta0", 2.0 * col_major(a, m, k) @ col_major(b, k, n))  # NaN in C never reaches D
    half_tn = col_major(a, k, m).T @ col_major(b, k, n) + col_major(c, m, n)
    check("gemmex_half_TN", half_tn)
    check("gemmex_half_out", half_tn.astype(np.float16).astype(np.float64))
    check("gemmex_bf16_NT", col_major(a, m, k) @ col_major(b, n, k).T + col_major(c, m, n))
    check("gemmex_legacy_compute", half_tn)  # CUDA_R_32F as the compute type: CUBLAS_COMPUTE_32F
    assert _values(proc.stdout)["legacy_8i"] == "15"  # no compute type for 8-bit: NOT_SUPPORTED
    ab, bb, cb = _formula(0, batch * m * k), _formula(1, batch * k * n), _formula(2, batch * m * n)
    strided, strided_tn = [], []
    for i in range(batch):
        a_i, b_i = ab[i * m * k : (i + 1) * m * k], bb[i * k * n : (i + 1) * k * n]
        c_i = cb[i * m * n : (i + 1) * m * n]
        strided.append((0.5 * col_major(a_i, m, k) @ col_major(b_i, k, n)).T.ravel())
        strided_tn.append(
            (0.5 * col_major(a_i, k, m).T @ col_major(b_i, k, n) + col_major(c_i, m, n)).T.ravel()
        )
    check("sgemm_strided", np.concatenate(strided))
    check("gemmex_strided_TN", np.concatenate(strided_tn))
    v = _values(proc.stdout)
    assert v["bad_lda"] == "CUBLAS_STATUS_INVALID_VALUE"
    assert v["past_end"] == "CUBLAS_STATUS_EXECUTION_FAILED"
    assert "cublasSgemm: parameter lda has an illegal value" in proc.stderr
    # cublasLt: D = epilogue(W^T X + bias), W stored k x m, bias per row of D.
    pre = col_major(_formula(0, k * m), k, m).T @ col_major(b, k, n) + _formula(3, m)[:, None]
    assert got["lt_bias"][0] == 1  # status 0, one heuristic result
    np.testing.assert_array_equal(got["lt_bias"][1], pre.T.ravel())
    for name in ("lt_gelu_bias", "lt_gelu_aux_bias"):
        assert got[name][0] == 1
        np.testing.assert_allclose(
            got[name][1], _gelu_tanh(pre).T.ravel(), rtol=1e-6, atol=1e-7, err_msg=name
        )
    np.testing.assert_array_equal(got["lt_aux"][1], pre.T.ravel())  # GELU's input, kept for the backward


@pytest.mark.parametrize(
    "program",
    [WARP, CUBLAS],  # WARP holds the stream-memory case; WMMA is test_wmma_shares.py's program
    ids=["warp_and_stream_memory", "cublas"],
)
def test_the_programs_build_with_nvcc(tmp_path, program):
    proc = nvcc_compile(program, tmp_path, needs_header="cublasLt.h" if program == CUBLAS else None)
    assert proc.returncode == 0, proc.stderr
