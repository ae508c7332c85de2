"""The driver API's CUDA arrays (runtime/driver_arrays.cpp, kernels/driver_arrays.cu):
cuArrayCreate/cuArray3DCreate and their descriptors, cuMemcpy2D between host, device and arrays at
offsets, and texture objects over a driver array read by a kernel. Each expected value is computed
here from the values the program stores (texel (x, y) holds 100 y + x) and CUDA's documented
addressing: point sampling, wrapped normalized coordinates, a linear midpoint, 8-bit texels read
as normalized floats unless CU_TRSF_READ_AS_INTEGER."""

from __future__ import annotations

import math

import numpy as np
import pytest

from .conftest import KERNELS, nvcc_compile, run_cli
from .test_run import _values

PROGRAM = KERNELS / "driver_arrays.cu"
W, H = 9, 5
CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_INITIALIZED = 0, 1, 3
CU_AD_FORMAT_FLOAT = 0x20


def _value(x: int, y: int) -> float:
    return float(100 * y + x)


def _floats(text: str) -> list[float]:
    return [float(w) for w in text.split(",")]


def _point(u: float, v: float) -> float:
    """Point sampling at unnormalized (u, v): the texel holding the position."""
    return _value(math.floor(u), math.floor(v))


@pytest.fixture(scope="module", params=["fast", "memcheck"])
def out(request) -> dict[str, str]:
    proc = run_cli("run", str(PROGRAM), "--mode", request.param)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return _values(proc.stdout)


def test_statuses(out):
    assert out["before_init"] == str(CUDA_ERROR_NOT_INITIALIZED)
    for key in ("create", "to_array", "array_to_device", "device_to_host", "create3d", "array_to_array"):
        assert out[key] == str(CUDA_SUCCESS), key
    assert out["too_wide"] == str(CUDA_ERROR_INVALID_VALUE)  # 6 floats into a 5-float row
    assert out["three_channels"] == str(CUDA_ERROR_INVALID_VALUE)
    assert out["destroy_tex"] == out["destroy"] == str(CUDA_SUCCESS)
    assert all(line == "0" for key, line in out.items() if key == "tex_create")


def test_descriptors_read_back(out):
    assert out["desc"] == f"{W},{H},{CU_AD_FORMAT_FLOAT},1"
    assert out["desc3d"] == f"5,2,0,{CU_AD_FORMAT_FLOAT},1"


def test_copies_honour_offsets_and_pitches(out):
    window = np.zeros((4, 4))
    for y in range(2):  # the 3 x 2 window at (2, 1) of the array, placed at (1, 1)
        for x in range(3):
            window[1 + y, 1 + x] = _value(2 + x, 1 + y)
    assert _floats(out["window"]) == window.ravel().tolist()
    assert _floats(out["row"]) == [_value(4 + x, 3) for x in range(5)]


def test_texture_fetches_follow_the_addressing_and_filter_modes(out):
    xs, ys = [0.5, 3.5, 8.5, 2.5], [0.5, 4.5, 2.5, 1.5]
    assert _floats(out["point"]) == [_point(u, v) for u, v in zip(xs, ys, strict=True)]
    # Wrap: the fractional part of a normalized coordinate, scaled by the size.
    us, vs = [1.5 / W + 1.0, 7.5 / W - 1.0], [2.5 / H, 0.5 / H + 2.0]
    wrapped = [_point((u % 1.0) * W, (v % 1.0) * H) for u, v in zip(us, vs, strict=True)]
    assert _floats(out["wrapped"]) == wrapped
    # Linear at (4.0, 2.5): texels (3, 2) and (4, 2) weighted one half each.
    assert _floats(out["linear"]) == [(_value(3, 2) + _value(4, 2)) / 2]


def test_eight_bit_texels_normalized_unless_read_as_integer(out):
    stored = [0, 51, 200, 255]
    got = np.array(_floats(out["u8_normalized"]), dtype=np.float32)  # printed with float's 9 digits
    np.testing.assert_array_equal(got, np.array(stored, dtype=np.float32) / np.float32(255))
    assert [int(w) for w in out["u8_integer"].split(",")] == stored


def test_the_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
