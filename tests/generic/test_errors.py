"""Bad input: each case checks the exception type and that the message names the offending value."""

from __future__ import annotations

import numpy as np
import pytest

import torchlight as tl
from torchlight.core.tensor_data import TensorData


def _t(backend, *shape, requires_grad=False):
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) / 7.0
    return tl.tensor(values, device=backend, requires_grad=requires_grad)


def _raises(exc, call, *fragments):
    with pytest.raises(exc) as info:
        call()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{exc.__name__} message {message!r} does not name {fragment!r}"
    return message


@pytest.mark.op("errors")
def test_shape_mismatch(backend):
    a, b = _t(backend, 2, 3), _t(backend, 4)
    _raises(ValueError, lambda: a + b, "(2, 3)", "(4,)")
    _raises(ValueError, lambda: a * _t(backend, 3, 3), "(2, 3)", "(3, 3)")
    _raises(ValueError, lambda: backend.add(a.data, b.data), "(2, 3)", "(4,)")


@pytest.mark.op("errors")
def test_dim_out_of_range(backend):
    t = _t(backend, 2, 3)
    _raises(IndexError, lambda: t.sum(5), "5")
    _raises(IndexError, lambda: t.max(-3), "-3")
    _raises(IndexError, lambda: t.mean(2), "2")
    _raises(IndexError, lambda: t.softmax(4), "4")
    _raises(IndexError, lambda: t.log_softmax(-5), "-5")
    _raises(IndexError, lambda: t.transpose(0, 7), "7")
    _raises(IndexError, lambda: backend.add_reduce(t.data, 2), "2")
    _raises(ValueError, lambda: t.permute(0, 0), "(0, 0)")


@pytest.mark.op("errors")
def test_matmul_inner_dim_mismatch(backend):
    a, b = _t(backend, 2, 3), _t(backend, 4, 5)
    _raises(ValueError, lambda: a @ b, "(2, 3)", "(4, 5)", "3 != 4")
    _raises(ValueError, lambda: backend.matmul(a.data, b.data), "(2, 3)", "(4, 5)")
    _raises(ValueError, lambda: _t(backend, 3) @ _t(backend, 4), "3 != 4")


@pytest.mark.op("errors")
def test_matmul_batch_mismatch(backend):
    a, b = _t(backend, 2, 2, 3), _t(backend, 3, 3, 4)
    _raises(ValueError, lambda: a @ b, "(2,)", "(3,)")


@pytest.mark.op("errors")
def test_backward_on_non_scalar_needs_a_gradient(backend):
    y = _t(backend, 2, 3, requires_grad=True) * 2.0
    _raises(RuntimeError, y.backward, "(2, 3)", "grad")
    wrong = _t(backend, 3)
    _raises(ValueError, lambda: y.backward(wrong), "(3,)", "(2, 3)")


@pytest.mark.op("errors")
def test_layer_norm_gamma_wrong_shape(backend):
    x = _t(backend, 2, 4)
    _raises(ValueError, lambda: x.layer_norm(_t(backend, 3), _t(backend, 4)), "gamma", "(3,)", "(4,)")
    _raises(ValueError, lambda: x.layer_norm(_t(backend, 4), _t(backend, 2, 4)), "beta", "(2, 4)")
    _raises(ValueError, lambda: x.layer_norm(_t(backend, 4), _t(backend, 4), eps=0.0), "0.0")


@pytest.mark.op("errors")
def test_attn_softmax_mask_wrong_shape(backend):
    x = _t(backend, 2, 1, 3, 4)
    _raises(ValueError, lambda: x.attn_softmax(_t(backend, 2, 3)), "(2, 3)", "(2, 4)")
    # A [k_len] mask broadcasts; one of another length does not.
    _raises(ValueError, lambda: x.attn_softmax(_t(backend, 5)), "(5,)", "(2, 1, 3, 4)")
    _raises(ValueError, lambda: _t(backend, 3, 4).attn_softmax(), "(3, 4)")


@pytest.mark.op("errors")
def test_unknown_device_string(backend):
    _raises(ValueError, lambda: tl.tensor([1.0], device="gpu"), "'gpu'", "'cpu'")
    _raises(ValueError, lambda: _t(backend, 2).to("cuda:x"), "'cuda:x'")


@pytest.mark.op("errors")
def test_invalid_view_shape(backend):
    t = _t(backend, 2, 3)
    _raises(ValueError, lambda: t.view(4, 2), "(4, 2)", "(2, 3)")
    _raises(ValueError, lambda: t.view(-1, -1), "(-1, -1)")


@pytest.mark.op("errors")
def test_max_of_empty(backend):
    _raises(ValueError, lambda: tl.zeros(0, 3, device=backend).max(0), "(0, 3)")
    _raises(ValueError, lambda: tl.zeros(0, device=backend).max(), "(0,)")


@pytest.mark.op("errors")
def test_bad_operands(backend):
    t = _t(backend, 2)
    _raises(TypeError, lambda: t + "abc", "'abc'")
    _raises(TypeError, lambda: t ** _t(backend, 2), "Tensor")
    _raises(ValueError, lambda: _t(backend, 2, 2).item(), "(2, 2)")
    _raises(ValueError, lambda: bool(_t(backend, 3)), "(3,)")


def test_expand_to_incompatible_shape():
    data = TensorData.from_array(np.zeros((2, 3), np.float32))
    _raises(ValueError, lambda: data.expand((4, 3)), "(2, 3)", "(4, 3)")


def test_bad_creation_shapes():
    _raises(ValueError, lambda: tl.zeros(2, -1), "-1")
    _raises(TypeError, lambda: tl.ones(1.5), "1.5")
