"""Warp-synchronous code: lanes that exchange values through memory with no __syncwarp, leaning
on a converged warp reading before any lane writes (``v[tid] += v[tid + 16]``). The front end
routes such statements through ``::__sim::lockstep_assign``, so every mode computes what a GPU
does; racecheck still reports the hazard, as CUDA's memory model makes it one."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import KERNELS, run_cli

PROGRAM = KERNELS / "program_lockstep.cu"


def _lines(stdout: str) -> dict[str, list[float]]:
    out = {}
    for line in stdout.splitlines():
        name, *values = line.split()
        if name in ("reduce", "butterfly"):
            out[name] = [float(v) for v in values]
    return out


@pytest.mark.parametrize("mode", ["fast", "memcheck", "synccheck"])
def test_warp_synchronous_reductions_compute_what_a_converged_warp_does(mode):
    proc = run_cli("run", str(PROGRAM), "--mode", mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = _lines(proc.stdout)
    data = (np.arange(3 * 128) * 37) % 101 - 50
    assert got["reduce"] == data.reshape(3, 128).sum(axis=1).tolist()
    values = 0.25 * ((np.arange(16) * 5) % 16)
    assert got["butterfly"] == [values.sum(), 2 * values.sum()] * 16


def test_racecheck_still_reports_the_lanes_hazard():
    proc = run_cli("run", str(PROGRAM), "--mode", "racecheck")
    assert proc.returncode == 66, proc.stdout + proc.stderr
    output = (proc.stdout + proc.stderr).splitlines()
    lines = [ln for ln in output if "racecheck: data race (shared memory)" in ln]
    assert any("in volatile_reduce" in ln and "program_lockstep.cu:3" in ln for ln in lines), lines


def test_only_statements_that_read_another_element_of_their_target_array_are_rewritten(tmp_path):
    from simulator.build import translate_source

    source = tmp_path / "k.cu"
    source.write_text(
        "__global__ void k(float* a, float* b, int n) {\n"
        "    int i = threadIdx.x;\n"
        "    a[i] = a[i] * 2.0f;\n"  # its own element: lane-private
        "    b[i] = a[i + 1];\n"  # another array
        "    for (int s = 1; s < n; s += s) a[i] += a[i + s];\n"  # another element: rewritten
        "    a[i++] += a[i + 1];\n"  # a target with a side effect: left alone
        "    if (n > 0 && i < n) { a[i] += a[i + n]; }\n"  # a tree step: no lane reads a stored element
        "    if (i < 16) a[i] = a[i] + a[i + 8];\n"  # lanes 0-7 read what lanes 8-15 store: rewritten
        "}\n"
    )
    text = translate_source(source)
    body = text[text.index("void k(") :]
    assert body.count("::__sim::lockstep_assign(") == 2
    assert "::__sim::lockstep_assign(a[i], [&]() { return a[i] + a[i + 8]; })" in body
    assert "a[i] += a[i + n];" in body
    rewritten = "::__sim::lockstep_assign(a[i], [&]() { auto __sim_lockstep_value = a[i]; "
    assert rewritten + "__sim_lockstep_value += a[i + s]; return __sim_lockstep_value; })" in body
    assert "a[i] = a[i] * 2.0f;" in body and "b[i] = a[i + 1];" in body


def test_the_statement_scans_read_the_text_as_its_slices_do():
    """The front end looks beside a statement by scanning, not by slicing the megabytes of text
    before it; each scan gives what the slice, strip and expression it stands for give, for every
    start and end, with Unicode whitespace and word characters beside ``if`` and ``else``."""
    import itertools
    import re

    from simulator import syntax_device as sd

    pieces = ["if", "else", "é", "_", "1", "x", " ", "\n", "\u00a0", "\u2003", "(", ")", "{", ";", ":"]
    texts = ["".join(p) for n in range(4) for p in itertools.product(pieces, repeat=n)]
    texts += ["while (x)\n  if (i < n) {\n", "xif (i < n)", "\u00e9if (a)", "} else\n", "  if\u2003(a) { "]
    for text in texts:
        for at in range(-len(text) - 2, len(text) + 3):
            stop = sd._stop(text, at)
            assert stop == len(text[:at])
            assert sd._stripped_end(text, stop) == len(text[:at].rstrip())
            start = slice(at, None).indices(len(text))[0]
            assert text[sd._stripped_start(text, start) :] == text[at:].lstrip()
            assert sd._ends_with_if(text, stop) == bool(re.search(r"\bif\s*$", text[:at])), (text, at)
