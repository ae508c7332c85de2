"""Device parsing and get_backend resolution: they pick backends themselves, so no tier re-runs them."""

from __future__ import annotations

import pytest

import torchlight as tl
from torchlight.backends import DEVICE_ENV, CPUBackend, get_backend
from torchlight.backends.cpu import cpu_backend


@pytest.mark.parametrize(
    "spec, kind, index",
    [
        ("cpu", "cpu", None),
        ("cuda", "cuda", None),
        ("cuda:0", "cuda", 0),
        ("cuda:3", "cuda", 3),
        ("cpu:0", "cpu", None),
    ],
)
def test_device_parses_accepted_forms(spec, kind, index):
    d = tl.Device(spec)
    assert (d.type, d.index) == (kind, index)
    assert tl.Device(d) == d, "a Device is accepted where a spec is"


def test_device_equality_and_hashing():
    assert tl.Device("cpu") == tl.Device("cpu")
    assert tl.Device("cuda:0") == tl.Device("cuda:0")
    assert tl.Device("cuda:0") != tl.Device("cuda:1")
    assert tl.Device("cuda") != tl.Device("cpu")
    assert tl.Device("cpu") == "cpu" and tl.Device("cuda:1") == "cuda:1"
    assert tl.Device("cpu") != "not a device"
    assert tl.Device("cpu") != 3
    assert hash(tl.Device("cuda:2")) == hash(tl.Device("cuda:2"))
    assert len({tl.Device("cpu"), tl.Device("cpu"), tl.Device("cuda"), tl.Device("cuda:0")}) == 3
    assert {tl.Device("cuda:0"): 1}[tl.Device("cuda:0")] == 1


def test_device_repr_and_str():
    assert repr(tl.Device("cpu")) == "Device('cpu')"
    assert repr(tl.Device("cuda:1")) == "Device('cuda:1')"
    assert str(tl.Device("cuda")) == "cuda"
    assert eval(repr(tl.Device("cuda:2")), {"Device": tl.Device}) == tl.Device("cuda:2")


@pytest.mark.parametrize(
    "spec",
    [
        "gpu",
        "cuda:x",
        "cuda:-1",
        "",
        "cpu:1",
        "tpu:0",
        "cuda:0:1",
        " CPU ",
        "CPU",
        "cuda ",
        "cuda:99999999999999999999",
    ],
)
def test_device_rejects_bad_specs(spec):
    with pytest.raises(ValueError) as info:
        tl.Device(spec)
    message = str(info.value)
    assert repr(spec) in message, f"message does not name {spec!r}: {message}"
    if spec != "cpu:1":
        assert "'cpu'" in message and "'cuda'" in message, "message lists the accepted forms"


@pytest.mark.parametrize("spec", [None, 0, True, 1.5, b"cpu"])
def test_device_refuses_specs_that_are_not_strings(spec):
    with pytest.raises(TypeError) as info:
        tl.Device(spec)
    message = str(info.value)
    assert repr(spec) in message and "device" in message and "'cuda:N'" in message, message


def test_get_backend_default_is_cpu(monkeypatch):
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    assert get_backend() is cpu_backend()
    assert get_backend(None) is cpu_backend()
    monkeypatch.setenv(DEVICE_ENV, "  ")
    assert get_backend() is cpu_backend(), "a blank TORCHLIGHT_DEVICE means the default"


def test_get_backend_honours_env(monkeypatch):
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert get_backend() is cpu_backend()
    assert tl.tensor([1.0]).backend is cpu_backend()


@pytest.mark.parametrize("bad", ["gpu", "cuda:zero", "cpu:2"])
def test_get_backend_rejects_bad_env(monkeypatch, bad):
    monkeypatch.setenv(DEVICE_ENV, bad)
    with pytest.raises(ValueError) as info:
        get_backend()
    assert DEVICE_ENV in str(info.value) and repr(bad) in str(info.value)
    with pytest.raises(ValueError, match=DEVICE_ENV):
        tl.tensor([1.0])


def test_get_backend_from_device_and_string():
    assert get_backend(tl.Device("cpu")) is cpu_backend()
    assert get_backend("cpu") is cpu_backend()
    assert isinstance(get_backend("cpu"), CPUBackend)
    assert get_backend("cpu").device == tl.Device("cpu")


def test_get_backend_passes_instances_through():
    mine = CPUBackend()
    assert get_backend(mine) is mine
    t = tl.tensor([1.0, 2.0], device=mine)
    assert t.backend is mine and t.device == tl.Device("cpu")


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "metal"])
def test_get_backend_rejects_unknown_strings(bad):
    with pytest.raises(ValueError) as info:
        get_backend(bad)
    assert repr(bad) in str(info.value)


def test_get_backend_rejects_second_gpu():
    with pytest.raises(ValueError) as info:
        get_backend("cuda:1")
    assert "'cuda:1'" in str(info.value)


def test_get_backend_finds_a_resolved_device_in_one_lookup(monkeypatch):
    """A hint resolved once is answered from the registry's table: no rule, builder or parse again."""
    from torchlight.backends import registry

    monkeypatch.delenv(DEVICE_ENV, raising=False)
    first = get_backend("cpu")
    hints = ["cpu", "cpu:0", tl.Device("cpu"), first, None]
    for hint in hints:
        assert get_backend(hint) is first

    def resolved_again(*args, **kwargs):
        raise AssertionError(f"resolved again: {args}")

    monkeypatch.setattr(registry, "_resolve", resolved_again)
    monkeypatch.setattr(registry, "device_backend", resolved_again)
    monkeypatch.setattr(registry.DeviceRule, "choose", resolved_again)
    for hint in hints:
        assert get_backend(hint) is first
    assert tl.tensor([1.0], device="cpu").backend is first
    assert tl.zeros(2, device=tl.Device("cpu")).backend is first
    assert tl.tensor([1.0]).backend is first


def test_get_backend_table_keeps_only_what_the_registry_built(monkeypatch):
    from torchlight.backends import registry

    mine = CPUBackend()
    assert get_backend(mine) is mine
    assert mine not in registry._DEVICE_BACKENDS, "a backend the user built is passed through, not kept"
    for bad in ("gpu", "cuda:1"):
        with pytest.raises(ValueError):
            get_backend(bad)
        assert bad not in registry._DEVICE_BACKENDS
    with pytest.raises(TypeError, match="device must be a string"):
        get_backend(["cpu"])  # unhashable: the full resolution names it
    monkeypatch.setattr(registry, "_DEVICE_BACKENDS", {})  # an emptied table is filled again
    assert get_backend("cpu") is cpu_backend()
    assert registry._DEVICE_BACKENDS["cpu"] is cpu_backend()


def test_each_backend_module_exports_what_its_name_says():
    import torchlight.backends.cuda as cuda
    import torchlight.backends.numba_twin as twin

    assert cuda.__all__ == ["CudaBackend", "CudaCKernelProvider", "CudaProvider", "cuda_backend"]
    assert twin.__all__ == ["NumbaBackend", "numba_backend"]
    # The twin's names still answer on the documented path, and are the twin's own objects.
    from torchlight.backends.numba_twin import backend

    assert cuda.numba_backend is twin.numba_backend is backend.numba_backend
    assert cuda.NumbaBackend is twin.NumbaBackend is backend.NumbaBackend
