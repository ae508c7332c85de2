"""The device-generic suite covers every op: each table op has a reference and a non-finite
rule, and each Function a gradient check. Checked once here, on the suite's own tables, rather
than once per backend in every tier."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from torchlight.backends.ops import BINARY_OPS, REDUCE_OPS, UNARY_OPS

GENERIC = Path(__file__).resolve().parents[1] / "generic"


def generic_module(name: str) -> ModuleType:
    """``tests/generic/<name>.py`` loaded by path (the folders are not packages)."""
    spec = importlib.util.spec_from_file_location(f"generic_{name}", GENERIC / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def test_every_table_entry_has_a_reference():
    """A new op in the table must come with a reference in test_primitives, so it is tested."""
    suite = generic_module("test_primitives")
    assert {op.name for op in UNARY_OPS} == set(suite.UNARY_REF)
    assert {op.name for op in BINARY_OPS} == set(suite.BINARY_REF)
    assert {op.name for op in REDUCE_OPS} == set(suite.REDUCE_REF)


def test_every_table_op_has_a_rule():
    suite = generic_module("test_nonfinite")
    assert {op.name for op in UNARY_OPS} == set(suite.UNARY_RULES)
    assert {op.name for op in BINARY_OPS} == set(suite.BINARY_RULES)
    assert {op.name for op in REDUCE_OPS} == set(suite.REDUCE_RULES)


def test_every_function_is_checked():
    suite = generic_module("test_gradcheck")
    covered = {name for case in suite.CASES for name in case.covers} | set(suite.NON_DIFFERENTIABLE)
    missing = suite.function_names() - covered
    assert not missing, f"Functions without a gradient check: {sorted(missing)}"


def test_every_kind_has_a_malformed_probe_of_each_verdict_it_names():
    """Each kind's fixed probes in test_entry_point_errors are all malformed: a probe it
    accepts would test nothing."""
    suite = generic_module("test_entry_point_errors")
    for k in suite.KINDS.values():
        accepted = [v for v in k.probes if k.verdict(v) is None]
        assert not accepted, f"kind {k.name!r} probes {accepted!r} are accepted values"
