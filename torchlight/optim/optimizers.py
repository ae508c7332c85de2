"""Optimizers (SGD, Adam, AdamW) and gradient clipping by global norm.

Updates are Tensor arithmetic under ``no_grad`` on the parameters' own backend, written
back into each Parameter in place (the Parameter objects a model holds never change).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..core.autograd import no_grad
from ..core.tensor import Tensor
from ..core.tensor_data import TensorData
from ..nn.module import Parameter, StateDictError, state_array

STATE_KEY = re.compile(r"state\.(0|[1-9][0-9]*)\.([A-Za-z_][A-Za-z0-9_]*)\Z")
# The step count is saved as int64, so it stays an int64 (never a Python object to pickle).
MAX_STEPS = int(np.iinfo(np.int64).max)


def _param_list(params: Iterable[Parameter], owner: str) -> list[Parameter]:
    if isinstance(params, Tensor):
        raise TypeError(f"{owner} expects an iterable of parameters, got one Tensor; pass [param]")
    if isinstance(params, (str, bytes)):
        raise TypeError(
            f"{owner} expects an iterable of parameters, got {type(params).__name__} {params!r:.40}"
        )
    try:
        params = list(params)
    except TypeError:
        raise TypeError(
            f"{owner} expects an iterable of parameters, got {type(params).__name__}; pass model.parameters()"
        ) from None
    if not params:
        raise ValueError(f"{owner} got an empty parameter list: pass model.parameters()")
    seen: dict[int, int] = {}
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"{owner} parameter {i} is a {type(p).__name__}, expected a Parameter")
        if id(p) in seen:
            raise ValueError(
                f"{owner} parameter {i} is the same tensor as parameter {seen[id(p)]}: each parameter "
                f"may appear once (it would be stepped twice); model.parameters() lists each once"
            )
        seen[id(p)] = i
    return params


def _hyper_value(value: Any, where: str) -> float:
    """A hyper-parameter as a float: TypeError for anything but a real number (bool excluded)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        hint = f" (float({value!r}) converts it)" if isinstance(value, str) else ""
        raise TypeError(f"{where} must be a real number, got {type(value).__name__} {value!r:.60}{hint}")
    try:
        return float(value)
    except OverflowError:  # an int past float range: out of every range below
        raise ValueError(
            f"{where} must be a finite number, got an int of {value.bit_length()} bits"
        ) from None


