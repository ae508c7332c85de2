"""cuRAND's device and host APIs (simulator/runtime/include/curand_kernel.h, runtime/curand.cpp),
checked against the published Philox4x32-10 known-answer vectors and against this file's own
Python models of XORWOW (seeding, stepping, and the 2^67-step subsequence jump done with
numpy's GF(2) matrix powers) and Philox; distributions by their moments over fixed seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, mode_args, nvcc_compile, run_cli
from .test_run import _values

PROGRAM = KERNELS / "curand_calls.cu"
SEED = 0x0123456789ABCDEF
M32 = 0xFFFFFFFF


def _words(text: str) -> list[int]:
    return [int(w) for w in text.split(",")]


def _philox(ctr: list[int], key: list[int]) -> list[int]:
    c, k = list(ctr), list(key)
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & M32, (p0 >> 32) ^ c[3] ^ k[1], p0 & M32]
        k = [(k[0] + 0x9E3779B9) & M32, (k[1] + 0xBB67AE85) & M32]
    return c


def _philox_stream(seed: int, subsequence: int, offset: int, count: int) -> list[int]:
    key = [seed & M32, seed >> 32]
    counter = (subsequence << 64) + offset // 4
    out, skip = [], offset % 4
    while len(out) < count + skip:
        ctr = [(counter >> (32 * i)) & M32 for i in range(4)]
        out += _philox(ctr, key)
        counter += 1
    return out[skip : skip + count]


def _xorwow_seed(seed: int) -> tuple[int, list[int]]:
    t0 = (1099087573 * ((seed & M32) ^ 0xAAD26B49)) & M32
    t1 = (2591861531 * ((seed >> 32) ^ 0xF7DCEFDD)) & M32
    v = [(123456789 + t0) & M32, 362436069 ^ t0, (521288629 + t1) & M32, 88675123 ^ t1, (5783321 + t0) & M32]
    return (6615241 + t1 + t0) & M32, v


def _xorwow_step(v: list[int]) -> list[int]:
    t = v[0] ^ (v[0] >> 2)
    return v[1:] + [((v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1))) & M32]


def _xorwow_stream(d: int, v: list[int], count: int) -> list[int]:
    out = []
    for _ in range(count):
        v = _xorwow_step(v)
        d = (d + 362437) & M32
        out.append((v[4] + d) & M32)
    return out


def _bits(v: list[int]) -> np.ndarray:
    return np.array([(v[j // 32] >> (j % 32)) & 1 for j in range(160)], dtype=np.int64)


def _words_of(bits: np.ndarray) -> list[int]:
    return [int(sum(int(bits[32 * w + b]) << b for b in range(32))) for w in range(5)]


def _jump_2_67(v: list[int], times: int) -> list[int]:
    """v after times * 2^67 xorshift steps: M^(2^67) by 67 squarings of the step matrix mod 2."""
    m = np.zeros((160, 160), dtype=np.int64)
    for j in range(160):
        basis = [0] * 5
        basis[j // 32] = 1 << (j % 32)
        m[:, j] = _bits(_xorwow_step(basis))
    for _ in range(67):
        m = (m @ m) % 2
    bits = _bits(v)
    for _ in range(times):
        bits = (m @ bits) % 2
    return _words_of(bits)


@pytest.fixture(scope="module", params=EVERY_MODE)
def out(request) -> dict[str, str]:
    proc = run_cli("run", str(PROGRAM), *mode_args(request.param))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "generator type 141 is not provided" in proc.stderr
    return _values(proc.stdout)


def test_philox_matches_the_published_known_answers(out):
    want = [
        0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8,  # counter 0, key 0
        0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD,  # all ones
        0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1,  # the digits of pi
    ]  # fmt: skip
    assert _words(out["philox_kat"]) == want


def test_philox_streams_follow_seed_subsequence_and_offset(out):
    got = _words(out["philox_raw"])
    for t in range(4):  # thread t: subsequence t, offset 3
        assert got[6 * t : 6 * t + 6] == _philox_stream(SEED, t, 3, 6)


def test_xorwow_seeding_stepping_offset_and_subsequences(out):
    d, v = _xorwow_seed(SEED)
    raw, offset5 = _words(out["xorwow_raw"]), _words(out["xorwow_offset5"])
    first = _xorwow_stream(d, v, 11)
    assert raw[:6] == first[:6]
    assert offset5[:6] == first[5:11]  # offset 5 skips five outputs
    for t in range(1, 4):  # subsequence t starts 2^67 * t steps on; d moves by 0 mod 2^32
        assert raw[6 * t : 6 * t + 6] == _xorwow_stream(d, _jump_2_67(v, t), 6)
    assert _words(out["host_raw"]) == first[:4]  # the host API's XORWOW: one state, in order


@pytest.mark.parametrize("gen", ["xorwow", "philox"])
def test_uniform_and_normal_moments(out, gen):
    n = int(out[f"{gen}_uniform_n"])
    # Five standard errors: the seeds are fixed, so this either always holds or never does.
    assert abs(float(out[f"{gen}_uniform_mean"]) - 0.5) < 5 * math.sqrt(1 / 12 / n)
    assert abs(float(out[f"{gen}_uniform_var"]) - 1 / 12) < 5 * math.sqrt(1 / 180 / n)
    assert 0.0 < float(out[f"{gen}_uniform_min"]) and float(out[f"{gen}_uniform_max"]) <= 1.0
    assert abs(float(out[f"{gen}_normal_mean"])) < 5 / math.sqrt(n)
    assert abs(float(out[f"{gen}_normal_var"]) - 1.0) < 5 * math.sqrt(2 / n)


def test_host_api_normals_statuses_and_unsupported_generators(out):
    n = int(out["host_normal_n"])
    assert abs(float(out["host_normal_mean"]) - 2.0) < 5 * 3.0 / math.sqrt(n)
    assert abs(float(out["host_normal_var"]) - 9.0) < 5 * 9.0 * math.sqrt(2 / n)
    assert out["create"] == "0"
    assert out["odd_length"] == "105"  # CURAND_STATUS_LENGTH_NOT_MULTIPLE: normals come in pairs
    assert out["unsupported"] == "103"  # CURAND_STATUS_TYPE_ERROR, with a line naming the type


def test_the_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path, needs_header="curand_kernel.h")
    assert proc.returncode == 0, proc.stderr
