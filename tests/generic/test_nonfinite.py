"""Non-finite conformance: NaN, +-inf, -0.0 and values near float32 overflow, on every backend.

The rule is PyTorch's (see ``torchlight/backends/cpu.py``): NaN propagates, IEEE arithmetic
decides the rest, a softmax row holding a NaN or +inf is NaN; the one exception is an attention
row whose every key is excluded, which gives zeros and a zero gradient.

Every expected value here is derived from that rule with numpy in float64, step by step, each
step rounded to float32 where the op's definition computes in the tensor's dtype (a float32
product that overflows is inf even when the float64 one would not be). Nothing is computed by
running a backend, so the cpu backend is checked like the others, and all backends agreeing
with the same expectation is what makes them agree with each other.

Comparison: NaN exactly where expected, infinities equal, finite values within the float32
tolerance of ``tl_testing``; for elementwise ops whose zero sign IEEE fixes, the sign of every
zero too.
"""

from __future__ import annotations

import numpy as np
import pytest
from tl_testing import TOLERANCE, on

import torchlight.nn.functional as F
from torchlight.core.tensor_data import TensorData

F32 = np.dtype(np.float32)
BIG = 3e38  # near float32's largest finite value (3.4028235e38): twice it overflows
# Every special value, a few ordinary ones, and the two sides of exp's float32 overflow.
VALUES = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -2.5, BIG, -BIG, 88.5, 89.0], F32)


def r32(x) -> np.ndarray:
    """Round float64 values to float32 and back: one step of float32 arithmetic."""
    with np.errstate(over="ignore"):
        return np.asarray(x, np.float64).astype(np.float32).astype(np.float64)


def td(array) -> TensorData:
    return TensorData.from_array(np.ascontiguousarray(array, dtype=F32))


def values_of(result) -> np.ndarray:
    if isinstance(result, TensorData):
        return result.array
    return result.numpy()