class Optimizer:
    """Base: holds parameters, per-parameter state buffers and a step counter.

    ``HYPER`` maps each hyper-parameter to its accepted range ``(low, high)``: finite, at
    least ``low`` and, when ``high`` is set, below it (a name missing from the table must be
    finite and >= 0). ``STATE`` names the per-parameter buffers.
    """

    HYPER: dict[str, tuple[float, float | None]] = {"lr": (0.0, None)}
    STATE: tuple[str, ...] = ()

    def __init__(self, params: Iterable[Parameter], **hyper: float) -> None:
        self.params = _param_list(params, type(self).__name__)
        self.hyper = {name: self.check_hyper(name, value) for name, value in hyper.items()}
        self.state: list[dict[str, Tensor]] = [{} for _ in self.params]
        self.steps = 0
        self._operands: dict[tuple[float, float, np.dtype], TensorData] = {}

    @property
    def steps(self) -> int:
        """How many updates ``step`` has applied: an int in ``[0, MAX_STEPS]``."""
        return self._steps

    @steps.setter
    def steps(self, value: int) -> None:
        where = f"{type(self).__name__}.steps"
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{where} must be an int, got {type(value).__name__} {value!r}")
        if not 0 <= int(value) <= MAX_STEPS:
            raise ValueError(f"{where} must be in [0, {MAX_STEPS}] (it is saved as int64), got {value!r}")
        self._steps = int(value)

    def check_hyper(self, name: str, value: Any) -> float:
        """``value`` as a float if it is a valid ``name``, else TypeError/ValueError naming it."""
        where = f"{type(self).__name__} {name}"
        if isinstance(value, np.generic):
            value = value.item()  # shown as 0.5, not np.float64(0.5)
        number = _hyper_value(value, where)
        low, high = self.HYPER.get(name, (0.0, None))
        if not math.isfinite(number) or number < low or (high is not None and number >= high):
            expected = f"in [{low:g}, {high:g})" if high is not None else f">= {low:g}"
            raise ValueError(f"{where} must be {expected}, got {value!r}; pass a finite number {expected}")
        return number

    @property
    def lr(self) -> float:
        """The learning rate (settable, e.g. by a schedule)."""
        return self.hyper["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        self.hyper["lr"] = self.check_hyper("lr", value)

    def zero_grad(self) -> None:
        """Drop every parameter's gradient."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """Apply one update to every parameter that has a gradient (each keeps its dtype)."""
        grads = []
        for i, param in enumerate(self.params):
            grad = param.grad
            if grad is not None:
                if grad.shape != param.shape:
                    raise ValueError(
                        f"{type(self).__name__}: the gradient of parameter {i} has shape {grad.shape}, "
                        f"expected {param.shape}; assign a gradient of the parameter's shape"
                    )
                if grad.dtype != param.dtype:
                    grad = grad.to(param.dtype)
            grads.append(grad)
        if self.steps == MAX_STEPS:
            raise ValueError(
                f"{type(self).__name__} has taken {MAX_STEPS} steps, the most its int64 step count holds; "
                f"create a new optimizer"
            )
        self.steps += 1
        self._operands.clear()  # this step's constants: every parameter of a dtype shares them
        with no_grad():
            for param, grad, state in zip(self.params, grads, self.state):
                if grad is not None:
                    param._data = self.update(param.detach(), grad.detach(), state)._data

    def update(self, p: Tensor, grad: Tensor, state: dict[str, Tensor]) -> Tensor:
        """The new value of one parameter; subclasses define it."""
        raise TypeError(f"{type(self).__name__} does not define update()")

    def _operand(self, value: float, like: TensorData) -> TensorData:
        """``value`` as a 0-d operand in ``like``'s dtype, as a Tensor operator lifts a Python number.

        Made once a step for each value and dtype: the update of every parameter uses the same few.
        """
        key = (value, math.copysign(1.0, value), like.dtype)  # 0.0 and -0.0 are equal keys otherwise
        operand = self._operands.get(key)
        if operand is None:
            operand = self._operands[key] = TensorData.from_array(np.array(value, dtype=like.dtype))
        return operand

    def state_dict(self) -> dict[str, np.ndarray]:
        """Optimizer type, hyper-parameters, the step count and every state buffer, as numpy arrays."""
        out: dict[str, np.ndarray] = {
            "type": np.asarray(type(self).__name__),
            "steps": np.asarray(self.steps, dtype=np.int64),
        }
        out.update({f"hyper.{k}": np.asarray(v) for k, v in self.hyper.items()})
        for i, state in enumerate(self.state):
            out.update({f"state.{i}.{k}": v.numpy() for k, v in state.items()})
        return out

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` saved after checking all of it; a refused load changes nothing."""
        steps, hyper, buffers = self.check_state_dict(state)
        self.steps, self.hyper, self.state = steps, hyper, buffers

    def check_state_dict(
        self, state: Mapping[str, Any]
    ) -> tuple[int, dict[str, float], list[dict[str, Tensor]]]:
        """Validate a whole optimizer state (type, steps, hyper-parameters, buffers) without applying it."""
        name = type(self).__name__
        if not isinstance(state, Mapping):
            raise TypeError(
                f"{name}.load_state_dict expects a mapping, got {type(state).__name__}; "
                f"pass optimizer.state_dict()"
            )
        for key in state:
            if not isinstance(key, str):
                raise StateDictError(f"{name} state names must be strings, got {key!r}")
        if "type" in state:
            saved = np.asarray(state["type"])
            if saved.dtype.kind != "U" or saved.ndim != 0 or str(saved) != name:
                raise StateDictError(
                    f"the optimizer state is for {saved!s}, not {name}: load it into a {saved!s} "
                    f"optimizer, or start {name} fresh"
                )
        if "steps" not in state:
            raise StateDictError(
                f"{name} state has no 'steps' entry: it was not written by Optimizer.state_dict()"
            )
        steps = self._check_steps(state["steps"])
        hyper = self._check_hypers(state)
        buffers: list[dict[str, Tensor]] = [{} for _ in self.params]
        for key, value in state.items():
            if key in ("type", "steps") or key.startswith("hyper."):
                continue
            match = STATE_KEY.match(key)
            if not key.startswith("state.") or not match:
                raise StateDictError(
                    f"unknown {name} state entry {key!r}: expected 'type', 'steps', "
                    f"'hyper.<name>' or 'state.<parameter index>.<buffer>'"
                )
            index, buffer = int(match.group(1)), match.group(2)
            if index >= len(self.params):
                raise StateDictError(
                    f"{name} state {key!r} names parameter {index}, but this optimizer has "
                    f"{len(self.params)} (0 to {len(self.params) - 1})"
                )
            if buffer not in self.STATE:
                raise StateDictError(
                    f"{name} has no state buffer {buffer!r} ({key!r}); its buffers are {list(self.STATE)}"
                )
            p = self.params[index]
            array = state_array(value, f"{name} state {key!r}", p.dtype, p.shape)
            self._check_buffer(key, buffer, array)
            buffers[index][buffer] = Tensor._wrap(TensorData.from_array(array), p.backend)
        for index, found in enumerate(buffers):
            if found and set(found) != set(self.STATE):
                raise StateDictError(
                    f"{name} state of parameter {index} has buffers {sorted(found)}, expected all of "
                    f"{list(self.STATE)} or none"
                )
        if steps == 0 and any(buffers):
            raise StateDictError(f"{name} state has buffers but steps is 0: the step count does not match")
        return steps, hyper, buffers

    def _check_steps(self, value: Any) -> int:
        name = type(self).__name__
        array = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
        if array.dtype.kind not in "iu" or array.ndim != 0:
            raise StateDictError(
                f"{name} state 'steps' must be a non-negative integer, got {value!r} "
                f"(dtype {array.dtype}, shape {array.shape})"
            )
        steps = int(array)
        if not 0 <= steps <= MAX_STEPS:
            raise StateDictError(
                f"{name} state 'steps' must be a non-negative integer at most {MAX_STEPS} (int64), "
                f"got {steps}"
            )
        return steps

    def _check_hypers(self, state: Mapping[str, Any]) -> dict[str, float]:
        name = type(self).__name__
        given = {k[len("hyper.") :]: v for k, v in state.items() if k.startswith("hyper.")}
        missing, unknown = sorted(set(self.hyper) - set(given)), sorted(set(given) - set(self.hyper))
        if missing or unknown:
            raise StateDictError(
                f"{name} state hyper-parameters do not match: missing {missing}, unknown {unknown}; "
                f"{name} has {sorted(self.hyper)}"
            )
        hyper = {}
        for key in self.hyper:
            value = given[key]
            array = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
            if array.ndim != 0 or array.dtype.kind not in "iuf":
                raise StateDictError(
                    f"{name} state 'hyper.{key}' must be a real number, got {value!r} (dtype {array.dtype})"
                )
            try:
                hyper[key] = self.check_hyper(key, array[()])
            except (TypeError, ValueError) as err:
                raise StateDictError(f"{name} state 'hyper.{key}': {err}") from None
        return hyper

    def _check_buffer(self, key: str, buffer: str, array: np.ndarray) -> None:
        if not np.isfinite(array).all():
            bad = float(array[~np.isfinite(array)].reshape(-1)[0])
            raise StateDictError(f"{type(self).__name__} state {key!r} holds {bad!r}: buffers must be finite")


class SGD(Optimizer):
    """Stochastic gradient descent with optional momentum and L2 weight decay."""

    HYPER = {"lr": (0.0, None), "momentum": (0.0, None), "weight_decay": (0.0, None)}
    STATE = ("velocity",)

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
    HYPER = {
        "lr": (0.0, None),
        "beta1": (0.0, 1.0),
        "beta2": (0.0, 1.0),
        "eps": (0.0, None),
        "weight_decay": (0.0, None),
    }
    STATE = ("m", "v")

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
        if isinstance(betas, (str, bytes)) or not isinstance(betas, Sequence):
            raise TypeError(
                f"{type(self).__name__} betas must be a pair (beta1, beta2) like (0.9, 0.999), "
                f"got {type(betas).__name__} {betas!r}"
            )
        if len(betas) != 2:
            raise ValueError(
                f"{type(self).__name__} betas must be a pair (beta1, beta2) like (0.9, 0.999), "
                f"got {len(betas)} value(s): {tuple(betas)!r}"
            )
        super().__init__(params, lr=lr, beta1=betas[0], beta2=betas[1], eps=eps, weight_decay=weight_decay)

    def _check_buffer(self, key: str, buffer: str, array: np.ndarray) -> None:
        super()._check_buffer(key, buffer, array)
        if buffer == "v" and (array < 0).any():
            bad = float(array[array < 0].reshape(-1)[0])
            raise StateDictError(
                f"{type(self).__name__} state {key!r} holds {bad!r}: 'v' averages squared gradients "
                f"and cannot be negative"
            )

    def update(self, p: Tensor, grad: Tensor, state: dict[str, Tensor]) -> Tensor:
        # The same backend ops, in the same order and dtypes, as the Tensor arithmetic
        # ``p - m_hat / (v_hat**0.5 + eps) * lr`` would run, called on the backend directly: under
        # no_grad, the Tensor layer above them records nothing and checks what is known here.
        h = self.hyper
        backend = p.backend
        add, sub, mul, div = backend.add, backend.sub, backend.mul, backend.div
        g, w = grad._data, p._data
        if h["weight_decay"] and not self.decoupled:
            g = add(g, mul(w, self._operand(h["weight_decay"], w)))
        m = state.get("m")
        v = state.get("v")
        b1, b2 = h["beta1"], h["beta2"]
        if m is None:
            m = mul(g, self._operand(1 - b1, g))
        else:
            m = add(mul(m._data, self._operand(b1, m._data)), mul(g, self._operand(1 - b1, g)))
        g2 = mul(g, g)
        if v is None:
            v = mul(g2, self._operand(1 - b2, g2))
        else:
            v = add(mul(v._data, self._operand(b2, v._data)), mul(g2, self._operand(1 - b2, g2)))
        state["m"], state["v"] = Tensor._wrap(m, backend), Tensor._wrap(v, backend)
        m_hat = mul(m, self._operand(1.0 / (1 - b1**self.steps), m))
        v_hat = mul(v, self._operand(1.0 / (1 - b2**self.steps), v))
        if h["weight_decay"] and self.decoupled:
            w = mul(w, self._operand(1 - h["lr"] * h["weight_decay"], w))
        root = backend.pow(v_hat, self._operand(0.5, v_hat))
        ratio = div(m_hat, add(root, self._operand(h["eps"], root)))
        return Tensor._wrap(sub(w, mul(ratio, self._operand(h["lr"], ratio))), backend)


class AdamW(Adam):
    """Adam with decoupled weight decay (default 0.01)."""

    decoupled = True
    default_weight_decay = 0.01


def clip_grad_norm_(params: Iterable[Parameter], max_norm: float) -> float:
    """Scale gradients so their global L2 norm is at most ``max_norm``; returns the norm before."""
    norm = _hyper_value(max_norm, "clip_grad_norm_ max_norm")
    if not (math.isfinite(norm) and norm > 0):
        raise ValueError(f"max_norm must be > 0 and finite, got {max_norm!r}")
    if isinstance(params, Tensor):
        params = [params]
    if isinstance(params, (str, bytes)) or not hasattr(params, "__iter__"):
        raise TypeError(
            f"clip_grad_norm_ parameters must be an iterable of parameters, got {type(params).__name__}; "
            f"pass model.parameters()"
        )
    unique = {id(p): p for p in params}  # a parameter listed twice is counted and scaled once
    grads = [p for p in unique.values() if getattr(p, "grad", None) is not None]
    with no_grad():
        total = math.sqrt(sum((p.grad * p.grad).sum().item() for p in grads))
        if total > norm:
            scale = norm / (total + 1e-6)
            for p in grads:
                p.grad = p.grad * scale
    return total
