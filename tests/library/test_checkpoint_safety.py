"""Checkpoints and state dicts: atomic writes, and loads that apply all of the input or none of it.

Every refused load is checked the same way: a snapshot of every parameter array, the
optimizer's step count, hyper-parameters and every state buffer before the call must equal
the snapshot after it, bit for bit.
"""

from __future__ import annotations

import os
import stat
import zipfile

import numpy as np
import pytest

import torchlight as tl
from torchlight import nn
from torchlight.nn import StateDictError
from torchlight.optim import SGD, Adam, AdamW, CheckpointError, atomic_write, load_checkpoint, save_checkpoint


class TwoLayer(nn.Module):
    """A small model with parameters of two shapes."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(3, 4)
        self.second = nn.Linear(4, 2)

    def forward(self, x: tl.Tensor) -> tl.Tensor:
        return self.second(self.first(x).relu())


def _trained(cls=Adam, seed: int = 0, steps: int = 2):
    tl.manual_seed(seed)
    model = TwoLayer()
    opt = cls(model.parameters(), lr=0.01, **({"momentum": 0.9} if cls is SGD else {}))
    x = tl.randn(5, 3)
    for _ in range(steps):
        loss = (model(x) * model(x)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, opt


def _snapshot(model: nn.Module, opt) -> dict:
    snap = {f"param {k}": v.copy() for k, v in model.state_dict().items()}
    snap["steps"] = opt.steps
    snap["hyper"] = dict(opt.hyper)
    for i, state in enumerate(opt.state):
        for k, v in state.items():
            snap[f"state {i} {k}"] = v.numpy()
    snap["state keys"] = [sorted(s) for s in opt.state]
    return snap


def _assert_unchanged(before: dict, after: dict) -> None:
    assert before.keys() == after.keys()
    for key, value in before.items():
        if isinstance(value, np.ndarray):
            assert value.dtype == after[key].dtype, key
            np.testing.assert_array_equal(value, after[key], err_msg=key)
        else:
            assert value == after[key], key


# --- atomic writes ---------------------------------------------------------------------------------


def test_save_writes_a_temp_file_in_the_same_directory_and_renames_it(tmp_path, monkeypatch):
    model, opt = _trained()
    target = tmp_path / "ckpt.npz"
    calls = []
    real_replace, real_fsync = os.replace, os.fsync
    monkeypatch.setattr(os, "replace", lambda a, b: (calls.append(("replace", a, b)), real_replace(a, b)))
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(("fsync", fd)), real_fsync(fd)))
    save_checkpoint(target, model, opt)
    kinds = [c[0] for c in calls]
    assert kinds == ["fsync", "replace", "fsync"], "file fsync, rename, then directory fsync"
    _, source, dest = calls[1]
    assert os.path.dirname(source) == str(tmp_path) and dest == str(target)
    assert sorted(os.listdir(tmp_path)) == ["ckpt.npz"], "no temporary file is left behind"


def test_failed_save_keeps_the_old_checkpoint_and_removes_its_temp_file(tmp_path):
    target = tmp_path / "ckpt.npz"
    target.write_bytes(b"old contents")

    def broken(handle):
        handle.write(b"half of a new file")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_write(target, broken)
    assert target.read_bytes() == b"old contents"
    assert os.listdir(tmp_path) == ["ckpt.npz"]


def test_save_keeps_the_targets_permissions_and_writes_through_links(tmp_path):
    model, opt = _trained()
    target = tmp_path / "ckpt.npz"
    save_checkpoint(target, model, opt)
    os.chmod(target, 0o640)
    link = tmp_path / "latest.npz"
    link.symlink_to(target)
    save_checkpoint(link, model, opt)
    assert link.is_symlink(), "the link stays a link"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    fresh, fresh_opt = _trained(seed=5, steps=1)
    load_checkpoint(link, fresh, fresh_opt)
    _assert_unchanged(_snapshot(model, opt), _snapshot(fresh, fresh_opt))


def test_save_refuses_to_replace_a_read_only_checkpoint(tmp_path):
    model, opt = _trained()
    target = tmp_path / "kept.npz"
    save_checkpoint(target, model, opt)
    before = target.read_bytes()
    os.chmod(target, 0o444)
    other, other_opt = _trained(seed=3)
    with pytest.raises(PermissionError, match=r"kept.npz.*is read-only \(mode 0444\).*chmod u\+w"):
        save_checkpoint(target, other, other_opt)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.npz"]  # no temporary file left


@pytest.mark.parametrize("length", [242, 250, 255])
def test_save_takes_every_name_the_file_system_takes(tmp_path, length):
    model, opt = _trained()
    target = tmp_path / ("c" * (length - len(".npz")) + ".npz")
    save_checkpoint(target, model, opt)
    fresh, fresh_opt = _trained(seed=5, steps=1)
    load_checkpoint(target, fresh, fresh_opt)
    _assert_unchanged(_snapshot(model, opt), _snapshot(fresh, fresh_opt))
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_save_names_a_missing_directory(tmp_path):
    model, _ = _trained()
    with pytest.raises(FileNotFoundError, match="does not exist; create it first"):
        save_checkpoint(tmp_path / "nope" / "ckpt.npz", model)
    with pytest.raises(TypeError, match="Module"):
        save_checkpoint(tmp_path / "x.npz", "model")


# --- round trip -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [SGD, Adam, AdamW])
def test_round_trip_restores_everything(tmp_path, cls):
    model, opt = _trained(cls)
    path = tmp_path / "ckpt.npz"
    save_checkpoint(path, model, opt)
    fresh, fresh_opt = _trained(cls, seed=9, steps=1)
    load_checkpoint(path, fresh, fresh_opt)
    _assert_unchanged(_snapshot(model, opt), _snapshot(fresh, fresh_opt))


# --- all-or-nothing: each failure kind leaves model and optimizer exactly as they were --------------


def _state_of(cls=Adam):
    model, opt = _trained(cls, seed=1)
    return model.state_dict(), opt.state_dict()


def _edit_model(edit):
    def build(tmp_path):
        model_state, optim_state = _state_of()
        edit(model_state)
        return model_state, optim_state

    return build


def _edit_optim(edit, cls=Adam):
    def build(tmp_path):
        model_state, optim_state = _state_of(cls)
        edit(optim_state)
        return model_state, optim_state

    return build


def _set(key, value):
    return lambda state: state.__setitem__(key, value)


def _drop(key):
    return lambda state: state.pop(key)


LAST = "second.bias"  # the last parameter: a half-applying load has already changed the others
FAILURES = {
    "model wrong shape (last entry)": (_edit_model(_set(LAST, np.zeros(3, np.float32))), "has shape (3,)"),
    "model missing entry": (_edit_model(_drop("first.weight")), "missing ['first.weight']"),
    "model unknown entry": (_edit_model(_set("third.weight", np.zeros(2))), "unexpected ['third.weight']"),
    "model complex entry": (_edit_model(_set(LAST, np.ones(2, np.complex64))), "complex64"),
    "model bool entry": (_edit_model(_set(LAST, np.ones(2, bool))), "dtype bool"),
    "model string entry": (_edit_model(_set(LAST, np.array(["1", "2"]))), "<U1"),
    "model 1e300 entry": (_edit_model(_set(LAST, np.array([1.0, 1e300]))), "1e+300"),
    "model structured entry": (_edit_model(_set(LAST, np.zeros(2, dtype=[("a", "f4")]))), "[('a', '<f4')]"),
    "model object entry": (_edit_model(_set(LAST, np.array([1.0, None], dtype=object))), "object"),
    "optimizer negative param index": (_edit_optim(_set("state.-1.m", np.zeros(2))), "'state.-1.m'"),
    "optimizer index past the end": (_edit_optim(_set("state.4.m", np.zeros(2))), "parameter 4"),
    "optimizer unknown key": (_edit_optim(_set("momentum_buffer", np.zeros(2))), "'momentum_buffer'"),
    "optimizer unknown buffer": (_edit_optim(_set("state.3.velocity", np.zeros(2))), "'velocity'"),
    "optimizer unknown hyper": (_edit_optim(_set("hyper.amsgrad", np.asarray(1.0))), "unknown ['amsgrad']"),
    "optimizer missing hyper": (_edit_optim(_drop("hyper.eps")), "missing ['eps']"),
    "optimizer lr nan": (_edit_optim(_set("hyper.lr", np.asarray(np.nan))), "lr must be >= 0, got nan"),
    "optimizer lr inf": (_edit_optim(_set("hyper.lr", np.asarray(np.inf))), "got inf"),
    "optimizer beta1 1.0": (_edit_optim(_set("hyper.beta1", np.asarray(1.0))), "beta1 must be in [0, 1)"),
    "optimizer eps negative": (_edit_optim(_set("hyper.eps", np.asarray(-1e-8))), "eps must be >= 0"),
    "optimizer hyper string": (_edit_optim(_set("hyper.lr", np.asarray("0.1"))), "'hyper.lr'"),
    "optimizer steps missing": (_edit_optim(_drop("steps")), "no 'steps' entry"),
    "optimizer steps 2.5": (_edit_optim(_set("steps", np.asarray(2.5))), "non-negative integer"),
    "optimizer steps negative": (_edit_optim(_set("steps", np.asarray(-1))), "got -1"),
    "optimizer steps 0 with buffers": (_edit_optim(_set("steps", np.asarray(0))), "steps is 0"),
    "optimizer buffer wrong shape": (
        _edit_optim(_set("state.3.m", np.zeros(5, np.float32))),
        "has shape (5,)",
    ),
    "optimizer buffer nan": (_edit_optim(_set("state.3.m", np.array([0.0, np.nan]))), "nan"),
    "optimizer buffer complex": (_edit_optim(_set("state.3.m", np.zeros(2, np.complex128))), "complex128"),
    "optimizer buffer 1e300": (_edit_optim(_set("state.3.m", np.array([0.0, 1e300]))), "1e+300"),
    "optimizer negative v": (_edit_optim(_set("state.3.v", np.array([0.0, -1.0]))), "cannot be negative"),
    "optimizer half a buffer pair": (_edit_optim(_drop("state.3.v")), "['m']"),
    "optimizer SGD state in Adam": (
        lambda tmp_path: (_state_of()[0], _state_of(SGD)[1]),
        "state is for SGD, not Adam",
    ),
    "optimizer Adam state in AdamW": (
        _edit_optim(_set("type", np.asarray("Adam")), cls=AdamW),
        "state is for Adam, not AdamW",
    ),
    "optimizer SGD state without type in Adam": (
        lambda tmp_path: (_state_of()[0], {k: v for k, v in _state_of(SGD)[1].items() if k != "type"}),
        "missing ['beta1', 'beta2', 'eps']",
    ),
}


def _victim(cls=Adam):
    return _trained(cls, seed=2, steps=3)


@pytest.mark.parametrize("kind", list(FAILURES))
def test_refused_load_state_dict_changes_nothing(kind, tmp_path):
    build, fragment = FAILURES[kind]
    model_state, optim_state = build(tmp_path)
    cls = AdamW if "AdamW" in kind else Adam
    model, opt = _victim(cls)
    before = _snapshot(model, opt)
    target, state = (model, model_state) if kind.startswith("model") else (opt, optim_state)
    with pytest.raises(StateDictError) as info:
        target.load_state_dict(state)
    assert fragment in str(info.value), str(info.value)
    _assert_unchanged(before, _snapshot(model, opt))


@pytest.mark.parametrize("kind", list(FAILURES))
def test_refused_load_checkpoint_changes_nothing(kind, tmp_path):
    build, fragment = FAILURES[kind]
    model_state, optim_state = build(tmp_path)
    path = tmp_path / "bad.npz"
    np.savez(
        path,
        **{f"model/{k}": v for k, v in model_state.items()},
        **{f"optim/{k}": v for k, v in optim_state.items()},
    )
    cls = AdamW if "AdamW" in kind else Adam
    model, opt = _victim(cls)
    before = _snapshot(model, opt)
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(path, model, opt)
    message = str(info.value)
    assert fragment in message and str(path) in message and "nothing was loaded" in message, message
    _assert_unchanged(before, _snapshot(model, opt))


def _file_failures(tmp_path, good):
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    npy = tmp_path / "array.npy"
    np.save(npy, np.zeros(3))
    text = tmp_path / "notes.npz"
    text.write_text("not a checkpoint")
    no_optim = tmp_path / "model_only.npz"
    np.savez(no_optim, **{f"model/{k}": v for k, v in _state_of()[0].items()})
    unknown = tmp_path / "unknown.npz"
    np.savez(unknown, **{f"model/{k}": v for k, v in _state_of()[0].items()}, extra=np.zeros(1))
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, **{"model/first.weight": np.array([object()], dtype=object)})
    corrupt = tmp_path / "corrupt.npz"
    raw = bytearray(good.read_bytes())
    with zipfile.ZipFile(good) as zf:
        info = zf.infolist()[-1]
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 150
    raw[start : start + 8] = b"\xff" * 8  # flip payload bytes: the CRC check fails on read
    corrupt.write_bytes(bytes(raw))
    return {
        "truncated": (truncated, "damaged or truncated"),
        "npy file": (npy, "single .npy array"),
        "text file": (text, "not a checkpoint (.safetensors or .npz) file"),
        "no optimizer state": (no_optim, "holds no optimizer state"),
        "unknown top-level entry": (unknown, "unknown entries ['extra']"),
        "object array": (pickled, "pickled Python objects"),
        "crc mismatch": (corrupt, "damaged or truncated"),
    }


def test_refused_checkpoint_files_change_nothing(tmp_path):
    model, opt = _trained()
    good = tmp_path / "good.npz"
    save_checkpoint(good, model, opt)
    for kind, (path, fragment) in _file_failures(tmp_path, good).items():
        victim, victim_opt = _victim()
        before = _snapshot(victim, victim_opt)
        with pytest.raises(CheckpointError) as info:
            load_checkpoint(path, victim, victim_opt)
        assert fragment in str(info.value) and str(path) in str(info.value), (kind, str(info.value))
        _assert_unchanged(before, _snapshot(victim, victim_opt))


def test_checkpoint_errors_stay_value_and_key_errors(tmp_path):
    model, _ = _trained()
    path = tmp_path / "a.npy"
    np.save(path, np.zeros(2))
    with pytest.raises(ValueError, match="single .npy array"):
        load_checkpoint(path, model)
    with pytest.raises(KeyError, match="missing"):
        model.load_state_dict({})
    assert str(StateDictError("plain text")) == "plain text", "no KeyError quoting"


def test_load_without_optimizer_ignores_its_state(tmp_path):
    model, opt = _trained()
    path = tmp_path / "ckpt.npz"
    save_checkpoint(path, model, opt)
    fresh, _ = _victim()
    load_checkpoint(path, fresh)
    for (name, p), (_, q) in zip(model.named_parameters(), fresh.named_parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=name)
