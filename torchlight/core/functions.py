"""The differentiable ops. Forward and backward use only the backend's bound op names.

Every Function here works on TensorData; Tensor methods (tensor.py) call ``apply``.
"""

from __future__ import annotations

import math

import numpy as np

from .autograd import Function
from .tensor_data import TensorData


def scalar_data(value: float, dtype: np.dtype) -> TensorData:
    """A 0-d TensorData holding ``value`` in ``dtype`` (broadcasts against anything)."""
    return TensorData.from_array(np.asarray(value, dtype=dtype))


# --- unary ------------------------------------------------------------------------------


class Neg(Function):
    @staticmethod
    def forward(ctx, backend, a):
        return backend.neg_map(a)

    @staticmethod
    def backward(ctx, backend, grad):
        return backend.neg_map(grad)


def _pointwise(name: str, forward: str, backward: str, save: str) -> type[Function]:
    """A unary Function: ``forward`` is a ``*_map``; ``backward(saved, grad)`` is one bound name.

    ``save`` says which value the backward needs: the op's ``"input"`` or its ``"output"``.
    """

    def fw(ctx, backend, a):
        out = getattr(backend, forward)(a)
        ctx.save_for_backward(out if save == "output" else a)
        return out

    def bw(ctx, backend, grad):
        return getattr(backend, backward)(ctx.saved[0], grad)

    namespace = {"forward": staticmethod(fw), "backward": staticmethod(bw), "__module__": __name__}
    return type(name, (Function,), namespace)


# d/dx exp = exp(x): mul(output, grad); the others use their ``*_back`` helper.
Exp = _pointwise("Exp", "exp_map", "mul", save="output")
Log = _pointwise("Log", "log_map", "log_back", save="input")
Sigmoid = _pointwise("Sigmoid", "sigmoid_map", "sigmoid_back", save="output")
Tanh = _pointwise("Tanh", "tanh_map", "tanh_back", save="output")
Relu = _pointwise("Relu", "relu_map", "relu_back", save="input")


class Gelu(Function):
    """GELU, tanh approximation, as one op (``backend.gelu_fw``/``gelu_bw``): the composition's
    values, without its eight recorded steps and the six intermediates they keep."""

    @staticmethod
    def forward(ctx, backend, a):
        out, t = backend.gelu_fw(a)
        ctx.save_for_backward(a, t)
        return out

    @staticmethod
    def backward(ctx, backend, grad):
        return backend.gelu_bw(*ctx.saved, grad)


class Pow(Function):
    """``a ** exponent`` for a Python scalar exponent."""

    @staticmethod
    def forward(ctx, backend, a, exponent):
        ctx.save_for_backward(a)
        return backend.pow(a, scalar_data(exponent, a.dtype))

    @staticmethod
    def backward(ctx, backend, grad):
        (a,) = ctx.saved
        p = ctx.params["exponent"]
        slope = backend.mul(backend.pow(a, scalar_data(p - 1, a.dtype)), scalar_data(p, a.dtype))
        return backend.mul(grad, slope)


# --- binary -----------------------------------------------------------------------------


class Add(Function):
    @staticmethod
    def forward(ctx, backend, a, b):
        return backend.add(a, b)

    @staticmethod
    def backward(ctx, backend, grad):
        return grad, grad


class Sub(Function):
    @staticmethod
    def forward(ctx, backend, a, b):
        return backend.sub(a, b)

    @staticmethod
    def backward(ctx, backend, grad):
        return grad, backend.neg_map(grad) if ctx.needs_input_grad[1] else None


class Mul(Function):
    @staticmethod
    def forward(ctx, backend, a, b):
        ctx.save_for_backward(a, b)
        return backend.mul(a, b)

    @staticmethod
    def backward(ctx, backend, grad):
        a, b = ctx.saved
        need_a, need_b = ctx.needs_input_grad
        if a is b:  # x * x: both gradients are grad * x, made once
            both = backend.mul(grad, a)
            return both, both
        return (
            backend.mul(grad, b) if need_a else None,
            backend.mul(grad, a) if need_b else None,
        )


