"""Module and Parameter: parameter discovery, train/eval, state dicts, device moves."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..core.tensor import Tensor, _backend_for, resolve_dtype
from ..core.tensor_data import TensorData


class Parameter(Tensor):
    """A Tensor that a Module owns and an optimizer updates (requires_grad by default)."""

    def __init__(self, data: Any, requires_grad: bool = True, dtype: Any = None, device: Any = None):
        if isinstance(data, Tensor) and dtype is None and device is None:
            self._data = data._data
            self.backend = data.backend
            self.requires_grad = bool(requires_grad)
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
        for module in self.modules():
            module.training = bool(mode)
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
        backend = _backend_for(device)
        for p in self.parameters():
            p.backend = backend
        return self

    # --- state --------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, np.ndarray]:
        """Parameter values by dotted name (copies)."""
        return {name: p.numpy() for name, p in self.named_parameters()}

    def load_state_dict(self, state: Mapping[str, Any], strict: bool = True) -> None:
        """Copy values into the parameters, checking names and shapes."""
        params = dict(self.named_parameters())
        if strict:
            missing = sorted(set(params) - set(state))
            unexpected = sorted(set(state) - set(params))
            if missing or unexpected:
                raise KeyError(
                    f"state dict does not match {type(self).__name__}: missing {missing}, "
                    f"unexpected {unexpected}; pass strict=False to load the overlap"
                )
        for name, value in state.items():
            if name not in params:
                continue
            p = params[name]
            array = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
            if array.shape != p.shape:
                raise ValueError(f"state dict entry {name!r} has shape {array.shape}, expected {p.shape}")
            p._data = TensorData.from_array(np.array(array, dtype=resolve_dtype(p.dtype), copy=True))

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