def assert_same(got, want, what: str, signed_zero: bool = False) -> None:
    """NaN where ``want`` is NaN, equal infinities, close finite values (and zero signs)."""
    got = np.asarray(values_of(got) if not isinstance(got, np.ndarray) else got, np.float64)
    want = r32(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    wrong = np.isnan(got) != np.isnan(want)
    inf = np.isinf(want) | np.isinf(got)
    wrong |= inf & ~np.isnan(want) & (got != want)
    finite = np.isfinite(want) & np.isfinite(got)
    rtol, atol = TOLERANCE[F32]
    with np.errstate(invalid="ignore"):
        wrong |= finite & (np.abs(got - want) > atol + rtol * np.abs(want))
    if signed_zero:
        wrong |= (want == 0) & (got == 0) & (np.signbit(got) != np.signbit(want))
    if wrong.any():
        where = np.argwhere(wrong)[:8]
        shown = [(tuple(int(i) for i in w), got[tuple(w)], want[tuple(w)]) for w in where]
        raise AssertionError(f"{what}: {int(wrong.sum())} wrong value(s), (index, got, expected): {shown}")


def _sigmoid(x):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(x >= 0, 1.0 / (1.0 + np.exp(-x)), np.exp(x) / (1.0 + np.exp(x)))


# --- the table ops (torchlight/backends/ops.py), forward: each name's rule ------------------------

UNARY_RULES = {
    "neg": lambda x: -x,
    "id": lambda x: x,
    "inv": lambda x: 1.0 / x,
    "exp": np.exp,
    "log": np.log,
    "sigmoid": _sigmoid,
    "relu": lambda x: np.where(x <= 0, 0.0, x),  # NaN passes, -0.0 gives +0.0
    "tanh": np.tanh,
}

# Binary rules take the rounding step, for bodies with more than one float32 operation.
BINARY_RULES = {
    "add": lambda a, b, r: a + b,
    "sub": lambda a, b, r: a - b,
    "mul": lambda a, b, r: a * b,
    "div": lambda a, b, r: a / b,
    "pow": lambda a, b, r: np.power(a, b),
    "max": lambda a, b, r: np.where(np.isnan(a) | np.isnan(b), np.nan, np.maximum(a, b)),
    "lt": lambda a, b, r: (a < b).astype(np.float64),
    "eq": lambda a, b, r: (a == b).astype(np.float64),
    "gt": lambda a, b, r: (a > b).astype(np.float64),
    # backward helpers: (saved value, upstream gradient)
    "max_hit": lambda x, m, r: ((x == m) | (np.isnan(x) & np.isnan(m))).astype(np.float64),
    "masked_grad": lambda g, keep, r: np.where(keep != 0, g, 0.0),  # masked_fill's backward
    "relu_back": lambda x, g, r: np.where(x <= 0, 0.0, g),  # PyTorch's threshold_backward
    "log_back": lambda x, g, r: g / x,
    "inv_back": lambda x, g, r: -g / r(x * x),
    "sigmoid_back": lambda y, g, r: r(g * y) * r(1.0 - y),
    "tanh_back": lambda y, g, r: g * r(1.0 - r(y * y)),
}
# Ops whose zero results have an IEEE-determined sign; max of -0.0 and 0.0 may be either.
UNSIGNED_ZERO = {"max", "pow", "sigmoid_back", "tanh_back", "relu_back"}


@pytest.mark.op("nonfinite rules")
@pytest.mark.op("nonfinite map")
@pytest.mark.parametrize("name", sorted(UNARY_RULES))
def test_map(backend, name):
    x = VALUES.astype(np.float64)
    with np.errstate(all="ignore"):
        want = UNARY_RULES[name](x)
    assert_same(getattr(backend, f"{name}_map")(td(VALUES)), want, f"{name}_map", signed_zero=True)


@pytest.mark.op("nonfinite zip")
@pytest.mark.parametrize("name", sorted(BINARY_RULES))
def test_zip(backend, name):
    a = np.repeat(VALUES, VALUES.size).reshape(VALUES.size, VALUES.size)
    b = np.tile(VALUES, VALUES.size).reshape(VALUES.size, VALUES.size)
    with np.errstate(all="ignore"):
        want = BINARY_RULES[name](a.astype(np.float64), b.astype(np.float64), r32)
    got = getattr(backend, name)(td(a), td(b))
    assert_same(got, want, name, signed_zero=name not in UNSIGNED_ZERO)


# --- reductions ----------------------------------------------------------------------------------

REDUCE_ROWS = np.array(
    [
        [1.0, 2.0, np.nan, 3.0],
        [np.inf, 1.0, 2.0, 3.0],
        [np.inf, -np.inf, 1.0, 2.0],
        [-np.inf, -np.inf, -np.inf, -np.inf],
        [BIG, BIG, 1.0, 2.0],  # the sum overflows in any order
        [-BIG, -BIG, 1.0, 2.0],
        [-0.0, -0.0, -0.0, -0.0],
        [0.0, np.inf, 1.0, 2.0],  # 0 * inf in a product
        [np.nan, np.inf, -np.inf, 0.0],
    ],
    F32,
)


def _nanmax(rows):
    return np.where(np.isnan(rows).any(-1), np.nan, np.max(np.where(np.isnan(rows), 0, rows), -1))


REDUCE_RULES = {
    "add": lambda rows: rows.sum(-1),
    "mul": lambda rows: rows.prod(-1),
    "max": _nanmax,
}


@pytest.mark.op("nonfinite reduce")
@pytest.mark.parametrize("name", sorted(REDUCE_RULES))
@pytest.mark.parametrize("dim", [0, 1])
def test_reduce(backend, name, dim):
    rows = REDUCE_ROWS.astype(np.float64)
    with np.errstate(all="ignore"):
        want = REDUCE_RULES[name](rows)
    data = REDUCE_ROWS if dim == 1 else REDUCE_ROWS.T
    got = getattr(backend, f"{name}_reduce")(td(data), dim)
    assert_same(got, want.reshape((-1, 1) if dim == 1 else (1, -1)), f"{name}_reduce(dim={dim})")


def _shared_grad(rows, top, g):
    """Ties share ``g``; in a row whose result is NaN the NaN elements share it (PyTorch's rule)."""
    with np.errstate(all="ignore"):
        hits = ((rows == top[:, None]) | (np.isnan(rows) & np.isnan(top)[:, None])).astype(np.float64)
        return hits * (g / hits.sum(1))[:, None]


@pytest.mark.op("nonfinite reduce")
def test_sum_and_max_backward(backend):
    rows = REDUCE_ROWS.astype(np.float64)
    g = np.linspace(0.5, 2.0, rows.shape[0])
    x = on(backend, td(REDUCE_ROWS), requires_grad=True)
    (x.sum(1) * on(backend, td(g))).sum().backward()
    assert_same(x.grad, np.broadcast_to(g[:, None], rows.shape), "sum backward")

    x = on(backend, td(REDUCE_ROWS), requires_grad=True)
    top = x.max(1)
    assert_same(top, _nanmax(rows), "max forward")
    (top * on(backend, td(g))).sum().backward()
    assert_same(x.grad, _shared_grad(rows, _nanmax(rows), g), "max backward")

    x = on(backend, td(REDUCE_ROWS), requires_grad=True)
    low = x.min(1)
    want_low = -_nanmax(-rows)
    assert_same(low, want_low, "min forward")
    (low * on(backend, td(g))).sum().backward()
    assert_same(x.grad, _shared_grad(rows, want_low, g), "min backward")


@pytest.mark.op("nonfinite reduce")
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_and_min_of_everything_send_a_nan_result_to_the_nans(backend, name):
    """``tensor([1, nan, 2]).max().backward()`` gives ``[0, 1, 0]``, as PyTorch; two NaNs share it."""
    for values in ([1.0, np.nan, 2.0], [np.nan, 3.0, np.nan, -1.0], [np.inf, np.nan, -np.inf]):
        x = on(backend, td(np.array(values, F32)), requires_grad=True)
        out = getattr(x, name)()
        assert_same(out, np.nan, f"{name}() of {values}")
        out.backward()
        nans = np.isnan(values).astype(np.float64)
        assert_same(x.grad, nans / nans.sum(), f"{name}() backward of {values}")


# --- autograd through the pointwise Functions ----------------------------------------------------

GRAD_RULES = {  # d(op)/dx * g, from x and the float32 output y
    "neg": (lambda t: -t, lambda x, y, g: -g),
    "exp": (lambda t: t.exp(), lambda x, y, g: y * g),
    "log": (lambda t: t.log(), lambda x, y, g: g / x),
    "sigmoid": (lambda t: t.sigmoid(), lambda x, y, g: r32(g * y) * r32(1.0 - y)),
    "relu": (lambda t: t.relu(), lambda x, y, g: np.where(x <= 0, 0.0, g)),
    "tanh": (lambda t: t.tanh(), lambda x, y, g: g * r32(1.0 - r32(y * y))),
}


@pytest.mark.op("nonfinite map")
@pytest.mark.parametrize("name", sorted(GRAD_RULES))
def test_pointwise_backward(backend, name):
    call, rule = GRAD_RULES[name]
    g = np.linspace(-1.5, 2.0, VALUES.size).astype(F32)
    x = on(backend, td(VALUES), requires_grad=True)
    y = call(x)
    (y * on(backend, td(g))).sum().backward()
    x64 = VALUES.astype(np.float64)
    with np.errstate(all="ignore"):
        y64 = r32(UNARY_RULES[name](x64))
        want = rule(x64, y64, g.astype(np.float64))
    assert_same(y, y64, f"{name} forward", signed_zero=True)
    assert_same(x.grad, want, f"{name} backward")


@pytest.mark.op("nonfinite zip")
@pytest.mark.parametrize("name", ["mul", "div"])
def test_binary_backward(backend, name):
    a = np.repeat(VALUES, VALUES.size)
    b = np.tile(VALUES, VALUES.size)
    g = np.linspace(-1.5, 2.0, a.size).astype(F32)
    ta = on(backend, td(a), requires_grad=True)
    tb = on(backend, td(b), requires_grad=True)
    out = ta * tb if name == "mul" else ta / tb
    (out * on(backend, td(g))).sum().backward()
    a64, b64, g64 = (v.astype(np.float64) for v in (a, b, g))
    with np.errstate(all="ignore"):
        if name == "mul":  # d/da = g * b, d/db = g * a
            want_a, want_b = g64 * b64, g64 * a64
        else:  # d/da = g / b, d/db = -(g / b) * (a / b)
            want_a = g64 / b64
            want_b = -(r32(want_a) * r32(a64 / b64))
    assert_same(ta.grad, want_a, f"{name} backward (left)")
    assert_same(tb.grad, want_b, f"{name} backward (right)")


# --- matmul --------------------------------------------------------------------------------------

MATMUL_LEFT = np.array(
    [
        [np.nan, 1.0, 2.0, 3.0],
        [np.inf, 1.0, 2.0, 3.0],
        [-np.inf, np.inf, 1.0, 2.0],  # inf - inf
        [BIG, BIG, 1.0, 1.0],  # overflows: every right entry is >= 0.5
        [-0.0, -0.0, -0.0, -0.0],
        [1.0, -2.0, 0.5, 4.0],
    ],
    F32,
)
MATMUL_RIGHT = np.array([[0.5, 1.0, 2.0], [1.0, 3.0, 0.5], [2.0, 0.5, 1.0], [1.5, 1.0, 2.5]], F32)


def _mm(a, b):
    """Sum of products in float64, each product rounded to float32 first (no BLAS)."""
    with np.errstate(all="ignore"):
        return r32(a[..., :, :, None] * b[..., None, :, :]).sum(-2)


@pytest.mark.op("nonfinite matmul")
@pytest.mark.parametrize("special", ["left", "right"])
def test_matmul(backend, special):
    left, right = MATMUL_LEFT, MATMUL_RIGHT
    if special == "right":  # the specials as columns of the right operand, finite on the left
        left, right = MATMUL_RIGHT.T.copy(), MATMUL_LEFT.T.copy()
    a = on(backend, td(left), requires_grad=True)
    b = on(backend, td(right), requires_grad=True)
    out = a @ b
    l64, r64 = left.astype(np.float64), right.astype(np.float64)
    assert_same(out, _mm(l64, r64), "matmul")
    g = np.linspace(0.5, 1.5, out.size).reshape(out.shape)
    (out * on(backend, td(g))).sum().backward()
    assert_same(a.grad, _mm(g, r64.T), "matmul backward (left)")
    assert_same(b.grad, _mm(l64.T, g), "matmul backward (right)")


# --- softmax, log_softmax, cross_entropy ----------------------------------------------------------

SOFTMAX_ROWS = np.array(
    [
        [np.nan, 1.0, 2.0, 0.0],
        [np.inf, 1.0, 2.0, 0.0],
        [np.inf, np.inf, 1.0, 0.0],
        [-np.inf, 1.0, 2.0, 0.0],
        [-np.inf, -np.inf, -np.inf, -np.inf],  # PyTorch: NaN (only the fused attention op gives 0)
        [BIG, -BIG, 0.0, 1.0],
        [BIG, BIG, 0.0, -0.0],
        [-BIG, -BIG, -BIG, -BIG],
    ],
    F32,
)


def _softmax_rule(rows):
    """exp(x - max) / sum: NaN for a NaN, +inf or all -inf row, by IEEE arithmetic."""
    with np.errstate(all="ignore"):
        shifted = r32(rows - rows.max(-1, keepdims=True))
        e = np.exp(shifted)
        return e / e.sum(-1, keepdims=True), shifted, e


def _log_softmax_rule(rows):
    with np.errstate(all="ignore"):
        _, shifted, e = _softmax_rule(rows)
        return shifted - np.log(e.sum(-1, keepdims=True))


@pytest.mark.op("nonfinite softmax")
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax(backend, name):
    rows = SOFTMAX_ROWS.astype(np.float64)
    g = np.linspace(-1.0, 1.0, rows.size).reshape(rows.shape)
    x = on(backend, td(SOFTMAX_ROWS), requires_grad=True)
    y = getattr(x, name)(-1)
    want = _softmax_rule(rows)[0] if name == "softmax" else _log_softmax_rule(rows)
    assert_same(y, want, name)
    (y * on(backend, td(g))).sum().backward()
    y32 = r32(want)
    with np.errstate(all="ignore"):
        if name == "softmax":  # y * (g - sum(g * y))
            grad = y32 * (g - (g * y32).sum(-1, keepdims=True))
        else:  # g - exp(y) * sum(g)
            grad = g - np.exp(y32) * g.sum(-1, keepdims=True)
    assert_same(x.grad, grad, f"{name} backward")


@pytest.mark.op("nonfinite cross_entropy")
def test_cross_entropy(backend):
    logits = np.array(
        [
            [BIG, 0.0, -BIG],  # target 0: loss 0
            [BIG, 0.0, -BIG],  # target 1: loss 3e38, finite
            [1.0, 2.0, 3.0],
            [-np.inf, 0.0, 1.0],  # an impossible class that is not the target
        ],
        F32,
    )
    targets = np.array([0, 1, 2, 2])
    rows = logits.astype(np.float64)
    logp = _log_softmax_rule(rows)
    want_loss = -r32(logp)[np.arange(4), targets].sum() / 4
    x = on(backend, td(logits), requires_grad=True)
    loss = F.cross_entropy(x, targets)
    assert_same(loss, want_loss, "cross_entropy")
    loss.backward()
    onehot = np.eye(3)[targets]
    assert_same(x.grad, (np.exp(r32(logp)) - onehot) / 4, "cross_entropy backward")

    for special in (np.nan, np.inf):  # one bad logit anywhere makes the mean loss NaN
        bad = logits.copy()
        bad[2, 0] = special
        x = on(backend, td(bad), requires_grad=True)
        loss = F.cross_entropy(x, targets)
        assert_same(loss, np.nan, f"cross_entropy with {special}")
        loss.backward()
        want = (np.exp(r32(logp)) - onehot) / 4
        want[2] = np.nan  # only the bad row's gradient is NaN
        assert_same(x.grad, want, f"cross_entropy backward with {special}")

    # An ignored position is never read: a NaN there leaves the loss of the others finite.
    bad = logits.copy()
    bad[2, 1] = np.nan
    kept = np.array([0, 1, F.IGNORE_INDEX, 2])
    x = on(backend, td(bad), requires_grad=True)
    loss = F.cross_entropy(x, kept)
    keep = [0, 1, 3]
    assert_same(loss, -r32(logp)[keep, kept[keep]].sum() / 3, "cross_entropy with an ignored NaN row")
    loss.backward()
    want = (np.exp(r32(logp)) - np.eye(3)[np.where(kept < 0, 0, kept)]) / 3
    # As in PyTorch (log_softmax, then the pick): the ignored row's upstream gradient is 0, and
    # log_softmax's backward gives 0 - exp(NaN) * 0 = NaN there; the other rows are unaffected.
    want[2] = np.nan
    assert_same(x.grad, want, "cross_entropy backward with an ignored NaN row")


# --- the fused attention softmax ------------------------------------------------------------------


def attn_rule(x, mask, causal):
    """Row by row: NaN if a live key's score is NaN or +inf, zeros if no key is live, else softmax."""
    out = np.zeros(x.shape, np.float64)
    b_n, h_n, q_n, _ = x.shape
    for b, h, q in np.ndindex(b_n, h_n, q_n):
        s = x[b, h, q].astype(np.float64)
        if mask is not None:
            s = r32(s + mask[b])
        if causal:
            s[q + 1 :] = -np.inf  # excluded: its score is never read
        if np.isnan(s).any() or (s == np.inf).any():
            out[b, h, q] = np.nan
        elif (s == -np.inf).all():
            out[b, h, q] = 0.0
        else:
            e = np.exp(s - s.max())
            out[b, h, q] = e / e.sum()
    return out


def _attn_case():
    x = np.tile(np.array([0.5, -1.0, 2.0, 0.0, 1.0], F32), (2, 2, 4, 1))
    x[0, 0, 0, 1] = np.nan  # with causal, query 0 never reads key 1
    x[0, 0, 2, 0] = np.nan
    x[0, 1, 1, 3] = np.inf  # read only without causal
    x[0, 1, 3, 2] = np.inf
    x[0, 1, 0, :] = -np.inf  # every key excluded by its score
    x[1, 0, 2, :] = [BIG, BIG, -BIG, BIG, -0.0]  # near overflow, finite
    x[1, 1, 3, 4] = -np.inf
    mask = np.zeros((2, 5), F32)
    mask[1, 3] = np.nan  # every batch-1 row that reads key 3 is NaN
    return x, mask


@pytest.mark.op("nonfinite attn_softmax")
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("masked", ["none", "nan", "inf", "excluded"])
def test_attn_softmax(backend, causal, masked):
    x, mask = _attn_case()
    if masked == "none":
        mask = None
    elif masked == "inf":
        mask[1, 3] = np.inf
    elif masked == "excluded":
        mask[1, :] = -np.inf  # every key of batch 1 excluded: zeros and zero gradient
    xt = on(backend, td(x), requires_grad=True)
    y = xt.attn_softmax(None if mask is None else on(backend, td(mask)), causal=causal)
    want = attn_rule(x, mask, causal)
    assert_same(y, want, "attn_softmax")
    if masked == "excluded":
        np.testing.assert_array_equal(values_of(y)[1], 0.0)
    g = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    (y * on(backend, td(g))).sum().backward()
    y32 = r32(want)
    with np.errstate(all="ignore"):
        grad = y32 * (g - (g * y32).sum(-1, keepdims=True))
    if causal:  # keys after the query are not inputs (PyTorch fills them): zero, even in a NaN row
        q_len, k_len = x.shape[-2:]
        grad = np.where(np.arange(k_len)[None, :] > np.arange(q_len)[:, None], 0.0, grad)
    assert_same(xt.grad, grad, "attn_softmax backward")
    if causal:
        future = np.triu(np.ones(x.shape[-2:], bool), 1)
        np.testing.assert_array_equal(values_of(xt.grad)[..., future], 0.0)
    if masked == "excluded":
        np.testing.assert_array_equal(values_of(xt.grad)[1], 0.0)


# --- the fused layer norm ------------------------------------------------------------------------

LN_ROWS = np.array(
    [
        [np.nan, 1.0, 2.0, 3.0],
        [np.inf, 1.0, 2.0, 3.0],
        [-np.inf, 1.0, 2.0, 3.0],
        [1e20, -1e20, 1e20, -1e20],  # (x - mean)^2 = 1e40 overflows: var inf, rstd 0, y = beta
        [1e18, -1e18, 1e18, -1e18],  # large but representable statistics: y = +-gamma + beta
        [-0.0, -0.0, -0.0, -0.0],
        [1.0, -2.0, 0.5, 4.0],
    ],
    F32,
)
EPS = 1e-5


def ln_rule(x, gamma, beta):
    """Two-pass statistics; float32 variance: a sum of squares past float32's range is inf."""
    with np.errstate(all="ignore"):
        mean = x.mean(-1, keepdims=True)
        c = x - mean
        var = r32((r32(c * c)).sum(-1, keepdims=True) / x.shape[-1])
        rstd = r32(1.0 / np.sqrt(var + EPS))
        xhat = c * rstd
        return xhat * gamma + beta, mean, rstd, xhat


@pytest.mark.op("nonfinite layer_norm")
@pytest.mark.parametrize("params", ["finite", "special"])
def test_layer_norm(backend, params):
    gamma = np.array([1.5, -0.5, 2.0, 1.0], F32)
    beta = np.array([0.25, 0.0, -1.0, 0.5], F32)
    if params == "special":  # a NaN scale and an infinite shift touch only their column
        gamma[1] = np.nan
        beta[3] = np.inf
    x64, g64, b64 = (v.astype(np.float64) for v in (LN_ROWS, gamma, beta))
    y_want, mean, rstd, xhat = ln_rule(x64, g64, b64)
    xt = on(backend, td(LN_ROWS), requires_grad=True)
    gt = on(backend, td(gamma), requires_grad=True)
    bt = on(backend, td(beta), requires_grad=True)
    y = xt.layer_norm(gt, bt, EPS)
    assert_same(y, y_want, "layer_norm")
    dy = np.linspace(-1.0, 1.0, LN_ROWS.size).reshape(LN_ROWS.shape)
    (y * on(backend, td(dy))).sum().backward()
    with np.errstate(all="ignore"):
        g = dy * g64
        dx = rstd * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
        dgamma = (dy * xhat).sum(0)
        dbeta = dy.sum(0)
    assert_same(xt.grad, dx, "layer_norm backward (x)")
    assert_same(gt.grad, dgamma, "layer_norm backward (gamma)")
    assert_same(bt.grad, dbeta, "layer_norm backward (beta)")
