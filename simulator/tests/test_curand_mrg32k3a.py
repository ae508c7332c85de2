"""cuRAND's MRG32k3a (kernels/curand_mrg32k3a.cu): the device API's curandStateMRG32k3a_t and the
host API's CURAND_RNG_PSEUDO_MRG32K3A, checked against this file's model of L'Ecuyer's published
recurrence (exact integer arithmetic), with cuRAND's documented seeding, skip-ahead (offset:
steps; subsequence: 2^76 steps) and conversions; normals by their moments over fixed seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from .conftest import KERNELS, mode_args, nvcc_compile, run_cli
from .test_run import _values

PROGRAM = KERNELS / "curand_mrg32k3a.cu"
SEED = 0x0123456789ABCDEF
M1, M2 = 4294967087, 4294944443
# One step of each component as a 3x3 matrix over (x[n-3], x[n-2], x[n-1]) (L'Ecuyer 1999).
A1 = [[0, 1, 0], [0, 0, 1], [(-810728) % M1, 1403580, 0]]
A2 = [[0, 1, 0], [0, 0, 1], [(-1370589) % M2, 0, 527612]]
BITS_NORM = 1.000000048662  # cuRAND's scale of an output to 32 bits
NORM = 2.3283065498378288e-10  # 1 / M1, cuRAND's scale to (0, 1]


def _mat_mul(a: list[list[int]], b: list[list[int]], m: int) -> list[list[int]]:
    return [[sum(a[i][k] * b[k][j] for k in range(3)) % m for j in range(3)] for i in range(3)]


def _mat_pow(a: list[list[int]], n: int, m: int) -> list[list[int]]:
    out = [[int(i == j) for j in range(3)] for i in range(3)]
    while n:
        if n & 1:
            out = _mat_mul(a, out, m)
        a, n = _mat_mul(a, a, m), n >> 1
    return out


def _apply(a: list[list[int]], v: list[int], m: int) -> list[int]:
    return [sum(a[i][k] * v[k] for k in range(3)) % m for i in range(3)]


def _init(seed: int, subsequence: int, offset: int) -> tuple[list[int], list[int]]:
    """curand_init: 12345 everywhere, seed 0 keeping the published seeds, then the two skips."""
    s1, s2 = [12345] * 3, [12345] * 3
    if seed:
        x1, x2 = (seed & 0xFFFFFFFF) ^ 0x55555555, (seed >> 32) ^ 0xAAAAAAAA
        s1 = [x1 * 12345 % M1, x2 * 12345 % M1, x1 * 12345 % M1]
        s2 = [x2 * 12345 % M2, x1 * 12345 % M2, x2 * 12345 % M2]
    steps = subsequence * 2**76 + offset
    return _apply(_mat_pow(A1, steps, M1), s1, M1), _apply(_mat_pow(A2, steps, M2), s2, M2)


def _stream(s1: list[int], s2: list[int], count: int) -> list[int]:
    """The combined outputs in 1..M1 (cuRAND maps 0 to M1)."""
    out = []
    for _ in range(count):
        s1 = _apply(A1, s1, M1)
        s2 = _apply(A2, s2, M2)
        out.append((s1[2] - s2[2]) % M1 or M1)
    return out


def _raw(r: int) -> int:
    return int(r * BITS_NORM)


def _uniform(r: int) -> float:
    return float(np.float32(r * NORM))


def _floats(text: str) -> list[float]:
    return [float.fromhex(w) for w in text.split(",")]


def _ints(text: str) -> list[int]:
    return [int(w) for w in text.split(",")]


# memcheck for its checks of the states' memory; the kernels share nothing a race or barrier check
# would look at.
@pytest.fixture(scope="module", params=["fast", "memcheck"])
def out(request) -> dict[str, str]:
    proc = run_cli("run", str(PROGRAM), *mode_args(request.param))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return _values(proc.stdout)


def test_the_model_gives_the_published_known_answers():
    # Rosetta Code's MRG32k3a task: both components seeded (0, 0, 1234567), outputs z + 1 with
    # z = (x1 - x2) mod m1: the recurrence alone, without cuRAND's seeding or mapping of 0.
    s = [0, 0, 1234567]
    want = [1459213977, 2827710106, 4245671317, 3877608661, 2595287583]
    assert [r % M1 + 1 for r in _stream(s, s, 5)] == want


@pytest.mark.parametrize("seed", [0, SEED])
@pytest.mark.parametrize("offset", [0, 7])
def test_device_api_outputs_follow_seed_subsequence_and_offset(out, seed, offset):
    key = f"dev_{seed:x}_{offset}"
    raw, uni, dbl = _ints(out[f"{key}_raw"]), _floats(out[f"{key}_uniform"]), _floats(out[f"{key}_double"])
    for t in range(4):  # thread t: subsequence t
        r = _stream(*_init(seed, t, offset), 12)
        assert raw[4 * t : 4 * t + 4] == [_raw(x) for x in r[:4]]
        assert uni[4 * t : 4 * t + 4] == [_uniform(x) for x in r[4:8]]
        assert dbl[4 * t : 4 * t + 4] == [x * NORM for x in r[8:]]


def test_device_api_skipahead_and_skipahead_subsequence(out):
    s1, s2 = _init(SEED, 0, 1000003)
    first = _stream(s1, s2, 1)[0]
    s1, s2 = _init(SEED, 2, 1000004)  # one step taken, then two subsequences on
    assert _ints(out["dev_skips"]) == [_raw(first), _raw(_stream(s1, s2, 1)[0])]


@pytest.mark.parametrize("who", ["device", "host"])
def test_host_api_draws_one_state_in_order_from_seed_and_offset(out, who):
    r = _stream(*_init(SEED, 0, 5), 12)
    assert out[f"{who}_create"] == "0"
    assert _ints(out[f"{who}_api_raw"]) == [_raw(x) for x in r[:6]]
    assert _floats(out[f"{who}_api_uniform"]) == [_uniform(x) for x in r[6:]]


@pytest.mark.parametrize(("key", "mean", "sd"), [("dev_normal", 0.0, 1.0), ("host_api_normal", 2.0, 3.0)])
def test_normal_moments(out, key, mean, sd):
    n = int(out[f"{key}_n"])
    # Five standard errors: the seeds are fixed, so this either always holds or never does.
    assert abs(float(out[f"{key}_mean"]) - mean) < 5 * sd / math.sqrt(n)
    assert abs(float(out[f"{key}_var"]) - sd * sd) < 5 * sd * sd * math.sqrt(2 / n)


def test_the_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path, needs_header="curand_kernel.h")
    assert proc.returncode == 0, proc.stderr
