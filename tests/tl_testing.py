"""Shared pieces of the device-generic suite: the tier knob, shape limits, strategies, gradcheck.

The tier (env ``TORCHLIGHT_TEST_TIER``) scales hypothesis example counts and shape sizes: the
numba CUDA simulator costs ~0.2 ms per simulated thread, so its shapes must stay tiny. Tests
take every size from ``LIMITS`` rather than from literals.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import torchlight as tl
from ci.tiers import limit_profiles
from torchlight.core.tensor_data import TensorData

TIER_ENV = "TORCHLIGHT_TEST_TIER"
ROOT = Path(__file__).resolve().parent.parent
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@dataclass(frozen=True)
class Limits:
    """Sizes one tier may use; every property test draws its shapes within these."""

    tier: str
    max_examples: int
    max_ndim: int  # rank of generic elementwise/reduce inputs
    max_side: int  # largest size of one dim in property tests
    max_matmul: int  # largest n, k, m of a matmul
    max_batch_dims: int  # batch dims of a batched matmul
    attn_side: int  # largest batch/heads/q_len/k_len of attention scores
    max_hidden: int  # largest layer-norm hidden size
    grad_side: int  # base size of the shapes in the gradient checks


# Sizes per TORCHLIGHT_TEST_TIER value; ci/tiers.py says which value each tier sets, and
# tests/harness checks that every one it sets has its limits here.
TIERS: dict[str, Limits] = {
    "cpu": Limits("cpu", 30, 4, 5, 8, 2, 4, 16, 4),
    "cudasim": Limits("cudasim", 4, 3, 4, 4, 1, 3, 8, 2),
    "gpu": Limits("gpu", 50, 4, 6, 32, 2, 8, 64, 4),
}


def resolve_tier(environ: dict | None = None) -> Limits:
    """The Limits for ``TORCHLIGHT_TEST_TIER`` (default cpu); ValueError naming an unknown tier."""
    env = os.environ if environ is None else environ
    name = env.get(TIER_ENV, "").strip() or "cpu"
    if name not in TIERS:
        raise ValueError(
            f"{TIER_ENV}={name!r} is not a test tier: expected one of {', '.join(limit_profiles())}"
        )
    return TIERS[name]


RANDOM_ENV = "TORCHLIGHT_TEST_RANDOM"


def random_exploration(environ: dict | None = None) -> bool:
    """True when ``TORCHLIGHT_TEST_RANDOM=1`` asks hypothesis for fresh random draws."""
    env = os.environ if environ is None else environ
    return env.get(RANDOM_ENV, "").strip() == "1"


def register_profiles() -> None:
    """One hypothesis profile per tier: example counts scale, no deadlines anywhere.

    Every profile is derandomized (each test draws the same examples on every run and machine)
    and keeps no example database, so CI and every nox session are reproducible; set
    ``TORCHLIGHT_TEST_RANDOM=1`` to explore with random draws (and the local database) instead.
    """
    common: dict = {"deadline": None, "print_blob": True}
    if not random_exploration():
        common.update(derandomize=True, database=None)
    settings.register_profile("cpu", max_examples=TIERS["cpu"].max_examples, **common)
    settings.register_profile(
        "cudasim",
        max_examples=TIERS["cudasim"].max_examples,
        suppress_health_check=[HealthCheck.too_slow],
        **common,
    )
    settings.register_profile(
        "gpu",
        max_examples=TIERS["gpu"].max_examples,
        suppress_health_check=[HealthCheck.too_slow],
        **common,
    )


LIMITS = resolve_tier()


# --- tolerances -----------------------------------------------------------------------------

# float32 results are compared with float64 references; float64 results allow for a different
# summation order or fused multiply-add on other backends.
TOLERANCE = {DTYPES[0]: (1e-5, 1e-6), DTYPES[1]: (1e-10, 1e-12)}


def assert_close(actual, expected, dtype=None, scale: float = 1.0, what: str = "") -> None:
    """Compare with the tolerance of ``dtype``; ``scale`` widens atol for sums of ``scale`` terms."""
    actual = actual.numpy() if isinstance(actual, tl.Tensor) else actual
    actual = actual.array if isinstance(actual, TensorData) else np.asarray(actual)
    dtype = np.dtype(dtype) if dtype is not None else actual.dtype
    rtol, atol = TOLERANCE[dtype]
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != expected {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol * max(scale, 1.0), err_msg=what)


# --- value samplers (numpy, float64; cast by the caller) --------------------------------------

Sampler = Callable[[np.random.Generator, tuple], np.ndarray]


def uniform(low: float = -3.0, high: float = 3.0) -> Sampler:
    """Uniform values in [low, high)."""
    return lambda rng, shape: rng.uniform(low, high, shape)


def away_from_zero(low: float = 0.25, high: float = 3.0) -> Sampler:
    """Magnitudes in [low, high) with a random sign (safe denominators)."""
    return lambda rng, shape: rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)


def grid(values: Sequence[float] = (-1.0, -0.5, 0.0, 0.5, 1.0)) -> Sampler:
    """Values from a small set, so that ties and exact equalities happen."""
    pool = np.asarray(values, dtype=np.float64)
    return lambda rng, shape: rng.choice(pool, shape)


# --- strategies --------------------------------------------------------------------------------


@st.composite
def shapes(
    draw, min_dims: int = 0, max_dims: int | None = None, min_side: int = 0, max_side: int | None = None
):
    """Array shapes within the tier limits; size-1 dims are common and, unless ``min_side`` > 0,
    about one shape in eight has a size-0 dim (empty tensors would otherwise crowd out the rest)."""
    max_dims = LIMITS.max_ndim if max_dims is None else max_dims
    max_side = LIMITS.max_side if max_side is None else max_side
    low = max(min_side, 1)
    ndim = draw(st.integers(min_dims, max(min_dims, max_dims)))
    shape = [draw(st.integers(low, max(low, max_side))) for _ in range(ndim)]
    if min_side == 0 and shape and draw(st.integers(0, 7)) == 0:
        shape[draw(st.integers(0, len(shape) - 1))] = 0
    return tuple(shape)


dtypes = st.sampled_from(DTYPES)


LAYOUTS = ("contiguous", "offset", "permuted", "expanded", "expanded+permuted")


@st.composite
def laid_out(draw, shape: tuple, dtype, sampler: Sampler | None = None, layouts: bool = True):
    """``(TensorData, expected float64 array)`` of ``shape`` in a drawn memory layout.

    Layouts (``LAYOUTS``): contiguous; or a storage offset (with NaN filler before it, so an
    ignored offset shows) plus optionally stride-0 dims from ``expand`` (with or without
    dropped leading dims) and/or a real ``permute`` of the dims. The logical values are the
    expected array.
    """
    sampler = sampler or uniform()
    shape = tuple(shape)
    ndim = len(shape)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(LAYOUTS)) if layouts else "contiguous"
    permuted = "permuted" in kind and ndim >= 2
    order = tuple(draw(st.permutations(range(ndim)))) if permuted else tuple(range(ndim))
    if permuted and order == tuple(range(ndim)):
        order = order[1:] + order[:1]  # a drawn permutation is a real one
    pre = [0] * ndim
    for i, d in enumerate(order):
        pre[d] = shape[i]
    expanded = "expanded" in kind and ndim >= 1
    base_shape = list(pre)
    if expanded:
        keep = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
        base_shape = [s if k else 1 for s, k in zip(pre, keep)]
        base_shape = base_shape[draw(st.integers(0, ndim)) :]
    offset = draw(st.integers(1, 3)) if kind != "contiguous" else 0
    values = np.asarray(sampler(rng, tuple(base_shape)), dtype=np.float64).astype(dtype)
    storage = np.concatenate([np.full(offset, np.nan, dtype=dtype), values.reshape(-1)])
    data = TensorData(storage, tuple(base_shape), None, offset)
    if expanded:
        data = data.expand(tuple(pre))
    data = data.permute(*order) if ndim else data
    expected = np.broadcast_to(values, tuple(pre)).transpose(order).astype(np.float64)
    assert data.shape == shape
    return data, expected


@st.composite
def broadcast_pair(draw, max_dims: int | None = None, min_side: int = 0):
    """Two shapes that broadcast together (rank and size-1 differences)."""
    max_dims = LIMITS.max_ndim if max_dims is None else max_dims
    result = draw(shapes(0, max_dims, min_side=min_side))
    pair = []
    for _ in range(2):
        drop = draw(st.integers(0, len(result)))
        own = [1 if draw(st.booleans()) and draw(st.booleans()) else s for s in result[drop:]]
        pair.append(tuple(own))
    return pair[0], pair[1], np.broadcast_shapes(*pair)


def on(backend, data: TensorData, requires_grad: bool = False) -> tl.Tensor:
    """A Tensor on ``backend`` over exactly this TensorData (keeps its strides and offset)."""
    return tl.Tensor._wrap(data, backend, requires_grad)


# --- numpy references ---------------------------------------------------------------------------


def ref_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """Max-shifted softmax in float64."""
    if x.size == 0:
        return x.astype(np.float64)
    z = x - x.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def ref_log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """Log-sum-exp shifted log-softmax in float64."""
    if x.size == 0:
        return x.astype(np.float64)
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def ref_attn_softmax(x: np.ndarray, mask: np.ndarray | None, causal: bool) -> np.ndarray:
    """The fused attention softmax's rule, row by row in float64.

    ``mask`` broadcasts to the scores' shape: a 2-d mask is ``[batch, k_len]`` (key padding), other
    ranks align from the right. Causal alignment is top-left. A row with a NaN or +inf among its
    scores (after the mask, before causal exclusion) is all NaN; a row whose every key is excluded
    (-inf) is all zeros; any other row is the softmax of its live keys.
    """
    x = np.asarray(x, dtype=np.float64)
    if mask is not None:
        mask = np.asarray(mask, dtype=np.float64)
        if mask.ndim == 2:
            mask = mask[:, None, None, :]
        mask = np.broadcast_to(mask, x.shape)
    out = np.zeros_like(x)
    for index in np.ndindex(*x.shape[:-1]):
        row = x[index] + (0.0 if mask is None else mask[index])
        if causal:
            row[index[-1] + 1 :] = -np.inf
        if np.isnan(row).any() or (row == np.inf).any():
            out[index] = np.nan
        elif not (row == -np.inf).all():
            e = np.exp(row - row.max())
            out[index] = e / e.sum()
    return out


def ref_layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """Two-pass layer norm over the last dim in float64."""
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


# --- gradient check -------------------------------------------------------------------------------


def graph_functions(out: tl.Tensor) -> set[str]:
    """Names of the Functions recorded in the history behind ``out``."""
    seen, names, stack = set(), set(), [out]
    while stack:
        t = stack.pop()
        if id(t) in seen or t._node is None:
            continue
        seen.add(id(t))
        names.add(t._node.function.__name__)
        stack.extend(t._node.inputs)
    return names


def central_difference(loss: Callable[[], float], value: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d loss / d value by float64 central differences, shifting ``value`` in place element by element
    (``loss`` reads it) and restoring it."""
    grad = np.zeros_like(value)
    for index in np.ndindex(*value.shape):
        keep = value[index]
        value[index] = keep + h
        up = loss()
        value[index] = keep - h
        down = loss()
        value[index] = keep
        grad[index] = (up - down) / (2 * h)
    return grad


