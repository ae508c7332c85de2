"""Optimizers (SGD, Adam, AdamW) and gradient clipping by global norm.

Updates are Tensor arithmetic under ``no_grad`` on the parameters' own backend, written
back into each Parameter in place (the Parameter objects a model holds never change).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..core.autograd import no_grad
from ..core.tensor import Tensor
from ..core.tensor_data import TensorData
from ..nn.module import Parameter


def _param_list(params: Iterable[Parameter]) -> list[Parameter]:
    params = list(params)
    if not params:
        raise ValueError("optimizer got an empty parameter list: pass model.parameters()")
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"optimizer parameter {i} is a {type(p).__name__}, expected a Parameter")
    return params


class Optimizer:
    """Base: holds parameters, per-parameter state buffers and a step counter."""

    def __init__(self, params: Iterable[Parameter], **hyper: float) -> None:
        self.params = _param_list(params)
        for name, value in hyper.items():
            if value < 0:
                raise ValueError(f"{type(self).__name__} {name} must be >= 0, got {value!r}")
        self.hyper = dict(hyper)
        self.state: list[dict[str, Tensor]] = [{} for _ in self.params]
        self.steps = 0

    @property
    def lr(self) -> float:
        """The learning rate (settable, e.g. by a schedule)."""
        return self.hyper["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        if not value >= 0:
            raise ValueError(f"learning rate must be >= 0, got {value!r}")
        self.hyper["lr"] = float(value)

    def zero_grad(self) -> None:
        """Drop every parameter's gradient."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """Apply one update to every parameter that has a gradient."""
        self.steps += 1
        with no_grad():
            for param, state in zip(self.params, self.state):
                if param.grad is not None:
                    param._data = self.update(param.detach(), param.grad, state)._data

    def update(self, p: Tensor, grad: Tensor, state: dict[str, Tensor]) -> Tensor:
        """The new value of one parameter; subclasses define it."""
        raise TypeError(f"{type(self).__name__} does not define update()")

    def state_dict(self) -> dict[str, np.ndarray]:
        """Hyper-parameters, the step count and every state buffer, as numpy arrays."""
        out: dict[str, np.ndarray] = {"steps": np.asarray(self.steps)}
        out.update({f"hyper.{k}": np.asarray(v) for k, v in self.hyper.items()})
        for i, state in enumerate(self.state):
            out.update({f"state.{i}.{k}": v.numpy() for k, v in state.items()})
        return out

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what ``state_dict`` saved, checking buffer shapes against the parameters."""
        self.steps = int(state["steps"])
        for key, value in state.items():
            if key.startswith("hyper."):
                self.hyper[key[len("hyper.") :]] = float(value)
            elif key.startswith("state."):
                _, index, name = key.split(".", 2)
                i = int(index)
                if i >= len(self.params):
                    raise KeyError(
                        f"optimizer state {key!r} names parameter {i}, but there are {len(self.params)}"
                    )
                p = self.params[i]
                array = np.asarray(value, dtype=p.dtype)
                if array.shape != p.shape:
                    raise ValueError(f"optimizer state {key!r} has shape {array.shape}, expected {p.shape}")
                self.state[i][name] = Tensor._wrap(TensorData.from_array(array.copy()), p.backend)


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum and L2 weight decay."""

    def __init__(
        self, params: Iterable[Parameter], lr: float = 0.01, momentum: float = 0.0, weight_decay: float = 0.0
    ):
        super().__init__(params, lr=lr, momentum=momentum, weight_decay=weight_decay)

    def update(self, p: Tensor, grad: Tensor, state: dict[str, Tensor]) -> Tensor:
        h = self.hyper
        if h["weight_decay"]:
            grad = grad + p * h["weight_decay"]
        if h["momentum"]:
            velocity = state.get("velocity")
            grad = grad if velocity is None else velocity * h["momentum"] + grad
            state["velocity"] = grad
        return p - grad * h["lr"]


class Adam(Optimizer):
    """Adam; ``weight_decay`` (default 0) adds an L2 term to the gradient."""

    decoupled = False
    default_weight_decay = 0.0

    def __init__(
        self,
        params: Iterable[Parameter],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float | None = None,
    ):
        if weight_decay is None:
            weight_decay = self.default_weight_decay
        super().__init__(params, lr=lr, beta1=betas[0], beta2=betas[1], eps=eps, weight_decay=weight_decay)
        for name in ("beta1", "beta2"):
            if not self.hyper[name] < 1.0:
                raise ValueError(f"{type(self).__name__} {name} must be in [0, 1), got {self.hyper[name]!r}")

    def update(self, p: Tensor, grad: Tensor, state: dict[str, Tensor]) -> Tensor:
        h = self.hyper
        if h["weight_decay"] and not self.decoupled:
            grad = grad + p * h["weight_decay"]
        m = state.get("m")
        v = state.get("v")
        m = grad * (1 - h["beta1"]) if m is None else m * h["beta1"] + grad * (1 - h["beta1"])
        v = grad * grad * (1 - h["beta2"]) if v is None else v * h["beta2"] + grad * grad * (1 - h["beta2"])
        state["m"], state["v"] = m, v
        m_hat = m * (1.0 / (1 - h["beta1"] ** self.steps))
        v_hat = v * (1.0 / (1 - h["beta2"] ** self.steps))
        if h["weight_decay"] and self.decoupled:
            p = p * (1 - h["lr"] * h["weight_decay"])
        return p - m_hat / (v_hat**0.5 + h["eps"]) * h["lr"]


class AdamW(Adam):
    """Adam with decoupled weight decay (default 0.01)."""

    decoupled = True
    default_weight_decay = 0.01


def clip_grad_norm_(params: Iterable[Parameter], max_norm: float) -> float:
    """Scale gradients so their global L2 norm is at most ``max_norm``; returns the norm before."""
    if not max_norm > 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm!r}")
    grads = [p for p in params if p.grad is not None]
    with no_grad():
        total = math.sqrt(sum((p.grad * p.grad).sum().item() for p in grads))
        if total > max_norm:
            scale = max_norm / (total + 1e-6)
            for p in grads:
                p.grad = p.grad * scale
    return total
