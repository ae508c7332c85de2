"""Reverse-mode autograd: Context, Function.apply, and the topological backward pass.

A Function's ``forward`` and ``backward`` see only TensorData and the backend, and compute
with the backend's bound op names; they never touch Tensors. ``Function.apply`` wraps the
result in a Tensor and records the history when a gradient is wanted.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .tensor_data import TensorData

if TYPE_CHECKING:
    from ..backends.base import Backend
    from .tensor import Tensor

_state = threading.local()


def is_grad_enabled() -> bool:
    """Whether operations record history for backward (False inside ``no_grad()``)."""
    return getattr(_state, "enabled", True)


class no_grad(contextlib.ContextDecorator):
    """Context manager (and decorator) that turns history recording off inside it."""

    def __enter__(self) -> no_grad:
        self._previous = is_grad_enabled()
        _state.enabled = False
        return self

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._previous


def common_backend(tensors: Sequence[Tensor]) -> Backend:
    """The backend all ``tensors`` share, or ValueError naming the devices that differ."""
    backend = tensors[0].backend
    for t in tensors[1:]:
        other = t.backend
        if other is not backend and other.device != backend.device:
            raise ValueError(
                f"tensors are on different devices ({backend.device} and {other.device}): "
                f"move one with .to({str(backend.device)!r}) first"
            )
    return backend


class Context:
    """Per-call scratch space a Function's forward fills for its backward."""

    __slots__ = ("saved", "params", "needs_input_grad")

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.saved: tuple = ()
        self.params: dict[str, Any] = {} if params is None else params
        self.needs_input_grad: tuple[bool, ...] = ()

    def save_for_backward(self, *values: Any) -> None:
        """Keep ``values`` for the backward pass."""
        self.saved = values


class Node:
    """One recorded call: which Function, its Context, and the input Tensors."""

    __slots__ = ("function", "ctx", "inputs", "backend")

    def __init__(self, function: type[Function], ctx: Context, inputs: tuple, backend: Backend):
        self.function = function
        self.ctx = ctx
        self.inputs = inputs
        self.backend = backend


class Function:
    """Base of every differentiable op. Subclasses define ``forward`` and ``backward``."""

    differentiable = True

    @staticmethod
    def forward(ctx: Context, backend: Backend, *inputs: TensorData, **params: Any) -> TensorData:
        """Compute the output from input TensorData with the backend's bound names."""
        raise TypeError("Function subclasses must define forward")

    @staticmethod
    def backward(ctx: Context, backend: Backend, grad: TensorData) -> tuple:
        """Gradients for each input (None where an input gets none)."""
        raise TypeError("Function subclasses must define backward")

    @classmethod
    def apply(cls, *inputs: Tensor, backend: Backend | None = None, **params: Any) -> Tensor:
        """Run ``forward`` on the inputs' backend and record history if a gradient is wanted."""
        if not inputs:
            raise TypeError(f"{cls.__name__}.apply needs at least one input Tensor")
        first = inputs[0]
        if backend is None:
            backend = first.backend
            for t in inputs:
                if t.backend is not backend:  # rare: only then compare the devices
                    backend = common_backend(inputs)
                    break
        ctx = Context(params)
        track = False
        if cls.differentiable and getattr(_state, "enabled", True):
            needs = tuple([t.requires_grad for t in inputs])
            if True in needs:
                track = True
                ctx.needs_input_grad = needs
        # The result is of the inputs' own Tensor class, so this module never imports tensor.py.
        out = first._wrap(cls.forward(ctx, backend, *[t._data for t in inputs], **params), backend)
        if track:
            out.requires_grad = True
            out._node = Node(cls, ctx, inputs, backend)
        return out


def fit_gradient(backend: Backend, grad: TensorData, shape: tuple, dtype: np.dtype) -> TensorData:
    """Sum a broadcast gradient back down to ``shape`` and cast it to ``dtype``."""
    if grad.shape != shape:
        lead = grad.ndim - len(shape)
        for dim in range(grad.ndim):
            if dim < lead or (shape[dim - lead] == 1 and grad.shape[dim] != 1):
                grad = backend.add_reduce(grad, dim)
        grad = grad.view(shape)
    if grad.dtype != dtype:
        grad = TensorData.from_array(grad.array.astype(dtype))
    return grad


def _topological_order(root: Tensor) -> list[Tensor]:
    """Tensors reachable from ``root`` through recorded history, outputs before inputs."""
    order: list[Tensor] = []
    visited: set[int] = set()
    stack: list[tuple[Tensor, Iterator]] = [(root, iter(_parents(root)))]
    visited.add(id(root))
    while stack:
        tensor, parents = stack[-1]
        for parent in parents:
            if id(parent) not in visited:
                visited.add(id(parent))
                stack.append((parent, iter(_parents(parent))))
                break
        else:
            stack.pop()
            order.append(tensor)
    order.reverse()
    return order


def _parents(tensor: Tensor) -> tuple:
    node = tensor._node
    return tuple(t for t in node.inputs if t.requires_grad) if node is not None else ()


def backward(root: Tensor, grad: Tensor | None = None) -> None:
    """Accumulate d(root)/d(leaf) into ``leaf.grad`` for every leaf that requires grad."""
    if not root.requires_grad:
        raise RuntimeError(
            "backward() called on a tensor that does not require grad: create the inputs "
            "with requires_grad=True (and not inside no_grad())"
        )
    if grad is None:
        if root.size != 1:
            raise RuntimeError(
                f"backward() on a non-scalar tensor of shape {root.shape} needs a gradient: "
                f"pass grad= with that shape, or reduce first (e.g. .sum())"
            )
        seed = TensorData.from_array(np.ones(root.shape, dtype=root.dtype))
    else:
        # Any Tensor carries its TensorData in ``_data``; checking that keeps tensor.py out of imports.
        if not isinstance(getattr(grad, "_data", None), TensorData):
            raise TypeError(f"backward grad must be a Tensor, got {type(grad).__name__}")
        if grad.shape != root.shape:
            raise ValueError(f"backward grad has shape {grad.shape}, expected {root.shape}")
        seed = grad._data
    grads: dict[int, TensorData] = {id(root): seed}
    for tensor in _topological_order(root):
        g = grads.pop(id(tensor), None)
        if g is None:
            continue
        node = tensor._node
        if node is None:
            tensor._accumulate(g)
            continue
        results = node.function.backward(node.ctx, node.backend, g)
        if not isinstance(results, tuple):
            results = (results,)
        for parent, pg in zip(node.inputs, results):
            if pg is None or not parent.requires_grad:
                continue
            data = parent._data
            if pg.shape != data.shape or pg.dtype != data.dtype:
                pg = fit_gradient(node.backend, pg, data.shape, data.dtype)
            previous = grads.get(id(parent))
            grads[id(parent)] = pg if previous is None else node.backend.add(previous, pg)
