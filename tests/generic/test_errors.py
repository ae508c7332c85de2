"""Bad input: each case checks the exception type and that the message names the offending value."""

from __future__ import annotations

import numpy as np
import pytest
from tl_testing import raises_naming

import torchlight as tl


def _t(backend, *shape, requires_grad=False):
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) / 7.0
    return tl.tensor(values, device=backend, requires_grad=requires_grad)


@pytest.mark.op("errors")
def test_shape_mismatch(backend):
    a, b = _t(backend, 2, 3), _t(backend, 4)
    raises_naming(ValueError, lambda: a + b, "(2, 3)", "(4,)")
    raises_naming(ValueError, lambda: a * _t(backend, 3, 3), "(2, 3)", "(3, 3)")
    raises_naming(ValueError, lambda: backend.add(a.data, b.data), "(2, 3)", "(4,)")


@pytest.mark.op("errors")
def test_dim_out_of_range(backend):
    t = _t(backend, 2, 3)
    raises_naming(IndexError, lambda: t.sum(5), "5")
    raises_naming(IndexError, lambda: t.max(-3), "-3")
    raises_naming(IndexError, lambda: t.mean(2), "2")
    raises_naming(IndexError, lambda: t.softmax(4), "4")
    raises_naming(IndexError, lambda: t.log_softmax(-5), "-5")
    raises_naming(IndexError, lambda: t.transpose(0, 7), "7")
    raises_naming(IndexError, lambda: backend.add_reduce(t.data, 2), "2")
    raises_naming(ValueError, lambda: t.permute(0, 0), "(0, 0)")


@pytest.mark.op("errors")
def test_matmul_inner_dim_mismatch(backend):
    a, b = _t(backend, 2, 3), _t(backend, 4, 5)
    raises_naming(ValueError, lambda: a @ b, "(2, 3)", "(4, 5)", "3 != 4")
    raises_naming(ValueError, lambda: backend.matmul(a.data, b.data), "(2, 3)", "(4, 5)")
    raises_naming(ValueError, lambda: _t(backend, 3) @ _t(backend, 4), "3 != 4")


@pytest.mark.op("errors")
def test_matmul_batch_mismatch(backend):
    a, b = _t(backend, 2, 2, 3), _t(backend, 3, 3, 4)
    raises_naming(ValueError, lambda: a @ b, "(2,)", "(3,)")


@pytest.mark.op("errors")
def test_backward_on_non_scalar_needs_a_gradient(backend):
    y = _t(backend, 2, 3, requires_grad=True) * 2.0
    raises_naming(RuntimeError, y.backward, "(2, 3)", "grad")
    wrong = _t(backend, 3)
    raises_naming(ValueError, lambda: y.backward(wrong), "(3,)", "(2, 3)")


@pytest.mark.op("errors")
def test_layer_norm_gamma_wrong_shape(backend):
    x = _t(backend, 2, 4)
    raises_naming(ValueError, lambda: x.layer_norm(_t(backend, 3), _t(backend, 4)), "gamma", "(3,)", "(4,)")
    raises_naming(ValueError, lambda: x.layer_norm(_t(backend, 4), _t(backend, 2, 4)), "beta", "(2, 4)")
    raises_naming(ValueError, lambda: x.layer_norm(_t(backend, 4), _t(backend, 4), eps=0.0), "0.0")


@pytest.mark.op("errors")
def test_attn_softmax_mask_wrong_shape(backend):
    x = _t(backend, 2, 1, 3, 4)
    raises_naming(ValueError, lambda: x.attn_softmax(_t(backend, 2, 3)), "(2, 3)", "(2, 4)")
    # A [k_len] mask broadcasts; one of another length does not.
    raises_naming(ValueError, lambda: x.attn_softmax(_t(backend, 5)), "(5,)", "(2, 1, 3, 4)")
    raises_naming(ValueError, lambda: _t(backend, 3, 4).attn_softmax(), "(3, 4)")


@pytest.mark.op("errors")
def test_unknown_device_string(backend):
    raises_naming(ValueError, lambda: tl.tensor([1.0], device="gpu"), "'gpu'", "'cpu'")
    raises_naming(ValueError, lambda: _t(backend, 2).to("cuda:x"), "'cuda:x'")


@pytest.mark.op("errors")
def test_invalid_view_shape(backend):
    t = _t(backend, 2, 3)
    raises_naming(ValueError, lambda: t.view(4, 2), "(4, 2)", "(2, 3)")
    raises_naming(ValueError, lambda: t.view(-1, -1), "(-1, -1)")


@pytest.mark.op("errors")
def test_max_of_empty(backend):
    raises_naming(ValueError, lambda: tl.zeros(0, 3, device=backend).max(0), "(0, 3)")
    raises_naming(ValueError, lambda: tl.zeros(0, device=backend).max(), "(0,)")


@pytest.mark.op("errors")
def test_bad_operands(backend):
    t = _t(backend, 2)
    raises_naming(TypeError, lambda: t + "abc", "'abc'")
    raises_naming(TypeError, lambda: t ** _t(backend, 2), "Tensor")
    raises_naming(ValueError, lambda: _t(backend, 2, 2).item(), "(2, 2)")
    raises_naming(ValueError, lambda: bool(_t(backend, 3)), "(3,)")
