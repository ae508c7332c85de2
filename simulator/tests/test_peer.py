"""Peer-to-peer calls on the modelled one-GPU machine: the answers a machine with one GPU gives
(a device is not its own peer, any other ordinal is invalid) and a peer copy between device 0
and itself, checked against the program's input formula computed here."""

from __future__ import annotations

import pytest

from .conftest import EVERY_MODE, KERNELS, mode_args, nvcc_compile, run_cli, token_values

PROGRAM = KERNELS / "program_peer.cu"


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_peer_calls_answer_as_one_gpu_does(mode):
    proc = run_cli("run", str(PROGRAM), *mode_args(mode))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    v = token_values(proc.stdout)
    assert v["count"] == "1"
    assert v["can_access_self"] == "0" and v["status"] == "cudaSuccess"
    assert v["can_access_other"] == "cudaErrorInvalidDevice"
    # The runtime API documents cudaErrorInvalidDevice when cudaDeviceCanAccessPeer says 0.
    assert v["enable_self"] == "cudaErrorInvalidDevice"
    assert v["enable_other"] == "cudaErrorInvalidDevice"
    assert v["disable_self"] == "cudaErrorPeerAccessNotEnabled"
    assert v["peer_copy"] == "cudaSuccess"
    assert v["peer_copy_other"] == "cudaErrorInvalidDevice"
    assert int(v["peer_sum"]) == sum(i * i - 7 for i in range(64))


def test_the_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
