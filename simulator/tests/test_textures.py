"""Textures, surfaces and CUDA arrays, against a numpy model of the CUDA Programming Guide's
"Texture Fetching" appendix: normalized coordinates scale by the size, wrap and mirror act on
normalized coordinates (and clamp otherwise), linear filtering weighs the texels around
x - 0.5 by fractions rounded to 8 fractional bits, border reads give the border colour, and
normalized-float reads divide by the integer type's largest value. The programs' inputs are
rebuilt here from the same formulas; the expected fetches come only from the model below."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, mode_args, nvcc_compile, run_cli
from .test_run import _values

OBJECTS = KERNELS / "textures_objects.cu"
SURFACES = KERNELS / "textures_surfaces.cu"
TEXREF = KERNELS / "textures_references.cu"

WRAP, CLAMP, MIRROR, BORDER = range(4)
MODES = ["wrap", "clamp", "mirror", "border"]
FILTERS = ["point", "linear"]
# Linear results are sums of a few float32 products; the model sums in float64.
FLOAT32_SUMS = {"rtol": 2e-6, "atol": 2e-6}


# ---- the model ---------------------------------------------------------------------------------
def _index(i: int, n: int, mode: int) -> int | None:
    """A texel index by the address mode; None where the border colour applies."""
    if 0 <= i < n:
        return i
    if mode == BORDER:
        return None
    if mode == WRAP:
        return i % n
    if mode == MIRROR:
        m = i % (2 * n)
        return m if m < n else 2 * n - 1 - m
    return min(max(i, 0), n - 1)


def sample(data, coords, mode=CLAMP, linear=False, normalized=False, border=0.0):
    """tex1D/2D/3D of ``data`` (shape (d,) h, w, channels) at ``coords`` (x[, y[, z]])."""
    data = np.asarray(data, dtype=np.float64)
    dims = len(coords)
    sizes = data.shape[:-1][::-1]  # (w, h, d)
    if not normalized and mode in (WRAP, MIRROR):
        mode = CLAMP
    xs = []
    for c, n in zip(coords, sizes):
        if normalized:
            f = math.floor(c)
            if mode == WRAP:
                c = c - f
            elif mode == MIRROR:
                c = c - f if f % 2 == 0 else 1.0 - (c - f)
            c = c * n
        xs.append(c)
    channels = data.shape[-1]

    def texel(idx):
        r = [_index(i, n, mode) for i, n in zip(idx, sizes)]
        if any(v is None for v in r):
            return np.full(channels, border, dtype=np.float64)
        return data[tuple(reversed(r))]

    if not linear:
        return texel([math.floor(x) for x in xs])
    lo = [math.floor(x - 0.5) for x in xs]
    alpha = [np.rint((x - 0.5 - math.floor(x - 0.5)) * 256.0) / 256.0 for x in xs]
    out = np.zeros(channels)
    for corner in itertools.product((0, 1), repeat=dims):
        w = np.prod([a if hi else 1.0 - a for a, hi in zip(alpha, corner)])
        out += w * texel([b + hi for b, hi in zip(lo, corner)])
    return out


def cube_face(x: float, y: float, z: float) -> tuple[int, float, float]:
    """The Programming Guide's cubemap table: face, and the normalized (u, v) on it."""
    ax, ay, az = abs(x), abs(y), abs(z)
    if ax >= ay and ax >= az:
        face, m, s, t = (0 if x >= 0 else 1), ax, (-z if x >= 0 else z), -y
    elif ay >= az:
        face, m, s, t = (2 if y >= 0 else 3), ay, x, (z if y >= 0 else -z)
    else:
        face, m, s, t = (4 if z >= 0 else 5), az, (x if z >= 0 else -x), -y
    return face, (s / m + 1) / 2, (t / m + 1) / 2


# ---- running the programs ----------------------------------------------------------------------
def _rows(stdout: str) -> dict[str, np.ndarray]:
    rows = {}
    for line in stdout.splitlines():
        name, _, rest = line.partition(" ")
        if rest and "=" not in name:
            rows[name] = np.array([float(v) for v in rest.split()])
    return rows


def _run(program, mode: str, *args: str) -> tuple[dict[str, str], dict[str, np.ndarray], str]:
    proc = run_cli("run", str(program), *mode_args(mode), *args)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    values = _values(proc.stdout)
    assert "failed" not in values, values["failed"]
    assert values.get("done") == "1"
    return values, _rows(proc.stdout), proc.stderr


