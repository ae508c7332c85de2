"""Attention masks on every backend: any shape that broadcasts to [batch, heads, q_len, k_len]
(a 2-d mask is [batch, k_len], PyTorch's key padding), dtypes promoted as other ops promote,
additive values (-inf excludes a key), and causal exclusion aligned top-left."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tl_testing import LIMITS, assert_close, dtypes, grid, laid_out, on, ref_attn_softmax, uniform

import torchlight as tl
from torchlight.core.tensor_data import TensorData


def as_4d(mask_shape: tuple[int, ...]) -> tuple[int, ...]:
    """Where a mask's dims go: a 2-d mask is [batch, k_len]; other ranks align from the right."""
    if len(mask_shape) == 2:
        return (mask_shape[0], 1, 1, mask_shape[1])
    return (1,) * (4 - len(mask_shape)) + tuple(mask_shape)


MASK_FORMS = [
    "k",  # [k_len]
    "bk",  # [batch, k_len]: key padding
    "b11k",  # [batch, 1, 1, k_len]: the usual attention-mask shape
    "b1qk",  # [batch, 1, q_len, k_len]
    "1hqk",  # [1, heads, q_len, k_len]
    "hqk",  # [heads, q_len, k_len]
    "11qk",  # [1, 1, q_len, k_len]
    "bhqk",  # full
    "1111",  # one value for everything
]


def mask_shape(form: str, shape: tuple[int, int, int, int]) -> tuple[int, ...]:
    sizes = dict(zip("bhqk", shape))
    return tuple(sizes.get(c, 1) for c in form)


@st.composite
def attn_shapes(draw):
    side = st.integers(1, LIMITS.attn_side)
    return tuple(draw(side) for _ in range(4))


@pytest.mark.op("attn_softmax_fw")
@given(
    data=st.data(),
    shape=attn_shapes(),
    form=st.sampled_from(MASK_FORMS),
    dtype=dtypes,
    causal=st.booleans(),
)
def test_every_broadcastable_mask_shape(backend, data, shape, form, dtype, causal):
    x, xx = data.draw(laid_out(shape, dtype, uniform(-6, 6)))
    mshape = mask_shape(form, shape)
    mask, xm = data.draw(laid_out(mshape, dtype, grid((0.0, -2.0, 1.0, -np.inf))))
    y = backend.attn_softmax_fw(x, mask, causal)
    assert y.shape == shape and y.dtype == dtype
    expected = ref_attn_softmax(xx, np.broadcast_to(xm.reshape(as_4d(mshape)), shape), causal)
    assert_close(y, expected, dtype, scale=shape[3])


@pytest.mark.op("attn_softmax_fw")
def test_key_padding_and_its_4d_form_agree_exactly(backend):
    rng = np.random.default_rng(3)
    scores = TensorData.from_array(rng.standard_normal((2, 3, 4, 5)).astype(np.float32))
    pad = np.where(rng.random((2, 5)) < 0.4, -np.inf, 0.0).astype(np.float32)
    flat = backend.attn_softmax_fw(scores, TensorData.from_array(pad), True)
    four = backend.attn_softmax_fw(scores, TensorData.from_array(pad.reshape(2, 1, 1, 5)), True)
    np.testing.assert_array_equal(flat.array, four.array)


@pytest.mark.op("attn_softmax_fw")
@pytest.mark.parametrize("form", ["bk", "b11k", "1hqk"])
def test_a_float64_numpy_mask_promotes_float32_scores(backend, form):
    rng = np.random.default_rng(4)
    shape = (2, 3, 4, 5)
    x = rng.standard_normal(shape).astype(np.float32)
    mask = np.where(rng.random(mask_shape(form, shape)) < 0.3, -np.inf, 0.5)  # float64
    scores = tl.tensor(x, device=backend, requires_grad=True)
    probs = scores.attn_softmax(mask, causal=True)
    # As for x + mask: float32 with float64 gives float64.
    assert probs.dtype == np.float64
    expected = ref_attn_softmax(x, np.broadcast_to(mask.reshape(as_4d(mask.shape)), shape), True)
    assert_close(probs.numpy(), expected, np.float64, scale=shape[3])
    (probs * tl.tensor(rng.standard_normal(shape), device=backend)).sum().backward()
    assert scores.grad.dtype == np.float32 and scores.grad.shape == shape


@pytest.mark.op("attn_softmax_fw")
@pytest.mark.parametrize("form", ["bhq1", "1hq1", "b1q1"])
@pytest.mark.parametrize("causal", [False, True])
def test_a_mask_broadcast_over_several_keys(backend, form, causal):
    # One value per query row, the same for all five keys (key stride 0): a finite value shifts
    # the row and leaves its softmax unchanged, -inf excludes the whole row (zeros). A kernel that
    # reads such a mask as if each key had its own value reads other rows' values.
    shape = (2, 3, 4, 5)
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape).astype(np.float32)
    mshape = mask_shape(form, shape)
    values = rng.uniform(-3.0, 3.0, mshape).astype(np.float32)
    values[(0,) * (len(mshape) - 2) + (1, 0)] = -np.inf  # one query row fully excluded
    y = backend.attn_softmax_fw(TensorData.from_array(x), TensorData.from_array(values), causal)
    expected = ref_attn_softmax(x, np.broadcast_to(values, shape), causal)
    assert_close(y, expected, np.float32, scale=shape[3])


