"""TensorData: a flat storage buffer seen through a shape, element strides and an offset.

Views (permute, transpose, expand, view/reshape of contiguous data) share the storage and
never copy. Backends read a TensorData either as a numpy strided view (``.array``) or as
its raw parts (``storage``, ``shape``, ``strides``, ``offset``) for kernel index maths.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

SUPPORTED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
DEFAULT_DTYPE = np.dtype(np.float32)


@lru_cache(maxsize=1024)
def _contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides = []
    step = 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major element strides for ``shape``."""
    return _contiguous_strides(tuple(shape))


def normalize_dim(dim: int, ndim: int, what: str = "dim") -> int:
    """Map a possibly negative ``dim`` into ``range(ndim)`` or raise IndexError naming it."""
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{what} must be an int, got {dim!r}")
    span = max(ndim, 1)
    if not -span <= dim < span:
        raise IndexError(
            f"{what} {dim} is out of range for a tensor with {ndim} dimension(s): "
            f"expected a value in [{-span}, {span - 1}]"
        )
    return int(dim) % span


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The numpy broadcast of ``shapes``, or ValueError naming the shapes that clash."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(-ndim, 0):
        sizes = {s[axis] for s in shapes if len(s) >= -axis} - {1}
        if len(sizes) > 1:
            listed = " and ".join(str(tuple(s)) for s in shapes)
            raise ValueError(
                f"shapes {listed} cannot be broadcast together: dimension {axis} has sizes "
                f"{sorted(sizes)}; each pair must be equal or one of them 1"
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


class TensorData:
    """Storage (1-D numpy array) + shape + element strides + element offset."""

    # ``storage`` and ``strides`` of an op's result (``from_array``) are made on first read:
    # most results are only ever read as ``.array``.
    __slots__ = ("_storage", "shape", "_strides", "offset", "_array")

    def __init__(
        self,
        storage: np.ndarray,
        shape: Sequence[int],
        strides: Sequence[int] | None = None,
        offset: int = 0,
    ) -> None:
        if not isinstance(storage, np.ndarray) or storage.ndim != 1:
            raise TypeError("TensorData storage must be a 1-D numpy array")
        self._storage = storage
        self.shape = tuple(int(s) for s in shape)
        self._strides = contiguous_strides(self.shape) if strides is None else tuple(strides)
        self.offset = int(offset)
        self._array: np.ndarray | None = None
        if len(self.strides) != len(self.shape):
            raise ValueError(f"strides {self.strides} do not match shape {self.shape}")

    # --- construction -------------------------------------------------------------

    @classmethod
    def from_array(cls, array: np.ndarray) -> TensorData:
        """Wrap a numpy array (no copy when it is C-contiguous)."""
        if not isinstance(array, np.ndarray):
            array = np.asarray(array)
        if not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)
        # Direct slot writes: this is the hot path of every op's result.
        data = cls.__new__(cls)
        data._storage = None
        data.shape = array.shape
        data._strides = None
        data.offset = 0
        data._array = array
        return data

    @classmethod
    def _trusted(
        cls, storage: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...], offset: int
    ) -> TensorData:
        """A view whose parts are already known to fit (no check): for the layers below the API."""
        data = cls.__new__(cls)
        data._storage = storage
        data.shape = shape
        data._strides = strides
        data.offset = offset
        data._array = None
        return data

    @classmethod
    def zeros(cls, shape: Sequence[int], dtype=DEFAULT_DTYPE) -> TensorData:
        """A new zero-filled contiguous TensorData."""
        return cls.from_array(np.zeros(tuple(shape), dtype=dtype))

    # --- properties ---------------------------------------------------------------

    @property
    def storage(self) -> np.ndarray:
        """The flat 1-D buffer the elements live in."""
        if self._storage is None:
            self._storage = self._array.reshape(-1)  # C-contiguous (from_array): a view
        return self._storage

    @property
    def strides(self) -> tuple[int, ...]:
        """Element strides of each dimension."""
        if self._strides is None:
            self._strides = _contiguous_strides(self.shape)
        return self._strides

    @property
    def dtype(self) -> np.dtype:
        array = self._array  # from_array's results hold it; views hold their storage
        return (array if array is not None else self._storage).dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def array(self) -> np.ndarray:
        """This data as a numpy strided view of the storage (no copy)."""
        if self._array is None:
            item = self.storage.itemsize
            if self.size == 0:
                self._array = np.empty(self.shape, dtype=self.dtype)
            else:
                self._array = np.ndarray(
                    self.shape,
                    self.dtype,
                    buffer=self.storage,
                    offset=self.offset * item,
                    strides=tuple(s * item for s in self.strides),
                )
        return self._array

    def is_contiguous(self) -> bool:
        """True when the elements lie row-major and densely in storage."""
        if self._strides is None:
            return True  # from_array's result, row-major by construction
        expected = 1
        for size, stride in zip(reversed(self.shape), reversed(self.strides)):
            if size != 1 and stride != expected:
                return False
            expected *= size
        return True

    # --- views ----------------------------------------------------------------------

    def permute(self, *order: int) -> TensorData:
        """Reorder the dimensions; ``order`` must be a permutation of ``range(ndim)``."""
        if len(order) == 1 and isinstance(order[0], (tuple, list)):
            order = tuple(order[0])
        dims = tuple(normalize_dim(d, self.ndim, "permute dim") for d in order)
        if sorted(dims) != list(range(self.ndim)):
            raise ValueError(
                f"permute order {tuple(order)} is not a permutation of the {self.ndim} "
                f"dimensions of shape {self.shape}"
            )
        return self.permuted(dims)

    def permuted(self, dims: Sequence[int]) -> TensorData:
        """``permute`` for ``dims`` already checked to be a permutation of ``range(ndim)``."""
        shape, strides = self.shape, self.strides
        data = TensorData._trusted(
            self.storage, tuple([shape[d] for d in dims]), tuple([strides[d] for d in dims]), self.offset
        )
        if self._array is not None:
            data._array = self._array.transpose(dims)  # cheaper than building the view from storage
        return data

    def transpose(self, dim0: int = -2, dim1: int = -1) -> TensorData:
        """Swap two dimensions."""
        a = normalize_dim(dim0, self.ndim)
        b = normalize_dim(dim1, self.ndim)
        order = list(range(self.ndim))
        order[a], order[b] = order[b], order[a]
        return self.permuted(order)

    def expand(self, shape: Sequence[int]) -> TensorData:
        """Broadcast to ``shape`` with stride-0 dims (no copy)."""
        shape = tuple(int(s) for s in shape)
        if broadcast_shapes(self.shape, shape) != shape:
            raise ValueError(f"cannot expand shape {self.shape} to {shape}")
        return self.expanded(shape)

    def expanded(self, shape: tuple[int, ...]) -> TensorData:
        """``expand`` for a ``shape`` already known to be a broadcast of this one."""
        lead = len(shape) - len(self.shape)
        strides = [0] * lead
        for size, own, stride in zip(shape[lead:], self.shape, self.strides):
            strides.append(stride if own == size else 0)
        return TensorData._trusted(self.storage, shape, tuple(strides), self.offset)

    def view(self, *shape: int) -> TensorData:
        """Same elements under a new shape: a view when contiguous, else a copy first."""
        return self.reshaped(infer_shape(shape, self.size, self.shape))

    def reshaped(self, shape: tuple[int, ...]) -> TensorData:
        """``view`` for a ``shape`` already checked (by ``infer_shape``) to hold this many elements."""
        data = self if self.is_contiguous() else self.contiguous()
        out = TensorData._trusted(data.storage, shape, _contiguous_strides(shape), data.offset)
        array = data._array
        if array is not None and array.flags.c_contiguous:
            out._array = array.reshape(shape)  # of C-contiguous memory: a view, never a copy
        return out

    reshape = view

    def contiguous(self) -> TensorData:
        """Self when already contiguous, otherwise a row-major copy."""
        if self.is_contiguous():
            return self
        return TensorData.from_array(np.ascontiguousarray(self.array))

    def copy(self) -> TensorData:
        """A fresh contiguous copy that shares nothing with this storage."""
        return TensorData.from_array(np.array(self.array, copy=True, order="C"))

    def __repr__(self) -> str:
        return (
            f"TensorData(shape={self.shape}, strides={self.strides}, offset={self.offset}, "
            f"dtype={self.dtype})"
        )