ALL_MODES = EVERY_MODE


@pytest.fixture(scope="module", params=ALL_MODES)
def objects(request):
    return _run(OBJECTS, request.param)


# The program's inputs (the same formulas as textures_objects.cu).
def _d1():
    return np.array([[(i * 5) % 7 - 1.5 + 0.25 * i] for i in range(8)])


def _d2():
    return np.array([[[x * 1.5 + y * y * 0.75 - 2.0] for x in range(8)] for y in range(4)])


def _grid():
    return [(-1.5 + i * 0.78125, -1.25 + j * 0.65625) for j in range(10) for i in range(13)]


@pytest.mark.parametrize("mode", range(4), ids=MODES)
@pytest.mark.parametrize("linear", [0, 1], ids=FILTERS)
@pytest.mark.parametrize("normalized", [0, 1], ids=["texel_coords", "normalized_coords"])
def test_1d_and_2d_arrays_every_address_mode_filter_and_coordinate_kind(objects, mode, linear, normalized):
    _, rows, _ = objects
    xs = [-2.0 + k * 0.15625 for k in range(91)]
    want1 = [sample(_d1(), (x / 8 if normalized else x,), mode, linear, normalized, 9.5)[0] for x in xs]
    got1 = rows[f"tex1d_{MODES[mode]}_{FILTERS[linear]}_{normalized}"]
    want2 = [
        sample(_d2(), ((x / 8, y / 4) if normalized else (x, y)), mode, linear, normalized, 9.5)[0]
        for x, y in _grid()
    ]
    got2 = rows[f"tex2d_{MODES[mode]}_{FILTERS[linear]}_{normalized}"]
    if linear:
        np.testing.assert_allclose(got1, want1, **FLOAT32_SUMS)
        np.testing.assert_allclose(got2, want2, **FLOAT32_SUMS)
    else:
        np.testing.assert_array_equal(got1, want1)
        np.testing.assert_array_equal(got2, want2)


def test_linear_weights_are_rounded_to_eight_fractional_bits(objects):
    """Across texels 0 and 1 the result moves in steps of 1/256 of their difference (the 1.8
    fixed-point weight), and equals the model at coordinates whose fraction needs more bits."""
    _, rows, _ = objects
    got = rows["tex1d_fine"]
    xs = np.float32(0.5) + np.arange(205, dtype=np.float32) * np.float32(0.0049)
    np.testing.assert_allclose(got, [sample(_d1(), (float(x),), CLAMP, True)[0] for x in xs], **FLOAT32_SUMS)
    d = _d1()[:, 0]
    steps = (got - d[0]) / (d[1] - d[0]) * 256
    np.testing.assert_allclose(steps, np.rint(steps), atol=1e-3)
    exact = (xs.astype(np.float64) - 0.5) * 256
    assert np.abs(steps - exact).max() > 0.4  # the unrounded weight would differ by up to half a step


def test_array_copies_round_trip_and_array_to_array(objects):
    values, rows, _ = objects
    assert values["roundtrip2d_mismatches"] == "0"
    assert values["roundtrip3d_mismatches"] == "0"
    np.testing.assert_array_equal(rows["block_x1_y2"], _d2()[2:4, 1:4, 0].ravel())
    np.testing.assert_array_equal(rows["to_from_array"], [100, 200, 300])
    # cudaArrayGetInfo of a 2 x (4 x 4) layered float array: 32-bit float channel, extent, flags.
    assert values["info"] == "32 0 0 0 2 4 4 2 1"


def _uchar4():
    return np.array(
        [
            [
                [(x * 40 + y * 7) % 256, (x * x * 9 + y) % 256, 255 - x * 20 - y * 30, (x * y * 11) % 256]
                for x in range(6)
            ]
            for y in range(5)
        ],
        dtype=np.float64,
    )


def test_pitched_uchar4_normalized_float_linear_and_element_border(objects):
    _, rows, _ = objects
    want = np.concatenate([sample(_uchar4() / 255.0, p, CLAMP, True) for p in _grid()])
    np.testing.assert_allclose(rows["pitch_uchar4_norm_linear"], want, **FLOAT32_SUMS)
    border = np.array([7.0, 8.0, 9.0, 10.0])
    want = np.concatenate([sample(_uchar4(), p, BORDER, False, False, 0.0) for p in _grid()])
    for k, p in enumerate(_grid()):
        if not (0 <= p[0] < 6 and 0 <= p[1] < 5):
            want[4 * k : 4 * k + 4] = border
    np.testing.assert_array_equal(rows["pitch_uchar4_point_border"], want)


