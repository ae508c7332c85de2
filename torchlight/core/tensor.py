"""Tensor: TensorData + a backend + autograd history, with the user-facing operators.

Dtypes: float32 by default, float64 on request. Mixing them promotes like numpy
(float32 with float64 gives float64); a Python scalar takes the tensor's dtype.
Comparisons return 1.0/0.0 in the operands' dtype and carry no gradient.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import functions as F
from .autograd import backward as _run_backward
from .backend_lookup import backend_for
from .checks import check_flag, check_held_by, check_real, is_bool
from .device import Device
from .tensor_data import DEFAULT_DTYPE, SUPPORTED_DTYPES, TensorData, infer_shape, normalize_dim

if TYPE_CHECKING:
    from ..backends.base import Backend

DTypeLike = Any
_DTYPE_NAMES = {"float32": np.float32, "float64": np.float64, "float": np.float32, "double": np.float64}


def resolve_dtype(dtype: DTypeLike) -> np.dtype:
    """float32 for None; float32/float64 by numpy type, dtype or name; TypeError otherwise."""
    if dtype is None:
        return DEFAULT_DTYPE
    try:
        resolved = np.dtype(_DTYPE_NAMES.get(dtype, dtype) if isinstance(dtype, str) else dtype)
    except (TypeError, ValueError, SyntaxError):  # numpy parses strings: "01" is a SyntaxError
        resolved = None
    # ``None in SUPPORTED_DTYPES`` is True (numpy reads None as float64): test it explicitly.
    if resolved is None or resolved not in SUPPORTED_DTYPES:
        raise TypeError(f"unsupported dtype {dtype!r}: torchlight tensors are float32 (default) or float64")
    return resolved


_NUMERIC_KINDS = "biuf"  # bool, signed and unsigned integers, floats
_KIND_FIXES = {
    "U": "convert the strings to numbers first, e.g. numpy.asarray(values, dtype=float)",
    "S": "convert the bytes to numbers first, e.g. numpy.asarray(values, dtype=float)",
    "c": "pass the real part (values.real) or the magnitude (abs(values)) explicitly",
    "V": "pass one numeric field of the structured array, e.g. values['x']",
    "M": "pass numbers, e.g. (values - values[0]) / numpy.timedelta64(1, 's')",
    "m": "pass numbers, e.g. values / numpy.timedelta64(1, 's')",
}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _refuse_kind(array: np.ndarray, data: Any, what: str) -> None:
    kind = array.dtype.kind
    if kind in _NUMERIC_KINDS:
        return
    if kind == "O":
        values = list(array.reshape(-1))
        bad_ones = [v for v in values if not isinstance(v, numbers.Real) or isinstance(v, np.ndarray)]
        if values and not bad_ones:
            return  # Python ints/floats (e.g. an int too large for int64): converted below
        bad = bad_ones[0] if bad_ones else data
        if isinstance(bad, Tensor):
            fix = "pass one tensor, or the values as numbers (t.numpy() or t.tolist())"
        elif bad is None:
            fix = "every element must be a number; replace None with float('nan') if it means missing"
        else:
            fix = "pass numbers, nested lists of numbers, or a numeric numpy array"
        raise TypeError(
            f"{what} got {_short(data)}: element {_short(bad)} of type {type(bad).__name__} "
            f"is not a real number; {fix}"
        )
    fix = _KIND_FIXES.get(kind, "pass a numeric (bool, int or float) array")
    raise TypeError(
        f"{what} got {_short(data)} of dtype {array.dtype}: torchlight holds real numbers only; {fix}"
    )


def as_float_array(data: Any, dtype: np.dtype, what: str) -> np.ndarray:
    """A new C-contiguous ``dtype`` array of ``data``, refusing non-numbers and float overflow."""
    if data is None:
        raise TypeError(f"{what} got None: pass a number, a nested list of numbers or a numpy array")
    if isinstance(data, (str, bytes, dict, set, frozenset)):
        raise TypeError(
            f"{what} got {type(data).__name__} {_short(data)}: pass a number, a nested list of numbers "
            f"or a numpy array (convert strings with float())"
        )
    try:
        source = np.asarray(data)
    except (ValueError, TypeError) as err:
        raise ValueError(
            f"{what} got {_short(data)}, which is not a rectangular array of numbers ({err}); "
            f"every nested list must have the same length"
        ) from None
    _refuse_kind(source, data, what)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            array = np.array(source, dtype=dtype, copy=True, order="C")
    except (OverflowError, ValueError, TypeError) as err:
        raise ValueError(f"{what} got {_short(data)}, which does not fit {dtype} ({err})") from None
    if array.size and (source.dtype.kind == "O" or source.dtype.itemsize > dtype.itemsize):
        overflow = np.isinf(array) & ~np.isinf(np.asarray(source, dtype=np.float64))
        if overflow.any():
            first = source.reshape(-1)[int(np.flatnonzero(overflow.reshape(-1))[0])]
            raise ValueError(
                f"{what} got {_short(data)}: value {float(first)!r} overflows {dtype} (largest "
                f"{np.finfo(dtype).max:.4g}); pass dtype='float64' or scale the values"
            )
    return array


def check_device_or_dtype(target: str) -> None:
    """Raise a clear error when ``target`` is neither a device string nor a supported dtype name."""
    try:
        Device(target)
        return
    except ValueError as err:
        device_error = err
    try:
        np.dtype(target)
    except (TypeError, ValueError, SyntaxError):
        raise ValueError(
            f"{target!r} is neither a device nor a dtype: {device_error}; dtypes are 'float32' or 'float64'"
        ) from None
    raise TypeError(
        f"unsupported dtype {target!r}: torchlight tensors are float32 (default) or float64; "
        f"use .to('float32') or .to('float64')"
    )


# The lookup (the registry's get_backend) is installed by the package init: core never imports
# backends/. One name for it here, for creation.py and nn.
_backend_for: Callable[[Any], Backend] = backend_for


class Tensor:
    """An n-dimensional array on a backend, with reverse-mode autograd."""

    __slots__ = ("_data", "backend", "requires_grad", "grad", "_node", "__weakref__")
    __array_priority__ = 1000  # numpy scalars on the left defer to Tensor's reflected ops

    def __init__(self, data: Any, dtype: DTypeLike = None, device: Any = None, requires_grad: bool = False):
        if isinstance(data, Tensor):
            data = data._data.array
        if isinstance(data, np.ndarray) and dtype is None and data.dtype in SUPPORTED_DTYPES:
            dtype = data.dtype
        array = as_float_array(data, resolve_dtype(dtype), "tl.tensor")
        self._data = TensorData.from_array(array)
        self.backend = _backend_for(device)
        self.requires_grad = check_flag(requires_grad, "requires_grad")
        self.grad: Tensor | None = None
        self._node = None

    @classmethod
    def _wrap(cls, data: TensorData, backend: Backend, requires_grad: bool = False) -> Tensor:
        out = cls.__new__(cls)
        out._data = data
        out.backend = backend
        out.requires_grad = requires_grad
        out.grad = None
        out._node = None
        return out

    # --- properties ---------------------------------------------------------------------

    @property
    def data(self) -> TensorData:
        """The underlying TensorData (storage, shape, strides)."""
        return self._data

    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        """Number of elements."""
        return self._data.size

    @property
    def device(self) -> Device:
        return self.backend.device

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # --- conversion ---------------------------------------------------------------------

    def numpy(self) -> np.ndarray:
        """A numpy copy of the values."""
        return np.array(self._data.array, copy=True)

    def item(self) -> float:
        """The single value of a one-element tensor as a Python float."""
        if self.size != 1:
            raise ValueError(f"item() needs a tensor with one element, got shape {self.shape}")
        return float(self._data.array.reshape(-1)[0])

    def tolist(self) -> Any:
        return self._data.array.tolist()

    def to(self, target: Any) -> Tensor:
        """A copy on another device/backend, or in another dtype (float32/float64)."""
        if target is None:
            raise TypeError("to() needs a device ('cpu', 'cuda') or a dtype ('float32', 'float64'), got None")
        if isinstance(target, str) and target in _DTYPE_NAMES or isinstance(target, (type, np.dtype)):
            dtype = resolve_dtype(target)
            return self if dtype == self.dtype else F.Cast.apply(self, dtype=dtype)
        if isinstance(target, str):
            check_device_or_dtype(target)
        backend = _backend_for(target)
        if backend is self.backend:
            return self
        return F.MoveTo.apply(self, backend=backend)

    def float(self) -> Tensor:
        return self.to(np.float32)

    def double(self) -> Tensor:
        return self.to(np.float64)

    def detach(self) -> Tensor:
        """The same values, cut from the history (shares storage)."""
        return Tensor._wrap(self._data, self.backend)

    def requires_grad_(self, flag: bool = True) -> Tensor:
        """Set ``requires_grad`` in place (True or False); returns self."""
        self.requires_grad = check_flag(flag, "requires_grad", "requires_grad_:")
        return self

    def zero_grad(self) -> None:
        """Drop the accumulated gradient."""
        self.grad = None

    def backward(self, grad: Tensor | None = None) -> None:
        """Accumulate gradients into every leaf this tensor depends on."""
        _run_backward(self, grad)

    def _accumulate(self, grad: TensorData) -> None:
        if self.grad is None:
            self.grad = Tensor._wrap(grad.copy(), self.backend)
        else:
            self.grad = Tensor._wrap(self.backend.add(self.grad._data, grad), self.backend)

    # --- operand lifting ------------------------------------------------------------------

    def _lift(self, other: Any) -> Tensor:
        if isinstance(other, Tensor):
            return other
        if type(other) is float or type(other) is int:  # the hot case: a Python scalar
            return Tensor._wrap(TensorData.from_array(np.array(other, dtype=self.dtype)), self.backend)
        if isinstance(other, (numbers.Real, np.ndarray, np.generic)) and not isinstance(other, bool):
            array = np.asarray(other)
            _refuse_kind(array, other, "a Tensor operand")
            dtype = array.dtype if array.ndim and array.dtype in SUPPORTED_DTYPES else self.dtype
            return Tensor._wrap(TensorData.from_array(np.asarray(array, dtype=dtype)), self.backend)
        if isinstance(other, bool):
            return self._lift(float(other))
        raise TypeError(f"cannot combine a Tensor with {type(other).__name__} {other!r}")

    # --- arithmetic -----------------------------------------------------------------------

    def __add__(self, other):
        return F.Add.apply(self, self._lift(other))

    def __radd__(self, other):
        return F.Add.apply(self._lift(other), self)

    def __sub__(self, other):
        return F.Sub.apply(self, self._lift(other))

    def __rsub__(self, other):
        return F.Sub.apply(self._lift(other), self)

    def __mul__(self, other):
        return F.Mul.apply(self, self._lift(other))

    def __rmul__(self, other):
        return F.Mul.apply(self._lift(other), self)

    def __truediv__(self, other):
        return F.Div.apply(self, self._lift(other))

    def __rtruediv__(self, other):
        return F.Div.apply(self._lift(other), self)

    def __neg__(self):
        return F.Neg.apply(self)

    def __pos__(self):
        return self

    def __pow__(self, exponent):
        if isinstance(exponent, Tensor) or is_bool(exponent) or not isinstance(exponent, numbers.Real):
            raise TypeError(
                f"** needs a Python number exponent, got {type(exponent).__name__} {_short(exponent)}; "
                f"for a tensor exponent use (y * x.log()).exp()"
            )
        return F.Pow.apply(self, exponent=float(exponent))

    def __matmul__(self, other):
        return self.matmul(other)

    def __rmatmul__(self, other):
        return self._lift(other).matmul(self)

    # --- comparisons ------------------------------------------------------------------------

    def __lt__(self, other):
        return F.Lt.apply(self, self._lift(other))

    def __gt__(self, other):
        return F.Gt.apply(self, self._lift(other))

    def __eq__(self, other):  # type: ignore[override]
        return F.Eq.apply(self, self._lift(other))

    def __le__(self, other):
        return 1.0 - F.Gt.apply(self, self._lift(other))

    def __ge__(self, other):
        return 1.0 - F.Lt.apply(self, self._lift(other))

    def __ne__(self, other):  # type: ignore[override]
        return 1.0 - F.Eq.apply(self, self._lift(other))

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                f"the truth value of a tensor of shape {self.shape} is ambiguous: "
                f"reduce it first (e.g. .sum() or .max())"
            )
        return bool(self.item())

    # --- elementwise functions ------------------------------------------------------------------

    def exp(self) -> Tensor:
        return F.Exp.apply(self)

    def log(self) -> Tensor:
        return F.Log.apply(self)

    def sigmoid(self) -> Tensor:
        return F.Sigmoid.apply(self)

    def relu(self) -> Tensor:
        return F.Relu.apply(self)

    def tanh(self) -> Tensor:
        return F.Tanh.apply(self)

    # --- reductions ---------------------------------------------------------------------------

    def _reduce(self, function: type, dim: int | None, keepdim: bool) -> Tensor:
        check_flag(keepdim, "keepdim")
        if dim is None:
            if function is F.Sum:  # the flat view, the sum and the result's view as one op
                return F.SumAll.apply(self, shape=(1,) * self.ndim if keepdim else ())
            flat = self._reshaped((self.size,))
            out = function.apply(flat, dim=0)
            return out._reshaped((1,) * self.ndim if keepdim else ())
        dim = normalize_dim(dim, self.ndim)
        if self.ndim == 0:
            return function.apply(self._reshaped((1,)), dim=0)._reshaped(())
        out = function.apply(self, dim=dim)
        return out if keepdim else out._reshaped(self.shape[:dim] + self.shape[dim + 1 :])

    def sum(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """Sum over ``dim`` (all elements when None)."""
        return self._reduce(F.Sum, dim, keepdim)

    def mean(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """Mean over ``dim`` (all elements when None)."""
        check_flag(keepdim, "keepdim")
        if dim is None or self.ndim == 0:
            count = self.size
        else:
            count = self.shape[normalize_dim(dim, self.ndim)]
        total = self.sum(dim, keepdim)
        return total * (1.0 / count) if count else total / 0.0

    def max(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """Max over ``dim`` (all elements when None); ties share the gradient equally."""
        if self.size == 0 and (dim is None or self.shape[normalize_dim(dim, self.ndim)] == 0):
            raise ValueError(f"max() of an empty tensor (shape {self.shape}) has no value")
        return self._reduce(F.Max, dim, keepdim)

    def min(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
        """Min over ``dim`` (all elements when None); ties share the gradient equally."""
        if self.size == 0 and (dim is None or self.shape[normalize_dim(dim, self.ndim)] == 0):
            raise ValueError(f"min() of an empty tensor (shape {self.shape}) has no value")
        return -((-self).max(dim, keepdim))

    # --- linear algebra -----------------------------------------------------------------------------

    def matmul(self, other: Tensor) -> Tensor:
        """Matrix product; batch dims broadcast; 1-D operands act as a row / column vector."""
        other = self._lift(other)
        a, b = self, other
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul needs at least 1-D operands, got shapes {a.shape} and {b.shape}")
        squeeze = []
        if a.ndim == 1:
            a = a.view(1, a.shape[0])
            squeeze.append(-2)
        if b.ndim == 1:
            b = b.view(b.shape[0], 1)
            squeeze.append(-1)
        out = F.MatMul.apply(a, b)
        if squeeze:
            shape = list(out.shape)
            for axis in sorted(squeeze):
                shape.pop(len(shape) + axis)
            out = out.view(*shape)
        return out

    # --- views ------------------------------------------------------------------------------------

    def permute(self, *order: int) -> Tensor:
        """Reorder dimensions (a view)."""
        if len(order) == 1 and isinstance(order[0], (tuple, list)):
            order = tuple(order[0])
        ndim = self.ndim
        dims = tuple(normalize_dim(d, ndim, "permute dim") for d in order)
        if sorted(dims) != list(range(ndim)):
            self._data.permute(*dims)  # raises naming the order and the shape
        return F.Permute.apply(self, order=dims)

    def transpose(self, dim0: int = -2, dim1: int = -1) -> Tensor:
        """Swap two dimensions (a view)."""
        order = list(range(self.ndim))
        a, b = normalize_dim(dim0, self.ndim), normalize_dim(dim1, self.ndim)
        order[a], order[b] = order[b], order[a]
        return self.permute(*order)

    @property
    def T(self) -> Tensor:
        """The last two dimensions swapped."""
        return self.transpose(-2, -1)

    def view(self, *shape: int) -> Tensor:
        """Same elements in a new shape (one -1 allowed); copies only non-contiguous data."""
        shape = infer_shape(shape, self.size, self.shape)
        if shape == self.shape:
            return self
        return F.View.apply(self, shape=shape)

    reshape = view

    def _reshaped(self, shape: tuple[int, ...]) -> Tensor:
        """``view`` for a shape made here from this tensor's own, already right: no check again."""
        return self if shape == self._data.shape else F.View.apply(self, shape=shape)

    def contiguous(self) -> Tensor:
        return self if self._data.is_contiguous() else F.Contiguous.apply(self)

    def unsqueeze(self, dim: int) -> Tensor:
        """Insert a size-1 dimension at ``dim``."""
        dim = normalize_dim(dim, self.ndim + 1)
        return self.view(*self.shape[:dim], 1, *self.shape[dim:])

    def squeeze(self, dim: int) -> Tensor:
        """Remove dimension ``dim`` (it must have size 1)."""
        dim = normalize_dim(dim, self.ndim)
        if self.shape[dim] != 1:
            raise ValueError(f"cannot squeeze dim {dim} of shape {self.shape}: its size is not 1")
        return self.view(*self.shape[:dim], *self.shape[dim + 1 :])

    # --- softmax family and fused ops ---------------------------------------------------------------

    def softmax(self, dim: int = -1) -> Tensor:
        """Softmax along ``dim`` (max-subtracted, stable for large logits)."""
        return F.Softmax.apply(self, dim=self._softmax_dim(dim))

    def log_softmax(self, dim: int = -1) -> Tensor:
        """Log-softmax along ``dim`` (stable log-sum-exp)."""
        return F.LogSoftmax.apply(self, dim=self._softmax_dim(dim))

    def _softmax_dim(self, dim: int) -> int:
        if self.ndim == 0:
            raise ValueError("softmax of a 0-d tensor: view it as shape (1,) first")
        return normalize_dim(dim, self.ndim)

    def layer_norm(self, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
        """Fused layer norm over the last dim with scale ``gamma`` and shift ``beta``."""
        eps = check_real(eps, "eps", "layer_norm", 0.0, np.inf, low_open=True)
        eps = check_held_by(eps, self.dtype, "eps", "layer_norm")
        return self._layer_norm(gamma, beta, eps)

    def _layer_norm(self, gamma: Tensor, beta: Tensor, eps: float) -> Tensor:
        """``layer_norm`` for an ``eps`` already checked (by ``nn.functional.layer_norm``)."""
        gamma = self._operand(gamma, "gamma", "layer_norm")
        beta = self._operand(beta, "beta", "layer_norm")
        return F.LayerNorm.apply(self, gamma, beta, eps=eps)

    def _operand(self, value: Any, name: str, owner: str) -> Tensor:
        """``value`` lifted like an operator's operand, or TypeError naming ``name``."""
        if isinstance(value, Tensor):
            return value
        if is_bool(value) or not isinstance(value, (numbers.Real, np.ndarray, np.generic)):
            raise TypeError(
                f"{owner} {name} must be a Tensor (or a numpy array), got {type(value).__name__} "
                f"{_short(value)}; wrap it with tl.tensor({name})"
            )
        return self._lift(value)

    def attn_softmax(self, mask: Tensor | None = None, causal: bool = False) -> Tensor:
        """Fused softmax over the last dim of ``[batch, heads, q_len, k_len]`` scores.

        ``mask`` is additive (0 keeps a key, ``-inf`` excludes it) and broadcasts to the scores:
        ``[batch, k_len]`` is key padding (as PyTorch's ``key_padding_mask``), other ranks align
        from the right (``[k_len]``, ``[batch, 1, 1, k_len]``, ``[1, 1, q_len, k_len]``, ...); its
        dtype promotes with the scores' as in ``x + mask``. ``causal`` excludes keys after the
        query position, aligned top-left (query q sees keys 0..q). Fully excluded rows give zeros.
        """
        causal = check_flag(causal, "causal", "attn_softmax")
        if mask is None:
            return F.AttnSoftmax.apply(self, causal=causal)
        return F.AttnSoftmax.apply(self, self._attn_mask(mask), causal=causal)

    def _attn_mask(self, mask: Any) -> Tensor:
        """An additive float mask as a Tensor; TypeError for booleans, integers and other kinds."""
        if isinstance(mask, Tensor):
            return mask
        if isinstance(mask, np.ndarray) and mask.dtype.kind == "f":
            return self._lift(mask)
        kind = f"dtype {mask.dtype}" if isinstance(mask, np.ndarray) else type(mask).__name__
        raise TypeError(
            f"attn_softmax mask must be an additive float mask (0 keeps a key, -inf excludes it) as a "
            f"Tensor or a float numpy array, got {kind}: a boolean or 0/1 keep-mask would be added as "
            f"1/0; convert it with numpy.where(keep, 0.0, -numpy.inf)"
        )

    # --- display ----------------------------------------------------------------------------------

    def __repr__(self) -> str:
        body = np.array2string(self._data.array, separator=", ", prefix="tensor(")
        extras = [f"device='{self.device}'"]
        if self.dtype != DEFAULT_DTYPE:
            extras.append(f"dtype={self.dtype}")
        if self.requires_grad:
            extras.append("requires_grad=True")
        return f"tensor({body}, {', '.join(extras)})"