def _is_size(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def shape_arguments(shape: Sequence, what: str) -> tuple[int, ...]:
    """Sizes passed as ``f(2, 3)`` or ``f((2, 3))`` as ints; TypeError naming a size that is not an int."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for size in shape:
        if not _is_size(size):
            raise TypeError(
                f"invalid {what} {tuple(shape)!r}: size {size!r} is a {type(size).__name__}, "
                f"sizes must be ints, e.g. (2, 3); convert with int() first"
            )
    return tuple(int(s) for s in shape)


def infer_shape(shape: Sequence, size: int, old_shape: Sequence[int]) -> tuple[int, ...]:
    """Resolve one ``-1`` in ``shape`` and check the element count matches ``size``."""
    if type(shape) is tuple and all(type(s) is int and s >= 0 for s in shape):
        # The common case, plain non-negative ints; anything else takes the full check below.
        if math.prod(shape) == size:
            return shape
    shape = shape_arguments(shape, "view shape")
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1 or any(s < -1 for s in shape):
        raise ValueError(f"invalid view shape {shape}: each size must be >= 0, with at most one -1")
    known = math.prod(s for s in shape if s != -1)
    mismatch = (
        f"view shape {shape} is invalid for a tensor of shape {tuple(old_shape)} ({size} elements): "
        f"the product of the size of each dim must be {size}"
    )
    if unknown:
        if known == 0 or size % known:
            raise ValueError(mismatch)
        shape = shape[: unknown[0]] + (size // known,) + shape[unknown[0] + 1 :]
    if math.prod(shape) != size:
        raise ValueError(mismatch)
    return shape
