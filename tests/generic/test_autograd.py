"""Autograd semantics: accumulation, broadcast reduction, no_grad, detach, zero_grad, graphs."""

from __future__ import annotations

import numpy as np
import pytest

import torchlight as tl


def _t(backend, values, requires_grad=False):
    return tl.tensor(values, dtype="float64", device=backend, requires_grad=requires_grad)


@pytest.mark.op("autograd")
def test_gradients_accumulate_across_backward_calls(backend):
    x = _t(backend, [1.0, -2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0, 6.0])
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, -1.0, 9.0])


@pytest.mark.op("autograd")
def test_zero_grad_resets_accumulation(backend):
    x = _t(backend, [[1.0, 2.0]], requires_grad=True)
    x.sum().backward()
    x.zero_grad()
    assert x.grad is None
    (x * 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[2.0, 2.0]])


@pytest.mark.parametrize(
    "shape_a, shape_b",
    [((3, 1), (4,)), ((1, 4), (3, 1)), ((2, 3, 4), (3, 1)), ((), (2, 3)), ((1, 1), (2, 1, 3))],
)
@pytest.mark.op("autograd")
def test_broadcast_gradient_is_reduced_to_input_shape(backend, shape_a, shape_b):
    rng = np.random.default_rng(0)
    xa, xb = rng.uniform(-1, 1, shape_a), rng.uniform(-1, 1, shape_b)
    a, b = _t(backend, xa, True), _t(backend, xb, True)
    out = a * b
    w = rng.uniform(-1, 1, out.shape)
    out.backward(_t(backend, w))
    assert a.grad.shape == shape_a and b.grad.shape == shape_b
    full = np.broadcast_shapes(shape_a, shape_b)

    def reduce_to(g, shape):
        lead = len(full) - len(shape)
        g = g.sum(axis=tuple(range(lead))) if lead else g
        axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
        return g.sum(axis=axes, keepdims=True).reshape(shape)

    np.testing.assert_allclose(a.grad.numpy(), reduce_to(w * np.broadcast_to(xb, full), shape_a), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), reduce_to(w * np.broadcast_to(xa, full), shape_b), rtol=1e-12)


@pytest.mark.op("autograd")
def test_no_grad_records_nothing(backend):
    x = _t(backend, [1.0, 2.0], requires_grad=True)
    assert tl.is_grad_enabled()
    with tl.no_grad():
        assert not tl.is_grad_enabled()
        y = x * 2.0
    assert tl.is_grad_enabled()
    assert not y.requires_grad and y.is_leaf
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()


@pytest.mark.op("autograd")
def test_no_grad_as_decorator_and_nested(backend):
    x = _t(backend, [1.0], requires_grad=True)

    @tl.no_grad()
    def double(t):
        return t * 2.0

    assert not double(x).requires_grad
    with tl.no_grad():
        with tl.no_grad():
            pass
        assert not tl.is_grad_enabled(), "leaving an inner no_grad keeps the outer one"
    assert tl.is_grad_enabled()
    assert (x * 2.0).requires_grad


@pytest.mark.op("autograd")
def test_no_grad_restores_state_after_an_exception(backend):
    with pytest.raises(ZeroDivisionError):
        with tl.no_grad():
            raise ZeroDivisionError
    assert tl.is_grad_enabled()


@pytest.mark.op("autograd")
def test_detach_cuts_history_and_shares_values(backend):
    x = _t(backend, [1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2.0
    d = y.detach()
    assert not d.requires_grad and d.is_leaf
    np.testing.assert_array_equal(d.numpy(), y.numpy())
    (x * d).sum().backward()  # d acts as a constant
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0, 6.0])


@pytest.mark.op("autograd")
def test_requires_grad_propagation(backend):
    a = _t(backend, [1.0, 2.0], requires_grad=True)
    b = _t(backend, [3.0, 4.0])
    assert (a + b).requires_grad and (b + a).requires_grad
    assert not (b * b).requires_grad
    assert (a.exp().sum()).requires_grad
    assert not (a.detach() + b).requires_grad
    b.requires_grad_()
    assert (b * 2.0).requires_grad
    (a * b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 2.0])


@pytest.mark.op("autograd")
def test_constant_inputs_receive_no_gradient(backend):
    a = _t(backend, [1.0, 2.0], requires_grad=True)
    c = _t(backend, [5.0, 6.0])
    (a * c).sum().backward()
    assert c.grad is None
    intermediate = a * 2.0
    intermediate.sum().backward()
    assert intermediate.grad is None, "only leaves accumulate gradients"


@pytest.mark.op("autograd")
def test_diamond_graph_sums_both_paths(backend):
    # x feeds two branches that meet again: d/dx (x*x + exp(x)) = 2x + exp(x).
    xv = np.array([0.5, -1.0, 2.0])
    x = _t(backend, xv, True)
    y = x * x + x.exp()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * xv + np.exp(xv), rtol=1e-12)


@pytest.mark.op("autograd")
def test_shared_intermediate_used_twice(backend):
    # h = x * 3 is used by two consumers; its gradient must be summed before flowing on.
    x = _t(backend, [1.0, 2.0], True)
    h = x * 3.0
    out = (h * h).sum() + h.sum()
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * (2 * 3.0 * np.array([1.0, 2.0]) + 1.0), rtol=1e-12)


@pytest.mark.op("autograd")
def test_same_tensor_as_both_operands(backend):
    x = _t(backend, [3.0], True)
    (x * x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0])
    x.zero_grad()
    (x - x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0])


@pytest.mark.op("autograd")
def test_max_ties_share_the_gradient(backend):
    x = _t(backend, [[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]], True)
    x.max(1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])


@pytest.mark.op("autograd")
def test_backward_with_explicit_gradient(backend):
    x = _t(backend, [[1.0, 2.0], [3.0, 4.0]], True)
    y = x * x
    y.backward(_t(backend, [[1.0, 0.0], [0.5, -1.0]]))
    np.testing.assert_allclose(x.grad.numpy(), [[2.0, 0.0], [3.0, -8.0]])