class Div(Function):
    @staticmethod
    def forward(ctx, backend, a, b):
        out = backend.div(a, b)
        ctx.save_for_backward(b, out)
        return out

    @staticmethod
    def backward(ctx, backend, grad):
        b, out = ctx.saved
        grad_a = backend.div(grad, b)
        if not ctx.needs_input_grad[1]:  # a constant divisor (x / 2.0) gets no gradient
            return grad_a, None
        return grad_a, backend.neg_map(backend.mul(grad_a, out))


class Comparison(Function):
    """Elementwise comparison: 1.0 where true, 0.0 where false; no gradient."""

    differentiable = False
    op = "eq"

    @classmethod
    def forward(cls, ctx, backend, a, b):
        return getattr(backend, cls.op)(a, b)


class Lt(Comparison):
    op = "lt"


class Eq(Comparison):
    op = "eq"


class Gt(Comparison):
    op = "gt"


# --- reductions ---------------------------------------------------------------------------


class Sum(Function):
    """Sum over one dim, kept with size 1."""

    @staticmethod
    def forward(ctx, backend, a, dim):
        ctx.save_for_backward(a.shape)
        return backend.add_reduce(a, dim)

    @staticmethod
    def backward(ctx, backend, grad):
        return grad.expanded(ctx.saved[0])


class SumAll(Function):
    """Sum of every element, shaped ``shape`` (``()``, or all ones for keepdim): Sum over the flat view."""

    @staticmethod
    def forward(ctx, backend, a, shape):
        ctx.save_for_backward(a.shape)
        return backend.add_reduce(a.reshaped((a.size,)), 0).reshaped(shape)

    @staticmethod
    def backward(ctx, backend, grad):
        (shape,) = ctx.saved
        # Every element gets the one value: a view of it with stride 0, as Sum's backward gives.
        return grad.reshaped((1,) * len(shape)).expanded(shape)


class Max(Function):
    """Max over one dim, kept with size 1; ties share the gradient equally (NaNs, when the max is NaN)."""

    @staticmethod
    def forward(ctx, backend, a, dim):
        out = backend.max_reduce(a, dim)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, backend, grad):
        a, out = ctx.saved
        hits = backend.max_hit(a, out)
        count = backend.add_reduce(hits, ctx.params["dim"])
        return backend.mul(hits, backend.div(grad, count))


# --- linear algebra and views -----------------------------------------------------------------


def _swap_last(data: TensorData) -> TensorData:
    """The last two dims swapped (a matmul operand has at least two)."""
    order = list(range(len(data.shape)))
    order[-2], order[-1] = order[-1], order[-2]
    return data.permuted(order)


class MatMul(Function):
    @staticmethod
    def forward(ctx, backend, a, b):
        ctx.save_for_backward(a, b)
        return backend.matmul(a, b)

    @staticmethod
    def backward(ctx, backend, grad):
        a, b = ctx.saved
        need_a, need_b = ctx.needs_input_grad
        grad_b = None
        if need_b:
            if b.ndim == 2 and a.ndim > 2:
                # One matrix used by every stack entry (a layer's weight): its gradient, the sum
                # over the entries of a_i^T @ grad_i, is one product of the stacked rows.
                rows = math.prod(a.shape[:-1])
                flat_a = a.reshaped((rows, a.shape[-1]))
                grad_b = backend.matmul(_swap_last(flat_a), grad.reshaped((rows, grad.shape[-1])))
            else:
                grad_b = backend.matmul(_swap_last(a), grad)
        return backend.matmul(grad, _swap_last(b)) if need_a else None, grad_b


