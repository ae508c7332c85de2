"""Module and Parameter: parameter discovery, train/eval, state dicts, device moves."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..core.checks import check_flag
from ..core.tensor import Tensor, _backend_for, check_device_or_dtype, resolve_dtype
from ..core.tensor_data import TensorData


class StateDictError(ValueError, KeyError):
    """A state dict or checkpoint that does not fit the model or optimizer; nothing was changed.

    It is a ValueError (a wrong shape, dtype or value) and a KeyError (a missing or unknown
    entry), so code written against either keeps working.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


_STATE_FIXES = {
    "b": "booleans are not parameter values; save the float parameters themselves",
    "c": "complex values would lose their imaginary part; pass values.real explicitly if that is meant",
    "U": "strings are not parameter values",
    "S": "bytes are not parameter values",
    "O": "pass numeric arrays (numpy float/int), not Python objects",
    "V": "structured arrays are not parameter values; pass one numeric field",
}


def state_array(value: Any, key: str, dtype: np.dtype, shape: tuple[int, ...] | None) -> np.ndarray:
    """One state-dict entry as a new ``dtype`` array of ``shape``, or StateDictError naming ``key``."""
    if isinstance(value, Tensor):
        value = value.numpy()
    if value is None or isinstance(value, (str, bytes)):
        raise StateDictError(f"{key} is {type(value).__name__} {value!r}, expected a numeric array")
    try:
        source = np.asarray(value)
    except (ValueError, TypeError) as err:
        raise StateDictError(f"{key} is not a rectangular numeric array ({err})") from None
    kind = source.dtype.kind
    if kind not in "iuf":
        fix = _STATE_FIXES.get(kind, "pass a float or int array")
        raise StateDictError(f"{key} has dtype {source.dtype}, expected {dtype} values: {fix}")
    if shape is not None and source.shape != shape:
        raise StateDictError(f"{key} has shape {source.shape}, expected {shape}")
    with np.errstate(over="ignore", invalid="ignore"):
        array = np.array(source, dtype=dtype, copy=True, order="C")
    if kind == "f":
        overflow = np.isinf(array) & ~np.isinf(source)
        if overflow.any():
            first = float(source[overflow].reshape(-1)[0])
            raise StateDictError(
                f"{key} holds {first!r}, which overflows {dtype} (largest {np.finfo(dtype).max:.4g}): "
                f"the entry was not saved from a {dtype} parameter"
            )
    return array


class Parameter(Tensor):
    """A Tensor that a Module owns and an optimizer updates (requires_grad by default)."""

    def __init__(self, data: Any, requires_grad: bool = True, dtype: Any = None, device: Any = None):
        if isinstance(data, Tensor) and dtype is None and device is None:
            self._data = data._data
            self.backend = data.backend
            self.requires_grad = check_flag(requires_grad, "requires_grad", "Parameter")
            self.grad = None
            self._node = None
        else:
            super().__init__(data, dtype=dtype, device=device, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter(" + super().__repr__() + ")"


class Module:
    """Base of every layer: finds Parameters and sub-Modules in attributes, lists and tuples."""

    def __init__(self) -> None:
        self.training = True

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The layer's computation; subclasses define it."""
        raise TypeError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # --- discovery ------------------------------------------------------------------------

    def _members(self) -> Iterator[tuple[str, Any]]:
        for name, value in vars(self).items():
            if isinstance(value, (Parameter, Module)):
                yield name, value
            elif isinstance(value, (list, tuple)):
                for i, item in enumerate(value):
                    if isinstance(item, (Parameter, Module)):
                        yield f"{name}.{i}", item

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This module and every sub-module, with dotted names."""
        yield prefix, self
        for name, value in self._members():
            if isinstance(value, Module):
                yield from value.named_modules(f"{prefix}{name}.")

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_parameters(self) -> Iterator[tuple[str, Parameter]]:
        """Every Parameter once, with its dotted name (``blocks.0.attn.q_proj.weight``)."""
        seen: set[int] = set()
        for prefix, module in self.named_modules():
            for name, value in module._members():
                if isinstance(value, Parameter) and id(value) not in seen:
                    seen.add(id(value))
                    yield f"{prefix}{name}", value

    def parameters(self) -> list[Parameter]:
        """Every Parameter once, in a stable order."""
        return [p for _, p in self.named_parameters()]

    # --- modes and gradients ----------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active) on this module and every sub-module."""
        mode = check_flag(mode, "mode", f"{type(self).__name__}.train")
        for module in self.modules():
            module.training = mode
        return self

    def eval(self) -> Module:
        """Set evaluation mode (dropout off)."""
        return self.train(False)

    def zero_grad(self) -> None:
        """Drop every parameter's gradient."""
        for p in self.parameters():
            p.grad = None

    def to(self, device: Any) -> Module:
        """Move every parameter to ``device`` in place; returns self."""
        if isinstance(device, str):
            try:
                check_device_or_dtype(device)
            except TypeError:
                raise TypeError(
                    f"{type(self).__name__}.to({device!r}): Module.to takes a device ('cpu', 'cuda'); "
                    f"{device!r} is a dtype: build the module with dtype='float32' or dtype='float64'"
                ) from None
        backend = _backend_for(device)
        for p in self.parameters():
            p.backend = backend
        return self

    # --- state --------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, np.ndarray]:
        """Parameter values by dotted name (copies)."""
        return {name: p.numpy() for name, p in self.named_parameters()}

    def load_state_dict(self, state: Mapping[str, Any], strict: bool = True) -> None:
        """Copy values into the parameters after checking every entry; a refused load changes nothing."""
        for param, array in self.check_state_dict(state, strict):
            param._data = TensorData.from_array(array)

    def check_state_dict(self, state: Mapping[str, Any], strict: bool = True) -> list[tuple[Parameter, Any]]:
        """Validate ``state`` (names, shapes, dtypes) without changing anything; returns what to assign."""
        if not isinstance(state, Mapping):
            raise TypeError(
                f"load_state_dict state must be a mapping of names to arrays, got {type(state).__name__}; "
                f"pass model.state_dict() or a dict"
            )
        strict = check_flag(strict, "strict", "load_state_dict")
        bad_names = [k for k in state if not isinstance(k, str)]
        if bad_names:
            raise StateDictError(f"state dict names must be strings, got {bad_names[0]!r}")
        params = dict(self.named_parameters())
        if strict:
            missing = sorted(set(params) - set(state))
            unexpected = sorted(set(state) - set(params))
            if missing or unexpected:
                raise StateDictError(
                    f"state dict does not match {type(self).__name__}: missing {missing}, "
                    f"unexpected {unexpected}; pass strict=False to load the overlap"
                )
        plan = []
        for name, value in state.items():
            if name not in params:
                continue
            p = params[name]
            key = f"state dict entry {name!r}"
            plan.append((p, state_array(value, key, resolve_dtype(p.dtype), p.shape)))
        return plan

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        children = [
            f"  ({name}): " + repr(m).replace("\n", "\n  ")
            for name, m in self._members()
            if isinstance(m, Module)
        ]
        head = f"{type(self).__name__}({self.extra_repr()}"
        return head + ("\n" + "\n".join(children) + "\n)" if children else ")")