@pytest.mark.op("attn_softmax_fw")
def test_keys_past_a_row_block_count_in_the_row_max(backend):
    # 300 keys: more than a row kernel's block has threads on every tier (at most 256), so each
    # thread takes several keys and the row max must cover them all. Batch 0's key padding hides
    # its first 260 keys (left padding): a max over the first keys alone is -inf and would zero
    # the row. Batch 1 has one score of 200 at key 290: a max that misses it shifts by about 2,
    # and exp(198) overflows float32 to inf, so the row would come out NaN.
    shape = (2, 1, 1, 300)
    x = np.random.default_rng(17).standard_normal(shape).astype(np.float32)
    x[1, 0, 0, 290] = 200.0
    pad = np.zeros((2, 300), np.float32)  # [batch, k_len]
    pad[0, :260] = -np.inf
    y = backend.attn_softmax_fw(TensorData.from_array(x), TensorData.from_array(pad), False)
    expected = ref_attn_softmax(x, pad, False)
    assert np.isfinite(expected).all()
    assert_close(y, expected, np.float32, scale=shape[3])


@pytest.mark.op("attn_softmax_fw")
def test_backend_level_promotion_matches_addition(backend):
    x = TensorData.from_array(np.zeros((1, 1, 2, 3), np.float32))
    mask = TensorData.from_array(np.array([0.0, -np.inf, 0.0]))  # float64, [k_len]
    y = backend.attn_softmax_fw(x, mask, False)
    assert y.dtype == np.result_type(np.float32, np.float64)
    np.testing.assert_allclose(y.array, [[[[0.5, 0.0, 0.5], [0.5, 0.0, 0.5]]]], rtol=1e-12)


@pytest.mark.op("attn_softmax_fw")
def test_causal_alignment_is_top_left(backend):
    # q_len < k_len: query q sees keys 0..q (not the last q_len keys, as bottom-right would).
    y = backend.attn_softmax_fw(TensorData.from_array(np.zeros((1, 1, 2, 4), np.float32)), None, True)
    np.testing.assert_allclose(y.array[0, 0], [[1, 0, 0, 0], [0.5, 0.5, 0, 0]], rtol=1e-6)
    # q_len > k_len: every query from k_len - 1 on sees every key.
    y = backend.attn_softmax_fw(TensorData.from_array(np.zeros((1, 1, 3, 2), np.float32)), None, True)
    np.testing.assert_allclose(y.array[0, 0], [[1, 0], [0.5, 0.5], [0.5, 0.5]], rtol=1e-6)


@pytest.mark.op("attn_softmax_fw")
@pytest.mark.parametrize(
    "mshape, words",
    [
        ((2, 4), "a 2-d mask is [batch, k_len]"),  # looks like [q_len, k_len] = (2, 4)? batch is 3
        ((3, 4, 5), "does not broadcast"),
        ((3, 1, 1, 1, 5), "5 dims"),
        ((4, 1, 1, 5), "does not broadcast"),
    ],
)
def test_a_mask_that_does_not_broadcast_names_shapes_and_forms(backend, mshape, words):
    x = TensorData.from_array(np.zeros((3, 2, 4, 5), np.float32))
    mask = TensorData.from_array(np.zeros(mshape, np.float32))
    with pytest.raises(ValueError) as info:
        backend.attn_softmax_fw(x, mask, False)
    message = str(info.value)
    assert words in message and str(mshape) in message and "(3, 2, 4, 5)" in message
    assert "[batch, 1, 1, k_len]" in message


@pytest.mark.op("attn_softmax_fw")
@pytest.mark.parametrize("dtype", [np.bool_, np.int64])
def test_a_non_float_mask_is_refused_with_the_conversion(backend, dtype):
    x = TensorData.from_array(np.zeros((1, 1, 2, 3), np.float32))
    mask = TensorData.from_array(np.ones((1, 3), dtype=dtype))
    with pytest.raises(TypeError, match=r"additive float mask .*np\.where\(keep, 0\.0, -np\.inf\)"):
        backend.attn_softmax_fw(x, mask, False)


@pytest.mark.op("attn_softmax_fw")
@pytest.mark.parametrize("form", ["bk", "b11k", "b1qk", "11qk"])
def test_fused_and_unfused_layers_agree_on_every_mask_form(backend, form):
    from torchlight.nn import functional as F

    rng = np.random.default_rng(5)
    shape = (2, 2, 3, 4)
    scores = on(backend, TensorData.from_array(rng.standard_normal(shape)))
    mask = np.where(rng.random(mask_shape(form, shape)) < 0.3, -np.inf, 0.0)
    fused = F.attention_softmax(scores, tl.tensor(mask, device=backend), causal=True, fused=True)
    plain = F.attention_softmax(scores, tl.tensor(mask, device=backend), causal=True, fused=False)
    # The unfused composition gives NaN where a row has no live key; the fused op gives zeros.
    expected = np.nan_to_num(plain.numpy(), nan=0.0)
    assert_close(fused.numpy(), expected, np.float64, scale=shape[3])
