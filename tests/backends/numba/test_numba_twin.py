"""What only the numba CPU twin has: its singleton, the install hint, the visible numpy
fallback, the kernel bodies compiled alone, the paths the generic suite's small shapes miss
(long reductions, the matmul paths), and the on-disk kernel cache."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tl_testing import fail_on_new_fallbacks

import torchlight
from torchlight.backends import kernel_bodies
from torchlight.backends.base import Backend
from torchlight.backends.numba_twin import backend as numba_twin
from torchlight.backends.numba_twin import kernels as numba_kernels
from torchlight.backends.ops import ScalarOp
from torchlight.core.device import Device
from torchlight.core.tensor_data import TensorData

pytestmark = pytest.mark.requires_backend("numba", reason="these are the numba twin's own tests")

ROOT = Path(torchlight.__file__).resolve().parent.parent
LOGGER = "torchlight.backends.numba_twin.backend"


def _run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=300, cwd=ROOT
    )


def _data(rng: np.random.Generator, shape, dtype=np.float64) -> TensorData:
    return TensorData.from_array(rng.standard_normal(shape).astype(dtype))


def _refuse_numpy_reference(x):
    # object() has no numba type, so numba cannot compile this body.
    return -x if object() is not None else x


# --- identity --------------------------------------------------------------------------


def test_numba_backend_is_a_cached_cpu_singleton():
    from torchlight.backends import NumbaBackend as FromPackage
    from torchlight.backends.cuda import NumbaBackend, numba_backend

    first = numba_backend()
    assert first is numba_backend()
    assert isinstance(first, NumbaBackend) and isinstance(first, Backend)
    assert FromPackage is NumbaBackend is numba_twin.NumbaBackend
    assert first.device == Device("cpu")
    assert first.name == "numba"
    assert NumbaBackend() is not first  # the class still builds independent instances


# --- without numba ------------------------------------------------------------------------

_WITHOUT_NUMBA = """
import sys
sys.modules["numba"] = None  # makes every "import numba" fail as if it were not installed
import torchlight
import torchlight.backends.cuda as cuda
import torchlight.backends.numba_twin.backend
import torchlight.backends.numba_twin.kernels
import torchlight.backends.kernel_bodies as kb
assert callable(kb.make_bodies)
for make in (cuda.NumbaBackend, cuda.numba_backend):
    try:
        make()
    except ImportError as err:
        print("HINT:", err)
    else:
        raise SystemExit("built a NumbaBackend without numba")