def test_linear_memory_fetches_out_of_range_read_zero_and_normalized_shorts(objects):
    values, rows, _ = objects
    data = [i * i - 20 for i in range(10)]
    want = [data[i - 2] if 0 <= i - 2 < 10 else 0 for i in range(15)]
    np.testing.assert_array_equal(rows["fetch_int"], want)
    shorts = np.array([-32768, -32767, -16384, -1, 0, 1, 16384, 32767])
    np.testing.assert_allclose(rows["fetch_short_norm"], np.maximum(shorts / 32767.0, -1.0), rtol=1e-7)
    halves = np.array([0x3C00, 0xC000, 0x3800, 0x7BFF, 0x0001, 0x8400], dtype=np.uint16).view(np.float16)
    # printed with 9 digits, which names one float32 exactly
    np.testing.assert_array_equal(rows["fetch_half"].astype(np.float32), halves.astype(np.float32))
    schar = np.array([-128, -127, -1, 0, 127])
    np.testing.assert_allclose(rows["fetch_schar_norm"], np.maximum(schar / 127.0, -1.0), rtol=1e-7)
    np.testing.assert_allclose(
        rows["fetch_ushort2_norm"], np.array([0, 65535, 1, 32768, 65534, 257]) / 65535.0, rtol=1e-7
    )
    # CUDA's documented refusals: linear filtering of integer elements, normalized 32-bit reads.
    assert values["err_linear_int"] == "cudaErrorInvalidFilterSetting"
    assert values["err_norm_int32"] == "cudaErrorInvalidNormSetting"
    assert values["err_cube_shape"] == "cudaErrorInvalidValue"
    assert values["err_channels"] == "cudaErrorInvalidChannelDescriptor"
    assert values["err_outside"] == "cudaErrorInvalidValue"


def test_3d_trilinear_layered_and_cubemap(objects):
    values, rows, _ = objects
    d3 = np.array(
        [[[[x + 2.0 * y * y - 3.0 * z + 0.5 * x * z] for x in range(4)] for y in range(4)] for z in range(2)]
    )
    pts = [
        (-0.75 + i * 0.5625, -0.75 + j * 0.5625, -0.5 + k * 0.6875)
        for k in range(5)
        for j in range(10)
        for i in range(10)
    ]
    want = [sample(d3, p, CLAMP, True)[0] for p in pts]
    np.testing.assert_allclose(rows["tex3d_clamp_linear"], want, **FLOAT32_SUMS)

    xs = [-1.0 + k * 0.25 for k in range(40)]
    l1 = [np.array([[10.0 * lay + x * x * 0.5] for x in range(8)]) for lay in range(3)]
    l2 = [
        np.array([[[-5.0 * lay + x - 2.0 * y + 0.25 * x * y] for x in range(4)] for y in range(4)])
        for lay in range(2)
    ]
    np.testing.assert_allclose(
        rows["layered1d"], [sample(l1[i % 3], (x,), CLAMP, True)[0] for i, x in enumerate(xs)], **FLOAT32_SUMS
    )
    want2 = [sample(l2[i % 2], (x, 0.5 * x + 1.0), CLAMP, True)[0] for i, x in enumerate(xs)]
    np.testing.assert_allclose(rows["layered2d"], want2, **FLOAT32_SUMS)

    comps = [-1.0, -0.625, -0.25, 0.0, 0.375, 0.75, 1.0]
    faces = np.array([[[[f * 100.0 + y * 4 + x] for x in range(4)] for y in range(4)] for f in range(6)])
    want = []
    for x, y, z in itertools.product(comps, repeat=3):
        m = max(abs(x), abs(y), abs(z))
        if m == 0 or [abs(x), abs(y), abs(z)].count(m) > 1:
            continue
        face, u, v = cube_face(x, y, z)
        want.append(sample(faces[face], (u, v), CLAMP, False, True)[0])
    assert int(values["cube_directions"]) == len(want)
    np.testing.assert_array_equal(rows["cubemap_point"], want)
    # Layer 1 of a layered cubemap is faces 6..11: the same lookups, 600 higher.
    np.testing.assert_array_equal(rows["cubemap_layer1_point"], np.array(want) + 600.0)


