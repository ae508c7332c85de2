"""Bad input to constructors, ops, layers and optimizers: a typed exception naming the value and the fix.

Each case of issue 14's list has its own test; every one checks the exception type and that
the message names the offending value and says what to do instead.
"""

from __future__ import annotations

import numpy as np
import pytest
from tl_testing import raises_naming as _raises

import torchlight as tl
from torchlight import nn
from torchlight.nn import functional as F
from torchlight.optim import SGD, Adam, AdamW, clip_grad_norm_

# --- tensor data ---------------------------------------------------------------------------------


def test_tensor_of_none_is_refused():
    _raises(TypeError, lambda: tl.tensor(None), "None", "pass a number")
    _raises(TypeError, lambda: tl.tensor([1.0, None]), "None", "float('nan')")


def test_tensor_of_strings_is_refused():
    _raises(TypeError, lambda: tl.tensor(["1.5", "2"]), "['1.5', '2']", "convert the strings")
    _raises(TypeError, lambda: tl.tensor("1.5"), "'1.5'", "float()")
    _raises(TypeError, lambda: tl.tensor(np.array([b"1"])), "bytes")


def test_tensor_of_complex_values_is_refused():
    _raises(TypeError, lambda: tl.tensor(np.array([1 + 2j, 3])), "complex128", "values.real")
    _raises(TypeError, lambda: tl.tensor([1j]), "complex", "values.real")
    _raises(TypeError, lambda: tl.tensor(np.complex64(1)), "complex64")


def test_tensor_of_other_objects_is_refused():
    _raises(TypeError, lambda: tl.tensor({"a": 1}), "dict")
    _raises(TypeError, lambda: tl.tensor(object()), "object")
    _raises(TypeError, lambda: tl.tensor([tl.tensor(1.0)]), "Tensor", ".numpy()")
    _raises(TypeError, lambda: tl.tensor(np.zeros(2, dtype=[("x", "f4")])), "values['x']")
    _raises(TypeError, lambda: tl.tensor(np.array(["2024-01-01"], dtype="datetime64[D]")), "datetime64")
    _raises(ValueError, lambda: tl.tensor([[1.0, 2.0], [3.0]]), "[[1.0, 2.0], [3.0]]", "same length")


def test_tensor_refuses_float32_overflow_but_keeps_infinities():
    _raises(ValueError, lambda: tl.tensor([1.0, 1e300]), "1e+300", "float32", "dtype='float64'")
    _raises(ValueError, lambda: tl.tensor(10**400), "does not fit")
    assert tl.tensor([1e300], dtype="float64").numpy()[0] == 1e300
    kept = tl.tensor([np.inf, -np.inf, np.nan]).numpy()
    assert np.isposinf(kept[0]) and np.isneginf(kept[1]) and np.isnan(kept[2])