"""


def test_without_numba_import_works_and_constructors_give_the_install_hint():
    result = _run_python(_WITHOUT_NUMBA)
    assert result.returncode == 0, result.stderr
    hints = [line for line in result.stdout.splitlines() if line.startswith("HINT:")]
    assert len(hints) == 2
    for line in hints:
        assert 'pip install "torchlight[numba]"' in line


def test_importing_the_twin_does_not_import_numba():
    code = "import sys, torchlight.backends.numba_twin.backend, torchlight.backends.numba_twin.kernels\n"
    code += "print('numba' in sys.modules)"
    result = _run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


# --- the visible numpy fallback ------------------------------------------------------------


def test_an_op_numba_cannot_compile_falls_back_to_numpy_with_one_debug_line(caplog):
    backend = numba_twin.NumbaBackend()
    op = ScalarOp("refuse_numpy_reference", _refuse_numpy_reference, np.negative)
    run = backend.map(backend.kernel_for(op))
    a = _data(np.random.default_rng(1), (3, 4))
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        first = run(a)
        second = run(a.transpose())
    np.testing.assert_array_equal(first.array, -a.array)
    np.testing.assert_array_equal(second.array, -a.array.T)
    lines = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(lines) == 1, lines
    assert "refuse_numpy_reference" in lines[0] and "numpy" in lines[0]
    assert backend.fallbacks == {"refuse_numpy_reference"}


def test_a_numpy_ufunc_given_to_zip_and_reduce_runs_the_numpy_path_visibly(caplog):
    backend = numba_twin.NumbaBackend()
    rng = np.random.default_rng(2)
    a, b = _data(rng, (2, 3)), _data(rng, (3,))
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        total = backend.zip(np.hypot)(a, b)
        prod = backend.reduce(np.multiply, 1.0)(a, 0)
    np.testing.assert_allclose(total.array, np.hypot(a.array, b.array))
    np.testing.assert_allclose(prod.array, a.array.prod(axis=0, keepdims=True))
    names = " ".join(r.getMessage() for r in caplog.records if r.name == LOGGER)
    assert "'hypot'" in names and "'multiply'" in names


def test_a_fallback_fails_the_test_that_hit_it_and_every_later_one():
    backend = numba_twin.NumbaBackend()
    op = ScalarOp("refuse_numpy_reference", _refuse_numpy_reference, np.negative)
    a = _data(np.random.default_rng(5), (2, 3))
    for _ in range(2):  # the second test to run the op fails too: the op was forgotten after the first
        before = set(backend.fallbacks)
        backend.map(backend.kernel_for(op))(a)
        with pytest.raises(pytest.fail.Exception, match="fell back .* for refuse_numpy_reference"):
            fail_on_new_fallbacks(backend, before)
        assert backend.fallbacks == set()
    fail_on_new_fallbacks(backend, set())  # nothing new: passes


def test_table_ops_run_compiled_kernels_without_a_fallback(caplog):
    backend = numba_twin.NumbaBackend()
    a = _data(np.random.default_rng(3), (4, 5))
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        out = backend.add(a, a)
    np.testing.assert_allclose(out.array, 2 * a.array)
    assert not [r for r in caplog.records if r.name == LOGGER]
    assert backend.fallbacks == set()


# --- kernel bodies compiled alone -----------------------------------------------------------


@pytest.fixture(scope="module")
def bodies():
    import numba

    return kernel_bodies.make_bodies(numba.njit)


def test_make_bodies_compiles_every_named_body(bodies):
    for name in kernel_bodies.BODY_NAMES:
        assert callable(getattr(bodies, name)), name


def test_index_bodies_match_numpy(bodies):
    shape = np.array([2, 3, 4], dtype=np.int64)
    index = np.zeros(3, dtype=np.int64)
    small = np.array([3, 1], dtype=np.int64)
    small_index = np.zeros(2, dtype=np.int64)
    strides = np.array([1, 7], dtype=np.int64)  # a transposed view with a padded row
    for ordinal in range(24):
        bodies.to_index(ordinal, shape, index)
        assert tuple(index) == np.unravel_index(ordinal, (2, 3, 4))
        bodies.broadcast_index(index, shape, small, small_index)
        assert tuple(small_index) == (index[1], 0)
        expected = 5 + index[1] * 1
        assert bodies.index_to_position(small_index, strides, 5) == expected
        assert bodies.broadcast_position(ordinal, shape, small, strides, 5) == expected
    contiguous = np.array([12, 4, 1], dtype=np.int64)
    for ordinal in range(24):
        assert bodies.ordinal_to_position(ordinal, shape, contiguous, 0) == ordinal


def test_layernorm_param_bodies_match_numpy(bodies):
    rng = np.random.default_rng(4)
    rows, hidden = 7, 5
    dy, x = rng.standard_normal(rows * hidden), rng.standard_normal(rows * hidden)
    mean, rstd = rng.standard_normal(rows), rng.random(rows) + 0.5
    xhat = (x.reshape(rows, hidden) - mean[:, None]) * rstd[:, None]
    want_gamma = (dy.reshape(rows, hidden) * xhat).sum(axis=0)
    want_beta = dy.reshape(rows, hidden).sum(axis=0)
    dgamma, dbeta = np.zeros(hidden), np.zeros(hidden)
    for col in range(hidden):
        bodies.layernorm_param_col(col, dy, x, mean, rstd, dgamma, dbeta, rows, hidden)
    np.testing.assert_allclose(dgamma, want_gamma)
    np.testing.assert_allclose(dbeta, want_beta)
    chunks, per_chunk = 3, 3
    parts_g, parts_b = np.zeros(chunks * hidden), np.zeros(chunks * hidden)
    for chunk in range(chunks):
        bodies.layernorm_param_rows(chunk, per_chunk, rows, dy, x, mean, rstd, parts_g, parts_b, hidden)
    np.testing.assert_allclose(parts_g.reshape(chunks, hidden).sum(axis=0), want_gamma)
    np.testing.assert_allclose(parts_b.reshape(chunks, hidden).sum(axis=0), want_beta)


# --- paths the generic suite's small shapes do not reach ------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_reductions_match_numpy_on_every_dim(dtype):
    backend = numba_twin.numba_backend()
    rng = np.random.default_rng(5)
    for length in (0, 7, 8, 9, 13, 64):
        # Permuted so that every reduced dim is strided.
        a = TensorData.from_array(rng.uniform(0.5, 1.5, (length, 3, 11)).astype(dtype)).permute(2, 0, 1)
        for dim in range(3):
            rtol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(
                backend.add_reduce(a, dim).array, a.array.sum(axis=dim, keepdims=True), rtol=rtol, atol=rtol
            )
            np.testing.assert_allclose(
                backend.mul_reduce(a, dim).array, a.array.prod(axis=dim, keepdims=True), rtol=rtol
            )
            np.testing.assert_array_equal(
                backend.max_reduce(a, dim).array, np.max(a.array, axis=dim, keepdims=True, initial=-np.inf)
            )


def _matmul_cases(rng):
    yield _data(rng, (2, 5, 7)), _data(rng, (2, 7, 3))  # contiguous, equal batch
    yield _data(rng, (3, 1, 4, 6)), _data(rng, (2, 6, 5))  # batch broadcast
    yield _data(rng, (6, 4)).transpose(), _data(rng, (6, 9))  # strided left operand
    yield _data(rng, (40, 33)), _data(rng, (33, 70))  # more than one tile of rows


@pytest.mark.parametrize("path", ["fast", "tiled", "body"])
def test_every_matmul_path_matches_numpy(path):
    backend = numba_twin.NumbaBackend(blocked_matmul=path != "body")
    if path == "tiled":
        backend.fallbacks.add("matmul_blas")  # as when numba has no BLAS binding
    for a, b in _matmul_cases(np.random.default_rng(6)):
        np.testing.assert_allclose(backend.matmul(a, b).array, np.matmul(a.array, b.array), rtol=1e-10)


def test_map_writes_into_a_strided_out_view():
    backend = numba_twin.numba_backend()
    rng = np.random.default_rng(7)
    a = _data(rng, (3, 4))
    target = TensorData.zeros((4, 3), np.float64).transpose()
    result = backend.exp_map(a, out=target)
    assert result is target
    np.testing.assert_allclose(target.array, np.exp(a.array))


# --- the on-disk cache ---------------------------------------------------------------------

_CACHED_CALL = """
import numpy as np
from torchlight.backends.numba_twin.backend import numba_backend
from torchlight.core.tensor_data import TensorData
a = TensorData.from_array(np.arange(6.0).reshape(2, 3))
numba_backend().attn_softmax_bw(a, a)  # a fused op: one row body per prange index
print(numba_backend().neg_map(a).array.sum())
"""


def test_a_second_process_loads_the_map_and_row_kernels_from_the_cache(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path), "NUMBA_DEBUG_CACHE": "1"}
    cold = _run_python(_CACHED_CALL, **env)
    assert cold.returncode == 0, cold.stderr
    assert "data saved" in cold.stdout
    warm = _run_python(_CACHED_CALL, **env)
    assert warm.returncode == 0, warm.stderr
    assert "data loaded" in warm.stdout and "data saved" not in warm.stdout
    assert warm.stdout.strip().splitlines()[-1] == "-15.0"


def test_every_kernel_closure_carries_the_source_key(monkeypatch):
    from torchlight.backends.ops import UNARY_OPS

    def closure_values(dispatcher):
        return [cell.cell_contents for cell in dispatcher.py_func.__closure__]

    def form(dispatcher):
        return dispatcher.targetoptions.get("parallel", False)

    exp = next(op for op in UNARY_OPS if op.name == "exp")
    for work in (0, numba_kernels.SERIAL_BELOW):
        kernel = numba_kernels.op_kernel("map", exp.scalar, work)
        assert (numba_kernels.source_key(exp.scalar), form(kernel)) in closure_values(kernel)
    for (name, _), kernel in numba_kernels.build().items():
        # Each form has its own key: numba's cache key leaves the compile options out.
        assert (numba_kernels.source_key(), form(kernel)) in closure_values(kernel), name
    # The key follows the scalar's code and the digest of kernel_bodies.py + ops.py.
    neg = next(op for op in UNARY_OPS if op.name == "neg")
    assert numba_kernels.source_key(exp.scalar) != numba_kernels.source_key(neg.scalar)
    before = numba_kernels.source_key(exp.scalar)
    monkeypatch.setattr(numba_kernels, "_SOURCES_DIGEST", b"an edited kernel_bodies.py")
    assert numba_kernels.source_key(exp.scalar) != before


def test_map_into_an_out_view_of_its_own_input_reads_before_it_writes():
    backend = numba_twin.numba_backend()
    square = TensorData.from_array(np.arange(16.0).reshape(4, 4))
    expected = -square.array.T.copy()
    result = backend.neg_map(square.transpose(), out=square)
    assert result is square
    np.testing.assert_array_equal(square.array, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_rows_of_strided_and_broadcast_operands_match_numpy(dtype):
    # Last dims this long run one row per thread; the generic suite's shapes never do.
    backend = numba_twin.numba_backend()
    rng = np.random.default_rng(8)
    long = numba_twin._MIN_ROW_LEN + 3
    wide = _data(rng, (long, 3, 2), dtype).permute(2, 1, 0)  # (2, 3, long), strided last dim
    row = _data(rng, (1, long), dtype)
    column = _data(rng, (3, 1), dtype)
    np.testing.assert_array_equal(backend.add(wide, row).array, wide.array + row.array)
    np.testing.assert_array_equal(backend.mul(column, wide).array, column.array * wide.array)
    np.testing.assert_array_equal(backend.neg_map(wide).array, -wide.array)
    target = TensorData.zeros((long, 3, 2), dtype).permute(2, 1, 0)
    backend.neg_map(wide, out=target)
    np.testing.assert_array_equal(target.array, -wide.array)


# --- the serial and parallel forms of each kernel -------------------------------------------


@pytest.mark.parametrize("parallel", [True, False], ids=["parallel", "serial"])
def test_both_forms_of_every_kernel_match_numpy(monkeypatch, parallel):
    # The bar at 0 runs every call's parallel form, at 2**62 every call's serial form.
    monkeypatch.setattr(numba_kernels, "SERIAL_BELOW", 0 if parallel else 1 << 62)
    forms: list[tuple[str, bool]] = []

    def spy(real):
        def choose(name, *args):
            kernel = real(name, *args)
            forms.append((name, kernel.targetoptions.get("parallel", False)))
            return kernel

        return choose

    monkeypatch.setattr(numba_twin, "op_kernel", spy(numba_kernels.op_kernel))
    monkeypatch.setattr(numba_twin, "fixed_kernel", spy(numba_kernels.fixed_kernel))
    backend = numba_twin.NumbaBackend()
    rng = np.random.default_rng(9)
    x = _data(rng, (2, 3, 4, 5))
    strided = x.permute(3, 1, 2, 0)
    column = _data(rng, (4, 1))
    np.testing.assert_allclose(backend.exp_map(strided).array, np.exp(strided.array), rtol=1e-14)
    np.testing.assert_array_equal(backend.add(x, column).array, x.array + column.array)
    # A float division by zero gives inf or nan in both forms, as on a GPU (numba's numpy error model).
    zero = TensorData.from_array(np.zeros((4, 1)))
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(backend.div(x, zero).array, x.array / zero.array)
    np.testing.assert_allclose(backend.add_reduce(strided, 2).array, strided.array.sum(2, keepdims=True))
    for path in ("tiled", "body"):
        mm = numba_twin.NumbaBackend(blocked_matmul=path == "tiled")
        mm.fallbacks.add("matmul_blas")
        for a, b in _matmul_cases(np.random.default_rng(6)):
            np.testing.assert_allclose(mm.matmul(a, b).array, np.matmul(a.array, b.array), rtol=1e-10)
    y = backend.attn_softmax_fw(x, causal=True)
    want = np.where(np.tril(np.ones((4, 5), dtype=bool)), x.array, -np.inf)
    want = np.exp(want - want.max(-1, keepdims=True))
    np.testing.assert_allclose(y.array, want / want.sum(-1, keepdims=True), rtol=1e-12)
    dy = _data(rng, x.shape)
    dx = backend.attn_softmax_bw(y, dy).array
    want_dx = y.array * (dy.array - (dy.array * y.array).sum(-1, keepdims=True))
    np.testing.assert_allclose(dx, want_dx, atol=1e-12)
    gamma, beta = _data(rng, (5,)), _data(rng, (5,))
    out, mean, rstd = backend.layernorm_fw(x, gamma, beta, eps=1e-5)
    want_rstd = 1 / np.sqrt(x.array.var(-1) + 1e-5)
    np.testing.assert_allclose(rstd.array, want_rstd, rtol=1e-12)
    norm = (x.array - x.array.mean(-1, keepdims=True)) * want_rstd[..., None]
    np.testing.assert_allclose(out.array, norm * gamma.array + beta.array, rtol=1e-12, atol=1e-12)
    _, dgamma, dbeta = backend.layernorm_bw(dy, x, gamma, mean, rstd)
    np.testing.assert_allclose(dgamma.array, (dy.array * norm).reshape(-1, 5).sum(0), rtol=1e-10)
    np.testing.assert_allclose(dbeta.array, dy.array.reshape(-1, 5).sum(0), rtol=1e-10)
    kinds = {name for name, _ in forms}
    assert kinds >= {"map", "zip", "reduce", "matmul_tiled", "matmul_body", "softmax_fw", "softmax_bw"}
    assert kinds >= {"layernorm_fw", "layernorm_bw"}
    assert {form for _, form in forms} == {parallel}, forms


def test_a_call_takes_the_serial_form_below_the_bar_and_the_parallel_form_from_it():
    from torchlight.backends.ops import BINARY_OPS

    add = next(op for op in BINARY_OPS if op.name == "add")
    bar = numba_kernels.SERIAL_BELOW
    assert not numba_kernels.op_kernel("zip", add.scalar, bar - 1).targetoptions.get("parallel", False)
    assert numba_kernels.op_kernel("zip", add.scalar, bar).targetoptions["parallel"]
    assert not numba_kernels.fixed_kernel("softmax_fw", bar - 1).targetoptions.get("parallel", False)
    assert numba_kernels.fixed_kernel("softmax_fw", bar).targetoptions["parallel"]
    # BLAS threads itself: one form for every size.
    assert numba_kernels.fixed_kernel("matmul_blas", 1) is numba_kernels.fixed_kernel("matmul_blas", bar)