def gradcheck(
    fn: Callable[..., tl.Tensor],
    inputs: Sequence[np.ndarray],
    backend,
    requires: Sequence[bool] | None = None,
    h: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
) -> tl.Tensor:
    """Compare autograd gradients of ``fn`` with float64 central differences on ``backend``.

    The output is weighted by a random upstream gradient so every output element counts.
    Returns the graph output (for callers that inspect it).
    """
    requires = [True] * len(inputs) if requires is None else list(requires)
    inputs = [np.asarray(x, dtype=np.float64) for x in inputs]
    leaves = [
        tl.tensor(x, dtype=np.float64, device=backend, requires_grad=r) for x, r in zip(inputs, requires)
    ]
    out = fn(*leaves)
    assert out.requires_grad, "output of a differentiable op does not require grad"
    rng = np.random.default_rng(seed)
    weight = rng.uniform(0.5, 1.5, out.shape) * rng.choice([-1.0, 1.0], out.shape)
    out.backward(tl.tensor(weight, dtype=out.dtype, device=out.backend))

    def objective(arrays: list[np.ndarray]) -> float:
        with tl.no_grad():
            y = fn(*[tl.tensor(a, dtype=np.float64, device=backend) for a in arrays])
        return float((y.numpy().astype(np.float64) * weight).sum())

    for i, (x, leaf) in enumerate(zip(inputs, leaves)):
        if not requires[i]:
            assert leaf.grad is None, f"input {i} does not require grad but received one"
            continue
        numeric = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            shifted = [a.copy() for a in inputs]
            shifted[i][idx] = x[idx] + h
            up = objective(shifted)
            shifted[i][idx] = x[idx] - h
            down = objective(shifted)
            numeric[idx] = (up - down) / (2 * h)
        assert leaf.grad is not None, f"input {i} of shape {x.shape} received no gradient"
        assert leaf.grad.shape == x.shape, f"input {i}: grad shape {leaf.grad.shape} != {x.shape}"
        assert leaf.grad.dtype == np.float64, f"input {i}: grad dtype {leaf.grad.dtype}"
        np.testing.assert_allclose(
            leaf.grad.numpy(), numeric, rtol=rtol, atol=atol, err_msg=f"gradient of input {i}"
        )
    return out


