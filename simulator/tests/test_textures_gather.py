"""tex2Dgather against a float32 model of the rule PTX's tld4 documents: the four texels
bilinear filtering would weigh for (x, y) (x_B = x - 0.5 after normalized coordinates are
wrapped or mirrored and scaled; i = floor(x_B), j = floor(y_B)), each resolved by the address
mode, one component of each, counter-clockwise from the lower left: (i, j+1), (i+1, j+1),
(i+1, j), (i, j). The programs' inputs are rebuilt here from the same formulas."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, mode_args, run_cli
from .test_run import _values
from .test_textures import BORDER, CLAMP, MIRROR, MODES, WRAP, _index, _rows

# The gathers are textures_objects.cu's "gather" case and the texture-reference gathers
# textures_references.cu's: one build per mode for each program, shared with test_textures.py.
GATHER = KERNELS / "textures_objects.cu"
GATHER_REF = KERNELS / "textures_references.cu"
W, H, UW, UH, NX, NY = 8, 4, 5, 3, 45, 9
# tld4's order of the footprint texels, as offsets from (i, j).
FOOTPRINT = ((0, 1), (1, 1), (1, 0), (0, 0))
F32 = np.float32


def _grid() -> list[tuple[float, float]]:
    """The program's points: quarter texels on and between edges and centres, and outside."""
    return [(-1.5 + 0.25 * i, -1.0 + 0.75 * j) for j in range(NY) for i in range(NX)]


def _texels() -> np.ndarray:
    return np.array([[[1000.0 * c + 10.0 * y + x for c in range(4)] for x in range(W)] for y in range(H)])


def _utexels() -> np.ndarray:
    rows = [[[(x * 37 + y * 91 + c * 53) % 256 for c in range(4)] for x in range(UW)] for y in range(UH)]
    return np.array(rows)


def _low_corner(c: float, n: int, mode: int, normalized: bool) -> int:
    """floor(x_B) in float32, as the texture unit computes it."""
    c = F32(c)
    if normalized:
        f = np.floor(c)
        if mode == WRAP:
            c = c - f
        elif mode == MIRROR:
            c = c - f if f % 2 == 0 else F32(1.0) - (c - f)
        c = c * F32(n)
    return int(np.floor(c - F32(0.5)))


def gather(data, x, y, comp, mode, normalized, border):
    """tex2Dgather of ``data`` (shape h, w, channels) at (x, y): four values of component comp."""
    h, w = data.shape[:2]
    if not normalized and mode in (WRAP, MIRROR):
        mode = CLAMP  # wrap and mirror need normalized coordinates (docs/textures.md)
    i, j = _low_corner(x, w, mode, normalized), _low_corner(y, h, mode, normalized)
    out = []
    for dx, dy in FOOTPRINT:
        xi, yj = _index(i + dx, w, mode), _index(j + dy, h, mode)
        out.append(border[comp] if xi is None or yj is None else data[yj, xi, comp])
    return out


def _run(program, mode: str, *args: str) -> dict[str, np.ndarray]:
    proc = run_cli("run", str(program), *mode_args(mode), *args)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    values = _values(proc.stdout)
    assert "failed" not in values, values["failed"]
    assert values.get("done") == "1"
    assert "AddressSanitizer" not in proc.stderr and "finding" not in proc.stderr
    return _rows(proc.stdout)


@pytest.fixture(scope="module", params=EVERY_MODE)
def gathered(request):
    return _run(GATHER, request.param, "--", "gather")


@pytest.mark.parametrize("mode", range(4), ids=MODES)
@pytest.mark.parametrize("normalized", [False, True], ids=["texels", "normalized"])
def test_every_component_and_address_mode_of_a_float4_array(gathered, mode, normalized):
    border = (-1.0, -2.0, -3.0, -4.0)
    sx, sy = (W, H) if normalized else (1, 1)
    want = [
        gather(_texels(), x / sx, y / sy, comp, mode, normalized, border)
        for x, y in _grid()
        for comp in range(4)
    ]
    name = f"f4_{MODES[mode]}_{'normalized' if normalized else 'texels'}"
    np.testing.assert_array_equal(gathered[name], np.ravel(want), err_msg=name)


def test_footprint_order_at_one_point_by_hand(gathered):
    """(2.0, 2.0) in texel coordinates: x_B = y_B = 1.5, so i = j = 1; texel (x, y) holds 10y + x
    in component 0, and tld4's order is (1,2), (2,2), (2,1), (1,1)."""
    p = next(k for k, (x, y) in enumerate(_grid()) if (x, y) == (2.0, 2.0))
    np.testing.assert_array_equal(gathered["f4_clamp_texels"][16 * p : 16 * p + 4], [21, 22, 12, 11])


def test_normalized_float_reads_with_a_border_and_element_reads_with_clamp(gathered):
    ub = (0.25, 0.5, 0.75, 1.0)
    norm = [gather(_utexels() / 255.0, x, y, c, BORDER, False, ub) for x, y in _grid() for c in range(4)]
    np.testing.assert_allclose(gathered["u4_normalized_border"], np.ravel(norm), rtol=1e-7)
    elem = [gather(_utexels(), x, y, c, CLAMP, False, ub) for x, y in _grid() for c in range(4)]
    np.testing.assert_array_equal(gathered["u4_element_clamp"], np.ravel(elem))


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_texture_references_gather_elements_and_normalized_floats(mode):
    """The legacy form returns four of the element's component type, or float4 when normalized."""
    rows = _run(GATHER_REF, mode, "--", "gather")
    no_border = (0, 0, 0, 0)
    points = [(x, y, c) for x, y in _grid() for c in range(4)]
    elem = [gather(_utexels(), x, y, c, CLAMP, False, no_border) for x, y, c in points]
    np.testing.assert_array_equal(rows["ref_elem"], np.ravel(elem))
    norm = [gather(_utexels() / 255.0, x, y, c, CLAMP, False, no_border) for x, y, c in points]
    np.testing.assert_allclose(rows["ref_norm"], np.ravel(norm), rtol=1e-7)


def test_a_layered_gather_is_refused_by_name_and_stops_the_launch():
    proc = run_cli("run", str(GATHER), "--", "gather", "layered")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _values(proc.stdout)["layered_launch"] == "cudaErrorLaunchFailure"
    line = next(i for i, t in enumerate(GATHER.read_text().splitlines(), 1) if "void gather_layered" in t)
    why = "is a gather of a layered or cubemap texture, which the simulator does not model"
    assert f"tex2Dgather (component 0) at {GATHER}:{line} {why}" in proc.stderr


# nvcc builds the gathers' program in test_textures.py (textures_objects.cu holds them).
