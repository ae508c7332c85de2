"""Tensor.device reports the device of the backend a tensor lives on."""

from __future__ import annotations

import pytest

import torchlight as tl


@pytest.mark.op("device")
def test_tensor_reports_backend_device(backend):
    t = tl.tensor([1.0], device=backend)
    assert t.backend is backend
    assert t.device == backend.device
    assert isinstance(t.device, tl.Device)