def test_tensor_still_accepts_numbers_bools_and_integer_arrays():
    np.testing.assert_array_equal(tl.tensor([True, False]).numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(tl.tensor(np.arange(3, dtype=np.uint64)).numpy(), [0.0, 1.0, 2.0])
    assert tl.tensor(2**70).item() == float(2**70)
    assert tl.tensor([]).shape == (0,)


def test_operand_string_array_is_refused():
    x = tl.tensor([1.0, 2.0])
    _raises(TypeError, lambda: x + np.array(["1", "2"]), "['1', '2']", "convert the strings")
    _raises(TypeError, lambda: np.array(["1", "2"]) + x, "['1', '2']")
    _raises(TypeError, lambda: x * np.array([1j, 2]), "complex128", "values.real")
    _raises(TypeError, lambda: x - np.array([None, 1.0]), "None")


def test_view_with_a_float_size_is_refused():
    x = tl.zeros(4)
    _raises(TypeError, lambda: x.view(2.5, 2), "2.5", "float", "int()")
    _raises(TypeError, lambda: x.reshape("4"), "'4'", "str")
    _raises(TypeError, lambda: x.view(True, 4), "True", "bool")
    _raises(TypeError, lambda: x.data.view(2.0, 2), "2.0")
    assert x.view(np.int64(2), 2).shape == (2, 2)


def test_zeros_with_a_bool_size_is_refused():
    _raises(TypeError, lambda: tl.zeros(True), "True", "bool")
    _raises(TypeError, lambda: tl.ones(2, False), "False")
    _raises(TypeError, lambda: tl.rand(None), "None")
    _raises(TypeError, lambda: tl.randn(2.0), "2.0")
    assert tl.zeros(np.int32(2)).shape == (2,)


def test_device_with_a_bool_index_is_refused():
    _raises(TypeError, lambda: tl.Device("cuda", True), "True", "bool", "non-negative int")
    _raises(TypeError, lambda: tl.Device("cuda", 1.0), "1.0")
    _raises(ValueError, lambda: tl.Device("cuda", -1), "-1")
    _raises(ValueError, lambda: tl.Device("cuda:0", 0), "'cuda:0'", "not both")
    assert tl.Device("cuda", np.int64(1)) == tl.Device("cuda:1")


def test_to_a_dtype_torchlight_lacks_says_dtype():
    x = tl.tensor([1.0])
    _raises(TypeError, lambda: x.to("float16"), "'float16'", "dtype", ".to('float32')")
    _raises(TypeError, lambda: x.to("int64"), "'int64'")
    _raises(ValueError, lambda: x.to("gpu"), "'gpu'", "'cpu'", "'float32'")
    _raises(TypeError, lambda: nn.Linear(2, 2).to("float16"), "'float16'", "dtype=")
    assert x.to("float64").dtype == np.float64


# --- layers and losses ----------------------------------------------------------------------------


def test_cross_entropy_refuses_bool_targets():
    logits = tl.randn(2, 3)
    _raises(TypeError, lambda: F.cross_entropy(logits, np.array([True, False])), "bool", "integer class ids")
    _raises(TypeError, lambda: F.cross_entropy(logits, np.array(["1", "2"])), "<U1")
    _raises(TypeError, lambda: F.cross_entropy(logits, np.array([0.5, 1.0])), "0.5")
    _raises(TypeError, lambda: F.cross_entropy(logits, [0, 1], ignore_index=1.5), "1.5")


def test_cross_entropy_on_0d_logits_names_the_class_dim():
    _raises(ValueError, lambda: F.cross_entropy(tl.tensor(1.0), []), "0-d", "(1, classes)")
    _raises(TypeError, lambda: F.cross_entropy(np.zeros((2, 3)), [0, 1]), "ndarray", "tl.tensor")


def test_linear_with_negative_features_is_refused():
    _raises(ValueError, lambda: nn.Linear(-1, 3), "in_features", "-1", ">= 0")
    _raises(ValueError, lambda: nn.Linear(3, -2), "out_features", "-2")
    _raises(TypeError, lambda: nn.Linear(2.0, 3), "in_features", "2.0")
    _raises(TypeError, lambda: nn.Linear(True, 3), "True")
    _raises(ValueError, lambda: nn.Embedding(-4, 2), "num_embeddings", "-4")
    _raises(ValueError, lambda: nn.LayerNorm(4, eps=0.0), "eps")
    _raises(TypeError, lambda: nn.Dropout("0.1"), "'0.1'")
    _raises(ValueError, lambda: nn.Dropout(float("nan")), "nan")
    _raises(TypeError, lambda: nn.MultiHeadAttention(8.0, 2), "8.0")


@pytest.mark.parametrize("dtype", [np.int32, np.complex64, bool, "int64"])
def test_masks_of_a_dtype_that_cannot_hold_minus_infinity_are_refused(dtype):
    shown = np.dtype(dtype).name
    _raises(
        TypeError, lambda: F.padding_mask([[False, True]], dtype), "padding_mask dtype", shown, "np.float32"
    )
    _raises(TypeError, lambda: F.causal_mask(2, 2, dtype), "causal_mask dtype", shown, "np.float32")


def test_masks_of_a_floating_dtype_keep_it():
    assert F.padding_mask([[False, True]], np.float16).dtype == np.float16
    assert F.causal_mask(2, 3, "float64").dtype == np.float64


@pytest.mark.parametrize("fused", [True, False])
def test_layer_norm_refuses_an_eps_its_dtype_cannot_hold(fused):
    x, gamma, beta = tl.randn(2, 4), tl.ones(4), tl.zeros(4)
    _raises(ValueError, lambda: F.layer_norm(x, gamma, beta, eps=1e300, fused=fused), "eps=1e+300", "float32")
    _raises(
        ValueError, lambda: F.layer_norm(x, gamma, beta, eps=1e-50, fused=fused), "eps=1e-50", "rounds to 0"
    )
    _raises(ValueError, lambda: nn.LayerNorm(4, eps=1e300), "LayerNorm eps=1e+300", "overflows float32")
    wide = tl.randn(2, 4, dtype="float64")
    out = F.layer_norm(
        wide, tl.ones(4, dtype="float64"), tl.zeros(4, dtype="float64"), eps=1e300, fused=fused
    )
    assert np.all(np.abs(out.numpy()) < 1e-140)  # float64 holds it: the output is beta, as asked


def test_linear_on_a_0d_tensor_names_the_shape():
    _raises(ValueError, lambda: nn.Linear(3, 2)(tl.tensor(1.0)), "Linear(3, 2)", "[..., 3]", "()")
    _raises(TypeError, lambda: nn.Linear(3, 2)(np.ones(3)), "ndarray", "tl.tensor")
    _raises(ValueError, lambda: nn.LayerNorm(3)(tl.tensor(1.0)), "LayerNorm(3)", "0-d")


def test_attention_on_a_2d_input_names_the_layout():
    mha = nn.MultiHeadAttention(4, 2)
    _raises(ValueError, lambda: mha(tl.randn(3, 4)), "[batch, seq, 4]", "(3, 4)")
    _raises(ValueError, lambda: mha(tl.randn(1, 2, 3, 4)), "(1, 2, 3, 4)")


def test_embedding_index_2_64_minus_1_is_named_as_is():
    emb = nn.Embedding(10, 2)
    index = np.array([2**64 - 1], dtype=np.uint64)
    _raises(IndexError, lambda: emb(index), str(2**64 - 1), "0 <= id < 10")
    _raises(IndexError, lambda: emb(np.array([1e30])), "1e+30")
    _raises(TypeError, lambda: emb(np.array([np.nan])), "nan")
    _raises(TypeError, lambda: emb(np.array([True])), "bool")
    _raises(TypeError, lambda: emb("3"), "'3'")


# --- optimizers ---------------------------------------------------------------------------------


def _params():
    return [nn.Parameter(np.ones(2, np.float32))]


def test_adam_betas_must_be_a_pair():
    _raises(ValueError, lambda: Adam(_params(), betas=(0.9,)), "(0.9,)", "pair", "(0.9, 0.999)")
    _raises(ValueError, lambda: Adam(_params(), betas=(0.9, 0.99, 0.9)), "3 value(s)")
    _raises(TypeError, lambda: Adam(_params(), betas=0.9), "0.9")
    _raises(TypeError, lambda: Adam(_params(), betas="ab"), "'ab'")


def test_sgd_lr_string_is_a_type_error():
    _raises(TypeError, lambda: SGD(_params(), lr="0.1"), "SGD lr", "'0.1'", "float('0.1')")
    _raises(TypeError, lambda: SGD(_params(), lr=None), "None")
    _raises(TypeError, lambda: SGD(_params(), lr=True), "True")
    _raises(TypeError, lambda: Adam(_params(), eps=1j), "1j")


@pytest.mark.parametrize(
    "make, fragment",
    [
        (lambda ps: SGD(ps, lr=float("nan")), "SGD lr must be >= 0, got nan"),
        (lambda ps: SGD(ps, lr=float("inf")), "SGD lr must be >= 0, got inf"),
        (lambda ps: SGD(ps, lr=-0.1), "SGD lr must be >= 0, got -0.1"),
        (lambda ps: SGD(ps, momentum=float("nan")), "momentum must be >= 0, got nan"),
        (lambda ps: SGD(ps, momentum=-0.5), "momentum must be >= 0, got -0.5"),
        (lambda ps: SGD(ps, weight_decay=float("-inf")), "weight_decay must be >= 0, got -inf"),
        (lambda ps: Adam(ps, eps=float("nan")), "Adam eps must be >= 0, got nan"),
        (lambda ps: Adam(ps, eps=-1e-8), "eps must be >= 0, got -1e-08"),
        (lambda ps: Adam(ps, betas=(1.0, 0.9)), "beta1 must be in [0, 1), got 1.0"),
        (lambda ps: Adam(ps, betas=(0.9, -0.1)), "beta2 must be in [0, 1), got -0.1"),
        (lambda ps: Adam(ps, betas=(float("nan"), 0.9)), "beta1 must be in [0, 1), got nan"),
        (lambda ps: AdamW(ps, lr=float("inf")), "AdamW lr must be >= 0, got inf"),
        (lambda ps: AdamW(ps, weight_decay=float("nan")), "weight_decay must be >= 0, got nan"),
    ],
)
def test_optimizers_refuse_non_finite_and_out_of_range_hyperparameters(make, fragment):
    _raises(ValueError, lambda: make(_params()), fragment, "finite")


def test_lr_setter_checks_like_the_constructor():
    opt = SGD(_params(), lr=0.1)
    _raises(ValueError, lambda: setattr(opt, "lr", float("nan")), "nan")
    _raises(TypeError, lambda: setattr(opt, "lr", "0.2"), "'0.2'")
    assert opt.lr == 0.1
    opt.lr = np.float32(0.5)
    assert opt.lr == 0.5 and type(opt.lr) is float


def test_duplicate_parameters_are_refused():
    w = nn.Parameter(np.ones(2))
    _raises(ValueError, lambda: SGD([w, w]), "parameter 1", "parameter 0", "once")
    _raises(ValueError, lambda: Adam([w, nn.Parameter(np.ones(1)), w]), "parameter 2")
    _raises(TypeError, lambda: SGD(w), "one Tensor", "[param]")
    _raises(TypeError, lambda: SGD(3), "int")


@pytest.mark.parametrize("cls", [SGD, Adam, AdamW])
def test_step_keeps_each_parameters_dtype(cls):
    w = nn.Parameter(np.ones(3, np.float32))
    opt = cls([w], lr=0.1, **({"momentum": 0.9} if cls is SGD else {}))
    for _ in range(2):
        w.grad = tl.tensor([0.5, -1.0, 2.0], dtype="float64")
        opt.step()
    assert w.dtype == np.float32
    assert all(buf.dtype == np.float32 for buf in opt.state[0].values())
    reference = nn.Parameter(np.ones(3, np.float32))
    ref_opt = cls([reference], lr=0.1, **({"momentum": 0.9} if cls is SGD else {}))
    for _ in range(2):
        reference.grad = tl.tensor([0.5, -1.0, 2.0], dtype="float32")
        ref_opt.step()
    np.testing.assert_array_equal(w.numpy(), reference.numpy())


def test_step_refuses_a_gradient_of_another_shape_before_changing_anything():
    a, b = nn.Parameter(np.ones(2)), nn.Parameter(np.ones(3))
    opt = SGD([a, b], lr=0.1)
    a.grad, b.grad = tl.tensor([1.0, 1.0]), tl.tensor([1.0])
    _raises(ValueError, opt.step, "parameter 1", "(1,)", "(3,)")
    np.testing.assert_array_equal(a.numpy(), [1.0, 1.0])
    assert opt.steps == 0


def test_clip_grad_norm_checks_max_norm_and_counts_a_repeated_parameter_once():
    w = nn.Parameter(np.zeros(2), dtype="float64")
    w.grad = tl.tensor([3.0, 4.0], dtype="float64")
    _raises(TypeError, lambda: clip_grad_norm_([w], "1.0"), "'1.0'")
    _raises(ValueError, lambda: clip_grad_norm_([w], float("nan")), "nan")
    _raises(ValueError, lambda: clip_grad_norm_([w], float("inf")), "inf")
    assert clip_grad_norm_([w, w], 1.0) == 5.0
    np.testing.assert_allclose(np.linalg.norm(w.grad.numpy()), 1.0, rtol=1e-5)