def test_out_of_range_coordinates_never_read_outside_the_arrays(objects):
    """Every sample above lies partly outside its texture; under memcheck the run is clean
    (``_run`` demands exit status 0, which a finding turns into 1) and ASan said nothing."""
    _, _, stderr = objects
    assert "AddressSanitizer" not in stderr
    assert "finding" not in stderr


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_one_channel_float_linear_fetches_match_the_general_path_bit_for_bit(mode):
    """A one-channel float texture's linear fetches (their own path in the runtime) equal those
    of a four-channel float texture holding the same first channel and zeros, in all four
    components, border corners included; under memcheck no read leaves the arrays."""
    values, _, stderr = _run(OBJECTS, mode, "--", "float_path")
    assert int(values["samples"]) == 4 * 4 * 2 * 23**3
    assert int(values["border_samples"]) > 0  # the border colour's other channels were summed
    assert values["mismatches"] == "0"
    assert "AddressSanitizer" not in stderr


@pytest.mark.parametrize("program", [OBJECTS, SURFACES], ids=["objects", "surfaces_and_mipmap"])
def test_the_texture_programs_build_with_nvcc(tmp_path, program):
    proc = nvcc_compile(program, tmp_path)
    assert proc.returncode == 0, proc.stderr


# ---- surfaces ------------------------------------------------------------------------------------
SW, SH, SD = 8, 6, 3


@pytest.mark.parametrize("mode", ALL_MODES)
def test_surfaces_write_read_with_boundary_modes_in_every_checker(mode):
    values, rows, _ = _run(SURFACES, mode)
    written = np.array([[100.0 * y + x for x in range(SW)] for y in range(SH)])
    right = np.zeros_like(written)
    right[:, :-1] = written[:, 1:]
    np.testing.assert_array_equal(rows["zero_right"], right.ravel())
    right[:, -1] = written[:, -1]  # clamp: the last element of the row
    np.testing.assert_array_equal(rows["clamp_right"], right.ravel())
    down = np.vstack([written[1:], written[-1:]])
    np.testing.assert_array_equal(rows["clamp_down"], down.ravel())
    np.testing.assert_array_equal(rows["texture_view"], written.ravel())
    np.testing.assert_array_equal(rows["array_copy"], written.ravel())
    # int2 (x + 10y + 100z, -z) over z in [-1, D]: the slices outside read zero.
    want = [sum(x + 10 * y + 100 * z - z for z in range(SD)) for y in range(SH) for x in range(SW)]
    np.testing.assert_array_equal(rows["sum3d"], want)
    assert values["err_no_flag"] == "cudaErrorInvalidValue"
    # Layer 1 of the 2-D layered surface, one to the right (wrapping), plus the 1-D layered one.
    want = [1000 + 10 * y + (x + 1) % SW - (100 * (y % 3) + x) for y in range(SH) for x in range(SW)]
    np.testing.assert_array_equal(rows["layered_surfaces"], want)


def test_surface_trap_mode_faults_the_launch_and_names_the_line():
    proc = run_cli("run", str(SURFACES), "--", "trap")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _values(proc.stdout)["trap_launch"] == "cudaErrorIllegalAddress"
    assert "surf2Dread out of bounds with cudaBoundaryModeTrap (x=32 bytes, y=0, z=0)" in proc.stderr
    line = next(i for i, t in enumerate(SURFACES.read_text().splitlines(), 1) if "trap mode: x == W - 1" in t)
    assert (
        f"textures_surfaces.cu:{line} in kernel 'read_past_edge' block (0,0,0) thread (7,0,0)" in proc.stderr
    )


