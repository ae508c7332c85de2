"""Bounded reads and pickle-free writes of checkpoint archives (a zip of ``.npy`` members, as ``np.savez``).

Reading never trusts the file: the zip directory (names, sizes, flags) and each member's npy
header are checked before any array data is decompressed, each member is decompressed to at
most the size its header declares, and every way a file can be damaged becomes a
``CheckpointError``. Only numeric and string arrays are read or written; pickles never.
"""

from __future__ import annotations

import os
import stat
import struct
import tokenize
import zipfile
import zlib
from collections.abc import Mapping
from typing import BinaryIO

import numpy as np
from numpy.lib import format as npy_format

from ..nn.module import StateDictError
from .atomic import file_kind

MEMBER_SUFFIX = ".npy"
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
_ENCRYPTED = 0x1  # general-purpose flag bit 0 of a zip entry
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
_HEADER_READERS = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}
# What a damaged archive raises inside zipfile, zlib and numpy's npy reader (a broken header
# reaches tokenize and ast; a huge declared shape, MemoryError; an encrypted entry, RuntimeError).
_DAMAGE = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    EOFError,
    struct.error,
    NotImplementedError,
    ValueError,
    SyntaxError,
    tokenize.TokenError,
    OverflowError,
    MemoryError,
    RuntimeError,
    OSError,
)


class CheckpointError(StateDictError):
    """A checkpoint file that cannot be loaded (unreadable, damaged, or not matching); nothing was changed."""


def damaged(name: str, err: Exception | str) -> CheckpointError:
    """The error for a file that is damaged, truncated or crafted; ``err`` says what was found."""
    why = err if isinstance(err, str) else f"{type(err).__name__}: {err}"
    return CheckpointError(
        f"{name!r} is damaged or truncated and cannot be read ({why}); "
        f"load an earlier checkpoint or save again"
    )


def open_regular(name: str) -> BinaryIO:
    """``name`` opened for reading, refused at once unless it is a regular file (never blocks on a FIFO)."""
    mode = os.stat(name).st_mode
    if not stat.S_ISREG(mode):
        raise CheckpointError(
            f"{name!r} is {file_kind(mode)}, not a checkpoint file: pass the path of a checkpoint file"
        )
    # O_NONBLOCK: a FIFO put in the file's place after the stat must not block the open.
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise CheckpointError(
            f"{name!r} is {file_kind(mode)}, not a checkpoint file: pass the path of a checkpoint file"
        )
    return os.fdopen(fd, "rb")


class CheckpointArchive:
    """An open checkpoint file whose zip directory has been checked; members are read on request.

    Refused at once (CheckpointError): a special file, a single ``.npy``, anything that is not a
    zip, a damaged directory, a name given twice, an encrypted or oddly compressed member, a
    member that is not ``<key>.npy``.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.name = os.fspath(path)
        self._handle = open_regular(self.name)
        try:
            self._zip = self._open_zip()
            self.members = self._check_directory()
        except BaseException:
            self._handle.close()
            raise

    def __enter__(self) -> CheckpointArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the zip and the file."""
        self._zip.close()
        self._handle.close()

    def _open_zip(self) -> zipfile.ZipFile:
        head = self._handle.read(6)
        if head.startswith(_NPY_MAGIC):
            raise CheckpointError(
                f"{self.name!r} is a single .npy array, not a checkpoint: write checkpoints with "
                f"torchlight.optim.save_checkpoint"
            )
        if not head.startswith(_ZIP_MAGICS):
            raise CheckpointError(
                f"{self.name!r} is not a checkpoint (.npz) file (it starts with {head!r}): write "
                f"checkpoints with torchlight.optim.save_checkpoint"
            )
        self._handle.seek(0)
        try:
            return zipfile.ZipFile(self._handle)
        except _DAMAGE as err:
            raise damaged(self.name, err) from None

    def _check_directory(self) -> dict[str, zipfile.ZipInfo]:
        members: dict[str, zipfile.ZipInfo] = {}
        for info in self._zip.infolist():
            where = f"its member {info.filename!r}"
            if not info.filename.endswith(MEMBER_SUFFIX):
                raise damaged(self.name, f"{where} is not a .npy array")
            key = info.filename[: -len(MEMBER_SUFFIX)]
            if key in members:
                raise damaged(self.name, f"{where} appears twice")
            if info.flag_bits & _ENCRYPTED:
                raise damaged(self.name, f"{where} is encrypted")
            if info.compress_type not in _METHODS:
                raise damaged(self.name, f"{where} uses zip compression method {info.compress_type}")
            members[key] = info
        return members

    def declared_size(self, key: str) -> int:
        """The uncompressed size the zip directory declares for ``key`` (nothing is read)."""
        return self.members[key].file_size

    def _member(self, key: str) -> BinaryIO:
        return self._zip.open(self.members[key])

    def header(self, key: str) -> tuple[tuple[int, ...], np.dtype]:
        """``(shape, dtype)`` of ``key`` from its npy header alone; CheckpointError unless it is consistent.

        Only the header bytes are decompressed. The header must be a valid npy 1.0/2.0 header of
        a dtype that holds no Python objects, and the data it declares must fill the rest of the
        member exactly.
        """
        info = self.members[key]
        try:
            with self._member(key) as member:
                version = npy_format.read_magic(member)
                reader = _HEADER_READERS.get(version)
                if reader is None:
                    raise ValueError(f"npy format version {version} is not supported")
                shape, _, dtype = reader(member)
                data_start = member.tell()
        except _DAMAGE as err:
            raise damaged(
                self.name, f"the header of {info.filename!r}: {type(err).__name__}: {err}"
            ) from None
        if dtype.hasobject:
            raise CheckpointError(
                f"{self.name!r} holds pickled Python objects (object arrays), which are never loaded: "
                f"a checkpoint holds numeric arrays only; write it with torchlight.optim.save_checkpoint"
            )
        count = 1
        for n in shape:
            count *= n
        data_bytes = count * dtype.itemsize
        if data_start + data_bytes != info.file_size:
            raise damaged(
                self.name,
                f"{info.filename!r} declares a {dtype} array of shape {shape} ({data_bytes} bytes) "
                f"but holds {info.file_size - data_start} bytes of data",
            )
        return shape, dtype

    def read(self, key: str) -> np.ndarray:
        """The array ``key``, decompressed to at most its declared size, CRC-checked (no pickles)."""
        try:
            with self._member(key) as member:
                array = npy_format.read_array(member, allow_pickle=False)
                if member.read(1):  # also reaches the end of the member, where zipfile checks the CRC
                    raise ValueError("data after the array")
        except _DAMAGE as err:
            raise damaged(self.name, f"{self.members[key].filename!r}: {type(err).__name__}: {err}") from None
        return array


def _check_writable(key: str, array: np.ndarray) -> np.ndarray:
    if array.dtype.hasobject:
        raise TypeError(
            f"checkpoint entry {key!r} holds Python objects (dtype {array.dtype}), which a checkpoint "
            f"never stores (no pickles): save numeric arrays only"
        )
    return array


def write_archive(handle: BinaryIO, arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``arrays`` to ``handle`` as an uncompressed ``.npz`` that ``np.load`` reads; never pickles."""
    checked = {key: _check_writable(key, np.asarray(value)) for key, value in arrays.items()}
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for key, array in checked.items():
            with archive.open(key + MEMBER_SUFFIX, "w", force_zip64=True) as member:
                npy_format.write_array(member, array, allow_pickle=False)
