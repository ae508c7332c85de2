"""Checkpoint reads are bounded and never trust the file; saves never replace special files or pickle.

Each crafted archive is built here with ``zipfile``: a deflated 2 GiB member in a 2 MB file,
damaged headers of every kind, duplicate names, special files in the checkpoint's place and
step counts past int64. Every refusal must leave the model and the optimizer as they were.
"""

from __future__ import annotations

import os
import stat
import struct
import threading
import tracemalloc
import warnings
import zipfile
import zlib

import numpy as np
import pytest

import torchlight as tl
from torchlight import nn
from torchlight.optim import SGD, Adam, CheckpointError, load_checkpoint, read_checkpoint, save_checkpoint
from torchlight.optim.optimizers import MAX_STEPS

BOMB_ELEMENTS = 1 << 29  # float32: 2 GiB of zeros
CHUNK = bytes(1 << 20)


class Small(nn.Module):
    """Two parameters: a checkpoint of it holds a few hundred bytes."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(3, 4)

    def forward(self, x: tl.Tensor) -> tl.Tensor:
        return self.first(x)


def _trained(seed: int = 0, steps: int = 2):
    tl.manual_seed(seed)
    model = Small()
    opt = Adam(model.parameters(), lr=0.01)
    x = tl.randn(5, 3)
    for _ in range(steps):
        opt.zero_grad()
        (model(x) * model(x)).sum().backward()
        opt.step()
    return model, opt


def _snapshot(model, opt) -> dict:
    snap = {f"param {k}": v.copy() for k, v in model.state_dict().items()}
    snap.update({f"optim {k}": v for k, v in opt.state_dict().items()})
    return snap


def _assert_unchanged(before: dict, after: dict) -> None:
    assert before.keys() == after.keys()
    for key, value in before.items():
        np.testing.assert_array_equal(value, after[key], err_msg=key)
        assert value.dtype == after[key].dtype, key


def _refused_unchanged(path, *fragments: str) -> str:
    model, opt = _trained(seed=3, steps=3)
    before = _snapshot(model, opt)
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(path, model, opt)
    message = str(info.value)
    for fragment in (str(path), "nothing was loaded", *fragments):
        assert fragment in message, f"{message!r} does not say {fragment!r}"
    _assert_unchanged(before, _snapshot(model, opt))
    return message


def _npy_header(shape, descr: str = "<f4") -> bytes:
    """The bytes of a version 1.0 npy header declaring ``shape`` (no data)."""
    import io

    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": descr, "fortran_order": False, "shape": shape})
    return out.getvalue()


def _npz(path, members: dict[str, bytes], compression: int = zipfile.ZIP_STORED):
    """A zip of raw ``members`` (name -> bytes), in order; a name may repeat via a list of pairs."""
    items = members.items() if isinstance(members, dict) else members
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns about a repeated name
        with zipfile.ZipFile(path, "w", compression=compression) as archive:
            for name, data in items:
                archive.writestr(name, data)
    return path


def _good_members() -> dict[str, bytes]:
    """The members of a real checkpoint of ``Small`` with Adam, as raw bytes."""
    import io

    model, opt = _trained()
    out = {}
    arrays = {f"model/{k}": v for k, v in model.state_dict().items()}
    arrays.update({f"optim/{k}": v for k, v in opt.state_dict().items()})
    for key, array in arrays.items():
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, np.asarray(array), allow_pickle=False)
        out[key + ".npy"] = buffer.getvalue()
    return out


# --- a zip bomb -------------------------------------------------------------------------------------


class _RepeatingDeflate:
    """zlib deflate that ends every write with a full flush, so equal chunks give equal bytes.

    A full flush resets the compressor, so each 1 MiB of zeros compresses to the same ~1 KB:
    it is computed once and repeated, which builds a 2 GiB member in seconds, not minutes.
    """

    def __init__(self) -> None:
        self._real = zlib.compressobj(9, zlib.DEFLATED, -15)
        self._done: dict[bytes, bytes] = {}

    def compress(self, data: bytes) -> bytes:
        out = self._done.get(data)
        if out is None:
            out = self._done[data] = self._real.compress(data) + self._real.flush(zlib.Z_FULL_FLUSH)
        return out

    def flush(self) -> bytes:
        return self._real.flush()


@pytest.fixture(scope="module")
def bomb(tmp_path_factory):
    """A ~2 MB .npz whose one member, ``model/first.weight``, inflates to a 2 GiB float32 array."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("model/first.weight.npy", "w", force_zip64=True) as member:
            if hasattr(member, "_compressor"):  # zipfile's streamed writer: same bytes, built faster
                member._compressor = _RepeatingDeflate()
            member.write(_npy_header((BOMB_ELEMENTS,)))
            for _ in range(BOMB_ELEMENTS * 4 // len(CHUNK)):
                member.write(CHUNK)
    with zipfile.ZipFile(path) as archive:
        (info,) = archive.infolist()
    assert info.file_size > 2 << 30 and path.stat().st_size < 4 << 20, (info.file_size, path.stat().st_size)
    return path


@pytest.mark.parametrize("with_optimizer", [True, False])
def test_a_zip_bomb_is_refused_from_the_zip_directory(bomb, with_optimizer):
    model, opt = _trained(seed=3, steps=3)
    before = _snapshot(model, opt)
    tracemalloc.start()
    try:
        with pytest.raises(CheckpointError) as info:
            load_checkpoint(bomb, model, opt if with_optimizer else None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert "declares" in message and "model and optimizer can hold" in message, message
    # Refused before decompressing: Python allocated nowhere near the member's 2 GiB.
    assert peak < 16 << 20, f"the refused load allocated {peak} bytes"
    _assert_unchanged(before, _snapshot(model, opt))


def test_read_checkpoint_caps_what_it_decompresses(bomb):
    with pytest.raises(CheckpointError, match="max_bytes allows"):
        read_checkpoint(bomb, max_bytes=1 << 20)


# --- every damaged-archive kind is a CheckpointError ---------------------------------------------------


def _flag_encrypted(raw: bytes) -> bytes:
    """Set the 'encrypted' flag on every local and central zip header."""
    out = bytearray(raw)
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = out.find(signature)
        while start >= 0:
            (flags,) = struct.unpack_from("<H", out, start + flag_at)
            struct.pack_into("<H", out, start + flag_at, flags | 1)
            start = out.find(signature, start + 4)
    return bytes(out)


def _damaged_files(tmp_path) -> dict:
    good = _good_members()
    weight = "model/first.weight.npy"
    data = good[weight][len(_npy_header((4, 3))) :]
    plain = _npz(tmp_path / "plain.npz", good)
    raw = plain.read_bytes()
    broken_header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4,"
    broken_header += b" " * (118 - len(broken_header) - 1) + b"\n"
    corrupt = bytearray(raw)
    with zipfile.ZipFile(plain) as archive:
        info = archive.getinfo(weight)
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + len(_npy_header((4, 3)))
    corrupt[start : start + 8] = b"\xff" * 8
    files = {
        "encrypted flag": (_flag_encrypted(raw), "is encrypted"),
        "broken npy header": ({**good, weight: b"\x93NUMPY\x01\x00v\x00" + broken_header + data}, "header"),
        "declared shape 2**40": ({**good, weight: _npy_header((1 << 40,)) + data}, "(1099511627776,)"),
        "declared dtype wider than the data": (
            {**good, weight: _npy_header((4, 3), "<f8") + data},
            "float64",
        ),
        "npy version 9": ({**good, weight: b"\x93NUMPY\x09\x00" + good[weight][8:]}, "header"),
        "not an npy member": ({**good, weight: b"plain text"}, "header"),
        "member without .npy": ({**good, "model/first.weight": data}, "is not a .npy array"),
        "bzip2 member": (None, "compression method 12"),
        "truncated": (raw[: len(raw) // 2], "damaged or truncated"),
        "truncated directory": (raw[:-10], "damaged or truncated"),
        "bad crc": (bytes(corrupt), "damaged or truncated"),
        "not a zip": (b"PK\x03\x04" + bytes(200), "damaged or truncated"),
        "empty": (b"", "not a checkpoint (.safetensors or .npz) file"),
    }
    out = {}
    for kind, (content, fragment) in files.items():
        path = tmp_path / (kind.replace(" ", "_").replace("*", "") + ".npz")
        if isinstance(content, dict):
            _npz(path, content)
        elif content is None:
            _npz(path, good, compression=zipfile.ZIP_BZIP2)
        else:
            path.write_bytes(content)
        out[kind] = (path, fragment)
    return out


DAMAGED_KINDS = [
    "encrypted flag",
    "broken npy header",
    "declared shape 2**40",
    "declared dtype wider than the data",
    "npy version 9",
    "not an npy member",
    "member without .npy",
    "bzip2 member",
    "truncated",
    "truncated directory",
    "bad crc",
    "not a zip",
    "empty",
]


@pytest.mark.parametrize("kind", DAMAGED_KINDS)
def test_every_damaged_archive_kind_is_a_checkpoint_error(tmp_path, kind):
    path, fragment = _damaged_files(tmp_path)[kind]
    _refused_unchanged(path, fragment)
    with pytest.raises(CheckpointError, match="cannot be read|not a checkpoint"):
        read_checkpoint(path)


def test_a_name_given_twice_is_refused(tmp_path):
    good = _good_members()
    twice = [*good.items(), ("model/first.bias.npy", good["model/first.bias.npy"])]
    _refused_unchanged(_npz(tmp_path / "twice.npz", twice), "'model/first.bias.npy' appears twice")


def _break_central_crc(raw: bytes, name: str) -> bytes:
    """``raw`` with the CRC that the zip directory records for ``name`` changed (zipfile checks that one)."""
    out = bytearray(raw)
    start = out.find(b"PK\x01\x02")
    while start >= 0:
        (length,) = struct.unpack_from("<H", out, start + 28)
        if out[start + 46 : start + 46 + length] == name.encode():
            (crc,) = struct.unpack_from("<I", out, start + 16)
            struct.pack_into("<I", out, start + 16, crc ^ 0xFFFFFFFF)
            return bytes(out)
        start = out.find(b"PK\x01\x02", start + 4)
    raise AssertionError(f"no directory entry for {name}")


def test_shapes_are_checked_from_the_headers_before_any_data_is_read(tmp_path):
    # The entry's recorded CRC is also wrong: reading its data would fail the CRC check, so a
    # shape refusal shows the header was checked before the data was read (the entry is larger
    # than zipfile's 4 KiB read-ahead, so reading its header does not reach the data's end).
    good = _good_members()
    name = "model/first.bias.npy"
    good[name] = _npy_header((3000,)) + bytes(12000)
    path = _npz(tmp_path / "shape.npz", good)
    path.write_bytes(_break_central_crc(path.read_bytes(), name))
    with pytest.raises(CheckpointError, match="damaged or truncated"):
        read_checkpoint(path)  # the control: the data itself is refused
    _refused_unchanged(path, "entry 'model/first.bias' has shape (3000,), expected (4,)")


def test_optimizer_entries_are_not_read_without_an_optimizer(tmp_path):
    good = _good_members()
    good["optim/state.0.m.npy"] = _npy_header((1 << 40,))
    path = _npz(tmp_path / "model_only_is_fine.npz", good)
    model, _ = _trained(seed=4)
    load_checkpoint(path, model)
    reference, _ = _trained()
    for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=name)


# --- special files ----------------------------------------------------------------------------------


def _load_in_thread(path):
    """Run load_checkpoint(path) in a thread; return (finished, error). A blocked open is released."""
    model, opt = _trained()
    result = {}

    def load():
        try:
            load_checkpoint(path, model, opt)
        except BaseException as err:
            result["error"] = err

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(timeout=30)
    finished = not worker.is_alive()
    if not finished and stat.S_ISFIFO(os.stat(path).st_mode):
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # unblock the reader before failing
        os.close(fd)
        worker.join(timeout=30)
    return finished, result.get("error")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_load_from_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "ckpt.npz"
    os.mkfifo(fifo)
    finished, error = _load_in_thread(fifo)
    assert finished, "load_checkpoint blocked opening a FIFO"
    assert isinstance(error, CheckpointError) and "a FIFO (named pipe)" in str(error), repr(error)


@pytest.mark.parametrize(
    "make, kind",
    [
        (lambda tmp: tmp, "a directory"),
        (lambda tmp: "/dev/null", "a character device"),
    ],
)
def test_load_from_other_special_files_is_refused(tmp_path, make, kind):
    path = make(tmp_path)
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist here")
    finished, error = _load_in_thread(path)
    assert finished and isinstance(error, CheckpointError) and kind in str(error), repr(error)


@pytest.fixture
def no_replace(monkeypatch):
    """Fail the test (instead of replacing anything) if a save reaches its rename."""

    def refuse(source, target):
        os.unlink(source)
        raise AssertionError(f"save_checkpoint went on to replace {target!r}")

    monkeypatch.setattr(os, "replace", refuse)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_save_refuses_to_replace_a_fifo(tmp_path, no_replace):
    model, opt = _trained()
    fifo = tmp_path / "ckpt.npz"
    os.mkfifo(fifo)
    with pytest.raises(FileExistsError, match=r"a FIFO \(named pipe\), not a regular file"):
        save_checkpoint(fifo, model, opt)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert os.listdir(tmp_path) == ["ckpt.npz"], "no temporary file is left behind"


def test_save_refuses_to_replace_a_device(no_replace):
    if not os.path.exists("/dev/null"):
        pytest.skip("no /dev/null here")
    model, opt = _trained()
    with pytest.raises(FileExistsError, match="'/dev/null': it exists and is a character device"):
        save_checkpoint("/dev/null", model, opt)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_save_refuses_a_directory_and_a_trailing_slash(tmp_path, no_replace):
    model, opt = _trained()
    with pytest.raises(IsADirectoryError, match="it is a directory"):
        save_checkpoint(tmp_path, model, opt)
    existing = tmp_path / "file.npz"
    existing.write_bytes(b"old")
    for path in (f"{tmp_path}{os.sep}sub{os.sep}", f"{existing}{os.sep}"):
        with pytest.raises(IsADirectoryError, match="ending in a separator names a directory"):
            save_checkpoint(path, model, opt)
    assert os.listdir(tmp_path) == ["file.npz"] and existing.read_bytes() == b"old"


# --- bounded step counts, no pickles --------------------------------------------------------------------


def test_a_step_count_past_int64_is_refused_at_load(tmp_path):
    good = _good_members()
    import io

    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.asarray(2**64 - 1, dtype=np.uint64))
    good["optim/steps.npy"] = buffer.getvalue()
    _refused_unchanged(_npz(tmp_path / "steps.npz", good), f"at most {MAX_STEPS}", "got 18446744073709551615")


def test_the_step_count_is_a_bounded_int():
    _, opt = _trained()
    with pytest.raises(ValueError, match=r"steps must be in \[0, "):
        opt.steps = 2**64
    with pytest.raises(ValueError, match="got -1"):
        opt.steps = -1
    for bad in (True, 2.0, "3", None):
        with pytest.raises(TypeError, match="steps must be an int"):
            opt.steps = bad
    opt.steps = np.uint64(7)
    assert type(opt.steps) is int and opt.steps == 7


def test_the_last_step_is_refused_and_changes_nothing(tmp_path):
    model, opt = _trained()
    opt.steps = MAX_STEPS
    before = _snapshot(model, opt)
    with pytest.raises(ValueError, match="create a new optimizer"):
        opt.step()
    _assert_unchanged(before, _snapshot(model, opt))
    path = tmp_path / "last.npz"
    save_checkpoint(path, model, opt)
    fresh, fresh_opt = _trained(seed=6, steps=1)
    load_checkpoint(path, fresh, fresh_opt)
    assert fresh_opt.steps == MAX_STEPS


def test_saves_never_pickle(tmp_path, monkeypatch):
    import pickle

    def refuse(*args, **kwargs):
        raise AssertionError("a checkpoint save pickled something")

    monkeypatch.setattr(pickle, "dump", refuse)
    monkeypatch.setattr(pickle, "dumps", refuse)
    model, opt = _trained()
    path = tmp_path / "ckpt.npz"
    save_checkpoint(path, model, opt)
    with np.load(path, allow_pickle=False) as data:  # every member reads without pickles
        assert all(data[key].dtype.kind in "fiuU" for key in data.files)
    old = path.read_bytes()
    state = opt.state_dict()
    monkeypatch.setattr(
        type(opt), "state_dict", lambda self: {**state, "steps": np.array(2**64, dtype=object)}
    )
    with pytest.raises(TypeError, match=r"'optim/steps' holds Python objects .* \(no pickles\)"):
        save_checkpoint(path, model, opt)
    assert path.read_bytes() == old, "the refused save kept the old checkpoint"


def test_saved_files_load_with_numpy_and_round_trip(tmp_path):
    model, opt = _trained()
    path = tmp_path / "ckpt.npz"
    save_checkpoint(path, model, opt)
    arrays = read_checkpoint(path)
    expected = {f"model/{k}": v for k, v in model.state_dict().items()}
    expected.update({f"optim/{k}": v for k, v in opt.state_dict().items()})
    assert arrays.keys() == expected.keys()
    for key, value in expected.items():
        np.testing.assert_array_equal(arrays[key], value, err_msg=key)
    assert arrays["optim/steps"].dtype == np.int64
    sgd_model = Small()
    sgd = SGD(sgd_model.parameters(), lr=0.1)
    with pytest.raises(CheckpointError, match="state is for Adam, not SGD"):
        load_checkpoint(path, sgd_model, sgd)