# ---- texture references --------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ALL_MODES)
def test_texture_references_bind_fetch_and_note_once(mode):
    values, rows, stderr = _run(TEXREF, mode)
    feat = np.array([0.5 * i * i - 3.0 for i in range(12)])
    np.testing.assert_array_equal(rows["gather"], feat[[(i * 7) % 12 for i in range(12)]])
    assert values["offset"] == "0"
    W, H = 8, 4
    fieldv = np.array([[[x * x * 0.25 - y * 1.5] for x in range(W)] for y in range(H)])
    want = [
        sample(fieldv, (0.75 * x - 0.5, 0.625 * y + 0.25), CLAMP, True)[0] for y in range(H) for x in range(W)
    ]
    np.testing.assert_allclose(rows["field"], want, **FLOAT32_SUMS)
    pixels = np.array([[[(x * 37 + y * 91) % 256] for x in range(W)] for y in range(H)]) / 255.0
    want = [
        sample(pixels, ((x + 0.5) / W, (y + 1.25) / H), WRAP, False, True)[0]
        for y in range(H)
        for x in range(W)
    ]
    np.testing.assert_allclose(rows["image"], want, rtol=1e-7)
    notes = [ln for ln in stderr.splitlines() if "gone from current CUDA" in ln]
    gone = "(texture references) is gone from current CUDA; it runs as"
    instead = "a texture object over the same memory"
    assert notes == [
        f"note (simulator): cudaBindTexture {gone} {instead}",
        f"note (simulator): cudaUnbindTexture {gone} cudaDestroyTextureObject",
        f"note (simulator): cudaBindTexture2D {gone} {instead}",
        f"note (simulator): cudaBindTextureToArray {gone} {instead}",
    ]


def test_texture_references_are_refused_by_nvcc_13(tmp_path):
    """The reason the reference program is not built with nvcc: CUDA 12 removed the names."""
    proc = nvcc_compile(TEXREF, tmp_path)
    if proc.returncode == 0:
        pytest.skip("this nvcc still has texture references (CUDA 11 or older)")
    assert "texture" in proc.stderr


# ---- mipmapped arrays ----------------------------------------------------------------------------
MIP_W, MIP_H, MIP_LEVELS = 16, 8, 5  # 10 levels asked for; 1 + log2(16) made
MIP_LODS = np.array([-1.0, 0.0, 0.3, 0.5, 1.25, 2.7, 3.5, 10.0], dtype=np.float32)


def _mip_level(level: int) -> np.ndarray:
    w, h = max(MIP_W >> level, 1), max(MIP_H >> level, 1)
    return np.array([[[level * 10.0 + x * 0.5 + y * 0.25] for x in range(w)] for y in range(h)])


def _mip_sample(u, v, lod, linear: bool, bias: float, lo: float, hi: float) -> float:
    """The level of detail plus the bias, clamped to [lo, hi] and to the levels; the nearest level
    (point mipmap filtering) or the two around it blended by the fraction (linear)."""
    lod = min(max(np.float32(lod) + np.float32(bias), np.float32(lo)), np.float32(hi))
    lod = min(max(lod, 0.0), MIP_LEVELS - 1.0)

    def at(level: int) -> float:
        return sample(_mip_level(level), (u, v), CLAMP, linear=linear, normalized=True)[0]

    if not linear:
        return at(math.floor(lod + 0.5))
    l0 = math.floor(lod)
    f = lod - l0
    if f == 0 or l0 + 1 >= MIP_LEVELS:
        return at(l0)
    return (1 - f) * at(l0) + f * at(l0 + 1)


@pytest.mark.parametrize("mode", ALL_MODES)
def test_mipmapped_array_levels_and_lod_fetches(mode):
    values, rows, _ = _run(SURFACES, mode, "--", "mipmap")
    assert values["levels"] == str(MIP_LEVELS)
    for level in range(MIP_LEVELS):
        assert values[f"level{level}"] == f"{max(MIP_W >> level, 1)}x{max(MIP_H >> level, 1)}"
    for name, linear, bias, lo, hi in (("linear", True, 0.25, 0.5, 3.0), ("point", False, 0.0, 0.0, 10.0)):
        want = [
            _mip_sample(
                np.float32(-0.1) + np.float32(i * 0.3),
                np.float32(0.05) + np.float32(j * 0.3),
                lod,
                linear,
                bias,
                lo,
                hi,
            )
            for lod in MIP_LODS
            for j in range(4)
            for i in range(5)
        ]
        np.testing.assert_allclose(rows[name], want, **FLOAT32_SUMS, err_msg=name)


def test_mipmapped_array_refuses_freeing_a_level_or_freeing_twice():
    values, _, stderr = _run(SURFACES, "fast", "--", "mipmap", "misuse")
    assert values["free_level"] == "1"  # cudaErrorInvalidValue: the mipmapped array owns its levels
    assert values["free_again"] == "1"
    assert "a level of a mipmapped array (cudaFreeMipmappedArray frees it)" in stderr
    assert "not a live mipmapped array" in stderr