class Permute(Function):
    @staticmethod
    def forward(ctx, backend, a, order):
        return a.permuted(order)  # Tensor.permute checked the order

    @staticmethod
    def backward(ctx, backend, grad):
        order = ctx.params["order"]
        inverse = [0] * len(order)
        for position, dim in enumerate(order):
            inverse[dim] = position
        return grad.permuted(inverse)


class View(Function):
    """Reshape; shares storage when the input is contiguous, copies otherwise."""

    @staticmethod
    def forward(ctx, backend, a, shape):
        ctx.save_for_backward(a.shape)
        return a.reshaped(shape)  # Tensor.view resolved and checked the shape

    @staticmethod
    def backward(ctx, backend, grad):
        return grad.reshaped(ctx.saved[0])


class Contiguous(Function):
    @staticmethod
    def forward(ctx, backend, a):
        return a.contiguous()

    @staticmethod
    def backward(ctx, backend, grad):
        return grad


class Cast(Function):
    """Convert to another floating dtype; the gradient converts back."""

    @staticmethod
    def forward(ctx, backend, a, dtype):
        ctx.save_for_backward(a.dtype)
        return TensorData.from_array(a.array.astype(dtype))

    @staticmethod
    def backward(ctx, backend, grad):
        return TensorData.from_array(grad.array.astype(ctx.saved[0]))


class MoveTo(Function):
    """Move to another backend (``Function.apply(..., backend=target)``)."""

    @staticmethod
    def forward(ctx, backend, a):
        return a.copy()

    @staticmethod
    def backward(ctx, backend, grad):
        return grad


# --- softmax family and the fused ops ------------------------------------------------------------


class Softmax(Function):
    @staticmethod
    def forward(ctx, backend, a, dim):
        shifted = backend.sub(a, backend.max_reduce(a, dim))
        e = backend.exp_map(shifted)
        out = backend.div(e, backend.add_reduce(e, dim))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, backend, grad):
        (y,) = ctx.saved
        dot = backend.add_reduce(backend.mul(grad, y), ctx.params["dim"])
        return backend.mul(y, backend.sub(grad, dot))


class LogSoftmax(Function):
    @staticmethod
    def forward(ctx, backend, a, dim):
        shifted = backend.sub(a, backend.max_reduce(a, dim))
        lse = backend.log_map(backend.add_reduce(backend.exp_map(shifted), dim))
        out = backend.sub(shifted, lse)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, backend, grad):
        (y,) = ctx.saved
        total = backend.add_reduce(grad, ctx.params["dim"])
        return backend.sub(grad, backend.mul(backend.exp_map(y), total))


class LayerNorm(Function):
    """Fused layer norm over the last dim: inputs ``x, gamma, beta``."""

    @staticmethod
    def forward(ctx, backend, x, gamma, beta, eps):
        y, mean, rstd = backend.layernorm_fw(x, gamma, beta, eps)
        ctx.save_for_backward(x, gamma, mean, rstd)
        return y

    @staticmethod
    def backward(ctx, backend, grad):
        return backend.layernorm_bw(grad, *ctx.saved)


class AttnSoftmax(Function):
    """Fused attention softmax; inputs ``scores`` and, optionally, an additive ``mask``."""

    @staticmethod
    def forward(ctx, backend, x, mask=None, causal=False):
        out = backend.attn_softmax_fw(x, mask, causal)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, backend, grad):
        y = ctx.saved[0]
        dx = backend.attn_softmax_bw(y, grad)
        if ctx.params.get("causal"):
            # Keys after the query are not inputs of the result (PyTorch fills them): their
            # gradient is 0, also in a row a NaN or +inf made NaN.
            q_len, k_len = y.shape[-2], y.shape[-1]
            keep = np.arange(k_len)[None, :] <= np.arange(q_len)[:, None]
            dx = backend.masked_grad(dx, TensorData.from_array(keep.astype(y.dtype)))
        # The mask is a constant of the attention pattern: it receives no gradient.
        return dx, None
