"""Checkpoints as safetensors: other tools read torchlight's files, torchlight reads theirs, the
earlier .npz files still load, and a file is checked against the model before it is read."""

from __future__ import annotations

import json
import re
import struct

import numpy as np
import pytest

import torchlight as tl
from torchlight import nn
from torchlight.optim import Adam, CheckpointError, load_checkpoint, read_checkpoint, save_checkpoint

safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="checkpoints need safetensors")


class TwoLayer(nn.Module):
    """Named as PyTorch names the same layers: first.weight, first.bias, second.weight, ..."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(3, 4)
        self.second = nn.Linear(4, 2)

    def forward(self, x: tl.Tensor) -> tl.Tensor:
        return self.second(self.first(x).relu())


def _trained(seed: int = 0) -> tuple[TwoLayer, Adam]:
    tl.manual_seed(seed)
    model = TwoLayer()
    opt = Adam(model.parameters(), lr=0.01)
    x = tl.randn(5, 3)
    for _ in range(2):
        loss = (model(x) * model(x)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, opt


def _weights(model: nn.Module) -> dict[str, np.ndarray]:
    return {name: p.numpy().copy() for name, p in model.named_parameters()}


def test_round_trip_restores_the_model_and_the_optimizer(tmp_path):
    model, opt = _trained()
    path = tmp_path / "ckpt.safetensors"
    save_checkpoint(path, model, opt)
    fresh, fresh_opt = _trained(seed=3)
    load_checkpoint(path, fresh, fresh_opt)
    for name, array in _weights(model).items():
        np.testing.assert_array_equal(_weights(fresh)[name], array)
    assert fresh_opt.steps == opt.steps == 2 and fresh_opt.hyper == opt.hyper
    for mine, theirs in zip(opt.state, fresh_opt.state):
        for key in mine:
            np.testing.assert_array_equal(theirs[key].numpy(), mine[key].numpy())


def test_safetensors_reads_a_torchlight_checkpoint_by_the_models_names(tmp_path):
    model, opt = _trained()
    path = tmp_path / "ckpt.safetensors"
    save_checkpoint(path, model, opt)
    loaded = safetensors_numpy.load_file(str(path))
    weights = _weights(model)
    assert set(weights) <= set(loaded)
    for name, array in weights.items():
        np.testing.assert_array_equal(loaded[name], array)
    assert {k for k in loaded if k not in weights} == {f"optim/state.{i}.{b}" for i in range(4) for b in "mv"}
    (length,) = struct.unpack("<Q", path.read_bytes()[:8])
    metadata = json.loads(path.read_bytes()[8 : 8 + length])["__metadata__"]
    assert json.loads(metadata["optim"])["type"] == "Adam" and json.loads(metadata["optim"])["steps"] == 2
    assert read_checkpoint(path)["optim/type"] == "Adam"


def test_torch_reads_a_torchlight_checkpoint_and_its_weights_load_back(tmp_path):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: the torch round trip needs it")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    model, _ = _trained()
    path = tmp_path / "ckpt.safetensors"
    save_checkpoint(path, model)
    reference = torch.nn.Sequential()
    reference.add_module("first", torch.nn.Linear(3, 4))
    reference.add_module("relu", torch.nn.ReLU())  # TwoLayer's relu; it has no weights to name
    reference.add_module("second", torch.nn.Linear(4, 2))
    reference.load_state_dict(safetensors_torch.load_file(str(path)))
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    want = model(tl.tensor(x)).numpy()
    got = reference(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    from_torch = tmp_path / "torch.safetensors"
    safetensors_torch.save_file(reference.state_dict(), str(from_torch))
    fresh, _ = _trained(seed=5)
    load_checkpoint(from_torch, fresh)
    np.testing.assert_allclose(fresh(tl.tensor(x)).numpy(), want, rtol=1e-5, atol=1e-6)


def test_weights_saved_by_another_tool_under_the_same_names_load(tmp_path):
    model, _ = _trained()
    path = tmp_path / "other.safetensors"
    safetensors_numpy.save_file(_weights(model), str(path))  # no torchlight metadata
    fresh, fresh_opt = _trained(seed=4)
    load_checkpoint(path, fresh)
    assert all(np.array_equal(a, _weights(fresh)[n]) for n, a in _weights(model).items())
    with pytest.raises(CheckpointError, match="holds no optimizer state"):
        load_checkpoint(path, fresh, fresh_opt)


def test_earlier_npz_checkpoints_still_load(tmp_path):
    model, opt = _trained()
    old = tmp_path / "old.npz"
    save_checkpoint(old, model, opt)  # a .npz name keeps the earlier format
    assert old.read_bytes()[:2] == b"PK"
    fresh, fresh_opt = _trained(seed=6)
    load_checkpoint(old, fresh, fresh_opt)
    assert fresh_opt.steps == 2
    assert all(np.array_equal(a, _weights(fresh)[n]) for n, a in _weights(model).items())


def test_a_file_larger_than_the_model_can_hold_is_refused_before_it_is_parsed(tmp_path):
    model, opt = _trained()
    big = tmp_path / "big.safetensors"
    safetensors_numpy.save_file({"first.weight": np.zeros((512, 512), np.float32)}, str(big))
    before = _weights(model)
    with pytest.raises(CheckpointError, match="more than the .* bytes the model and optimizer can hold"):
        load_checkpoint(big, model, opt)
    assert all(np.array_equal(a, _weights(model)[n]) for n, a in before.items())


def test_damaged_and_mismatched_files_change_nothing(tmp_path):
    model, opt = _trained()
    good = tmp_path / "good.safetensors"
    save_checkpoint(good, model, opt)
    data = good.read_bytes()
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(data[: len(data) - 7])
    header = tmp_path / "header.safetensors"
    header.write_bytes(struct.pack("<Q", 10**6) + data[8:])  # claims more header than there is
    wrong = tmp_path / "wrong.safetensors"
    safetensors_numpy.save_file({"first.weight": np.zeros((3, 4), np.float32)}, str(wrong))
    victim, victim_opt = _trained(seed=7)
    before = _weights(victim)
    for path, fragment in (
        (truncated, "damaged or truncated"),
        (header, "damaged or truncated"),
        (wrong, "has shape (3, 4), expected (4, 3)"),
    ):
        with pytest.raises(CheckpointError, match=re.escape(fragment)):
            load_checkpoint(path, victim, victim_opt)
        assert victim_opt.steps == 2
        assert all(np.array_equal(a, _weights(victim)[n]) for n, a in before.items())


def test_a_refused_save_keeps_the_previous_file(tmp_path):
    model, opt = _trained()
    path = tmp_path / "ckpt.safetensors"
    save_checkpoint(path, model, opt)
    kept = path.read_bytes()
    opt.state[0]["m"]._data = type(opt.state[0]["m"]._data).from_array(np.zeros(12, dtype=complex))
    with pytest.raises(TypeError, match="only numeric arrays"):
        save_checkpoint(path, model, opt)
    assert path.read_bytes() == kept
