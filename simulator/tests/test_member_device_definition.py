"""Members whose execution space is named only on their out-of-class definitions (the CUDA
Handbook's spinlockReduction.cu): built as nvcc builds them, the space the definition's."""

from __future__ import annotations

import pytest

from .conftest import KERNELS, run_cli
from .test_run import _values

PROGRAM = KERNELS / "program_member_device_definition.cu"


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_a_space_named_on_the_out_of_class_definition_only_is_the_members(mode):
    proc = run_cli("run", str(PROGRAM), "--mode", mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    values = _values(proc.stdout)
    assert values["sum"] == str(2 * sum(range(32)))  # the device constructor, add and twice
    assert values["host_twice"] == "42"  # __host__ __device__: the host calls it too


def test_a_definition_that_matches_no_declaration_is_still_refused(tmp_path):
    """Only a declaration that lacks the definition's space is given it: a definition whose
    parameters match no declaration of the class stays the error it is under nvcc."""
    source = PROGRAM.read_text().replace(
        "inline __device__ void Counter::add(int v)", "inline __device__ void Counter::add(long v)"
    )
    assert "Counter::add(long v)" in source
    program = tmp_path / "mismatch.cu"
    program.write_text(source)
    proc = run_cli("run", str(program), "--mode", "fast")
    assert proc.returncode != 0
    assert "no declaration matches 'void Counter::add(long int)'" in proc.stderr, proc.stderr