def raises_naming(exc: type[BaseException], call, *fragments: str) -> str:
    """Assert ``call()`` raises ``exc`` whose message names every fragment; returns the message."""
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{exc.__name__} message {message!r} does not name {fragment!r}"
    return message


def module_grads(module) -> dict[str, np.ndarray]:
    """The gradients of a module's parameters that have one, by parameter name."""
    return {name: p.grad.numpy() for name, p in module.named_parameters() if p.grad is not None}


def run_module(module, x: tl.Tensor, **kwargs) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
    """Forward, backward of a fixed random weighting; returns output, param grads, input grad."""
    module.zero_grad()
    x = x.detach().requires_grad_()
    out = module(x, **kwargs)
    weight = np.random.default_rng(7).uniform(-1, 1, out.shape)
    (out * weight).sum().backward()
    return out.numpy(), module_grads(module), x.grad.numpy()


def load_train_example():
    """``examples/train_sort.py`` as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("train_sort", ROOT / "examples" / "train_sort.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


# ---- several Python threads on one backend (tests/generic/test_threads.py, tests/backends/cuda) ----
def fail_on_new_fallbacks(twin, before: set[str]) -> None:
    """Fail the running test when the numba twin ``twin`` fell back for ops not in ``before``.

    The twin records such an op once and then runs it on numpy for good, so the op is forgotten
    again here: the next test that runs it compiles again, and fails again.
    """
    new = sorted(set(twin.fallbacks) - before)
    if new:
        twin.fallbacks.difference_update(new)
        pytest.fail(
            f"the numba twin fell back from its compiled kernel for {', '.join(new)}: numba could not "
            "compile it (the twin's DEBUG log line names the error), and the cpu tier must test the "
            "twin's own kernels, not numpy"
        )


THREADS = 8
THREAD_JOIN_TIMEOUT_S = 600  # a hang fails the test instead of the run


def thread_work(device, seed: int) -> dict[str, np.ndarray]:
    """Fused attention softmax and layer norm, a matmul and their gradients, for one seed."""
    rng = np.random.default_rng(seed)
    f32 = np.float32
    scores = tl.tensor(rng.uniform(-3, 3, (2, 2, 3, 5)).astype(f32), device=device, requires_grad=True)
    mask = tl.tensor(np.where(rng.random((2, 5)) < 0.3, -2.0, 0.0).astype(f32), device=device)
    x = tl.tensor(rng.uniform(-2, 2, (4, 6)).astype(f32), device=device, requires_grad=True)
    gamma = tl.tensor(rng.uniform(0.5, 1.5, (6,)).astype(f32), device=device, requires_grad=True)
    beta = tl.tensor(rng.uniform(-0.5, 0.5, (6,)).astype(f32), device=device, requires_grad=True)
    w = tl.tensor(rng.uniform(-1, 1, (6, 3)).astype(f32), device=device, requires_grad=True)
    probs = scores.attn_softmax(mask, causal=True)
    normed = x.layer_norm(gamma, beta)
    out = (normed @ w).tanh()
    loss = (probs * probs).sum() + (out * out).sum()
    loss.backward()
    tensors = {"probs": probs, "normed": normed, "out": out, "loss": loss}
    tensors.update(
        {f"grad {n}": t.grad for n, t in [("scores", scores), ("x", x), ("gamma", gamma), ("w", w)]}
    )
    return {name: t.numpy() for name, t in tensors.items()}


def run_in_threads(work) -> None:
    """Run ``work(thread)`` in THREADS threads started together; fail on a hang or any error."""
    import threading

    errors: list[str] = []
    start = threading.Barrier(THREADS)

    def run(thread: int) -> None:
        try:
            start.wait()
            work(thread)
        except Exception as err:  # reported below with the thread's number
            errors.append(f"thread {thread}: {type(err).__name__}: {err}")

    workers = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(THREADS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(THREAD_JOIN_TIMEOUT_S)
    assert not any(w.is_alive() for w in workers), "a thread did not finish: the backend hangs under threads"
    assert not errors, f"{len(errors)} of {THREADS} threads failed:\n" + "\n".join(errors)


def find_uv() -> str | None:
    """The uv beside this Python (a venv that has it), else the one on PATH, else None."""
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() else shutil.which("uv")
