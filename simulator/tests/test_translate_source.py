"""``translate_source`` returns the very text that a build compiles for the same source and mode:
what a reader inspects (or feeds to ``-fopt-info``) is what runs."""

from __future__ import annotations

import pytest

from .conftest import KERNELS

PROGRAM = KERNELS / "program_block_loops.cu"


class _Captured(Exception):
    """Raised in place of the compile, carrying the text it was given."""


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
@pytest.mark.parametrize("fmad", [True, False])
def test_the_text_is_what_the_build_compiles(mode, fmad, tmp_path, monkeypatch):
    from simulator import source_compile
    from simulator.build import translate_source
    from simulator.toolchain import compiler, host_has_fma

    if fmad and not host_has_fma(compiler()):
        pytest.skip("this CPU has no fused multiply-add: -fmad=true translates as -fmad=false")
    monkeypatch.setenv("SIMULATOR_CACHE", str(tmp_path))

    def capture(cxx, flags, text, out, what):
        raise _Captured(text)

    monkeypatch.setattr(source_compile, "compile_translated", capture)
    with pytest.raises(_Captured) as built:
        source_compile.kernel_object(PROGRAM, mode, fmad=fmad)
    assert translate_source(PROGRAM, mode, fmad=fmad) == built.value.args[0]


def test_a_source_translates_to_the_same_text_whatever_was_translated_before():
    # Inline PTX's labels are numbered per statement: the numbers start again with each translation.
    from simulator.build import translate_source

    program = KERNELS / "program_ptx.cu"
    first = translate_source(program)
    translate_source(KERNELS / "program_ptx_threads.cu")
    assert translate_source(program) == first
