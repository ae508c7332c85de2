"""What a build reuses from the one before: the runtime prelude's precompiled header (pch.py),
each cached object's symbol listing, and what it compiles for: the machine's CPU unless
``SIMULATOR_PORTABLE=1``, with fused multiply-adds where they were before and nowhere else."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from simulator import (
    build,
    compiler_errors,
    linemap,
    link_stubs,
    modes,
    pch,
    source_compile,
    syntax,
    toolchain,
)
from simulator.errors import SimBuildError

GXX = shutil.which("g++")
needs_gxx = pytest.mark.skipif(GXX is None, reason="g++'s precompiled headers need g++")
CUDA_SIM = build.RUNTIME_DIR / "cuda_sim.h"


def _translated(value: int, call: str = "sim_probe") -> str:
    """A translated source laid out as the build's are, whose prelude defines ``sim_probe``."""
    return textwrap.dedent(
        f"""\
        # 0 "/nowhere/prog.cu"
        # 0 "<built-in>"
        # 0 "<command-line>"
        # 1 "{CUDA_SIM}" 1
        constexpr int sim_probe = {value};
        # 0 "<command-line>" 2
        # 1 "/nowhere/prog.cu"
        static_assert({call} == {value}, "the prelude compiled is this text's");
        extern "C" int probe() {{ return {call}; }}
        """
    )


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("SIMULATOR_CACHE", str(folder))
    return folder


@pytest.fixture
def runs(monkeypatch):
    """Every compiler command the build runs, as its argument lists."""
    seen: list[list[str]] = []
    lock = threading.Lock()
    real = compiler_errors.invoke

    def recording(args, what):
        with lock:
            seen.append(list(args))
        return real(args, what)

    monkeypatch.setattr(compiler_errors, "invoke", recording)
    return seen


def _headers_built(seen: list[list[str]]) -> int:
    return sum("c++-header" in args for args in seen)


def _whole_compiles(seen: list[list[str]]) -> int:
    return sum(any(a.endswith(".sim.ii") for a in args) for args in seen)


def test_the_split_keeps_every_character():
    text = _translated(1)
    parts = pch.split(text, CUDA_SIM)
    assert parts is not None
    assert parts.head + parts.prelude + parts.rest == text
    assert parts.rest.startswith('# 1 "/nowhere/prog.cu"\n')
    assert "constexpr int sim_probe" in parts.prelude
    # Not laid out as g++ -E writes a force-included header: compiled whole.
    assert pch.split(text.replace(str(CUDA_SIM), "/elsewhere/cuda_sim.h"), CUDA_SIM) is None
    assert pch.split("int x;\n" + text, CUDA_SIM) is None


@needs_gxx
def test_a_changed_prelude_gets_its_own_header(cache, runs, tmp_path):
    flags = [*toolchain.common_flags(GXX), "-O2", "-fpermissive"]
    for value in (1, 2, 1):
        out = tmp_path / f"probe{value}.o"
        source_compile.compile_translated(GXX, flags, _translated(value), out, "the probe")
        assert "probe" in link_stubs.symbols(out)[0]
    # Two preludes, two headers; the third compile reused the first's, and no compile fell back
    # to the whole text (which a stale header would have made it do: its static_assert fails).
    assert sorted(p.name.split("-")[0] for p in cache.glob("prelude-*.gch")) == ["prelude", "prelude"]
    assert _headers_built(runs) == 2
    assert _whole_compiles(runs) == 0
    # Other flags: another header (g++ would load one built for other optimisation or sanitizers).
    source_compile.compile_translated(
        GXX, [*flags[:-2], "-O1", "-fpermissive"], _translated(1), tmp_path / "o1.o", "o1"
    )
    assert _headers_built(runs) == 3 and len(list(cache.glob("prelude-*.gch"))) == 3


@needs_gxx
def test_a_failing_compile_reports_the_whole_texts_messages(cache, runs, tmp_path):
    flags = [*toolchain.common_flags(GXX), "-O2", "-fpermissive"]
    with pytest.raises(SimBuildError) as err:
        text = _translated(1, call="sim_missing")
        source_compile.compile_translated(GXX, flags, text, tmp_path / "x.o", "prog.cu")
    assert "/nowhere/prog.cu:2:" in str(err.value) and "sim_missing" in str(err.value)
    assert _whole_compiles(runs) == 1  # the message is the whole text's, exactly as without the header


@needs_gxx
def test_concurrent_builds_share_one_header(cache, runs, tmp_path):
    flags = [*toolchain.common_flags(GXX), "-O2", "-fpermissive"]
    failures: list[BaseException] = []

    def one(i: int) -> None:
        try:
            source_compile.compile_translated(GXX, flags, _translated(7), tmp_path / f"c{i}.o", f"copy {i}")
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert _headers_built(runs) == 1 and _whole_compiles(runs) == 0
    assert len(list(cache.glob("prelude-*.gch"))) == 1
    kept = (".gch", ".gch.sha256", ".gch.lock")
    assert [p.name for p in cache.glob("prelude-*") if not p.name.endswith(kept)] == []  # no temporary left
    objects = {(tmp_path / f"c{i}.o").read_bytes() for i in range(4)}
    assert len(objects) == 1


@needs_gxx
@pytest.mark.parametrize("mode", ["fast", "memcheck", "racecheck-shared"])
def test_the_object_is_the_same_with_or_without_the_header(cache, tmp_path, monkeypatch, mode):
    src = tmp_path / "saxpy.cu"
    src.write_text(
        "#include <cstdio>\n"
        "__global__ void saxpy(float a, const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) y[i] = a * x[i] + y[i];\n}\n"
        "int main() { float* x; cudaMallocManaged(&x, 64); saxpy<<<1, 16>>>(2.0f, x, x, 16);\n"
        '    cudaDeviceSynchronize(); std::printf("%g\\n", x[3]); return 0; }\n'
    )
    text = build.translate_source(src, mode)
    flags = [
        *toolchain.common_flags(GXX),
        *modes.BUILD_NAMED[mode].kernel_flags,
        *build.target_flags(GXX),
        "-fpermissive",
    ]
    with_header = tmp_path / "with.o"
    source_compile.compile_translated(GXX, flags, text, with_header, str(src))
    assert list(cache.glob("prelude-*.gch")), "the build made no precompiled header"
    monkeypatch.setattr(source_compile, "_prelude_header", lambda *_: None)
    whole = tmp_path / "whole.o"
    source_compile.compile_translated(GXX, flags, text, whole, str(src))
    assert with_header.read_bytes() == whole.read_bytes()


def test_portable_is_a_knob(monkeypatch):
    monkeypatch.setenv(build.PORTABLE_VARIABLE, "1")
    assert build.portable() and build.target_flags(build.compiler()) == []
    monkeypatch.setenv(build.PORTABLE_VARIABLE, "yes")
    with pytest.raises(SimBuildError, match="SIMULATOR_PORTABLE='yes'.*set it to 1"):
        build.portable()


@needs_gxx
def test_portable_and_native_objects_are_kept_apart(cache, tmp_path, monkeypatch):
    src = tmp_path / "host.cpp"
    src.write_text(
        "float scale(float* v, int n) { float s = 0; for (int i = 0; i < n; ++i) s += v[i]; return s; }\n"
    )
    if build.target_flags(GXX) == []:
        pytest.skip("the compiler cannot tell this machine's CPU (-march=native): every build is portable")
    native = build.kernel_object(src, "fast")
    monkeypatch.setenv(build.PORTABLE_VARIABLE, "1")
    portable = build.kernel_object(src, "fast")
    assert native != portable


def _disassembly(obj: Path) -> dict[str, str]:
    """Each function's instructions in ``obj`` (objdump), by its name."""
    text = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(obj)], capture_output=True, text=True
    ).stdout
    found, name = {}, None
    for line in text.splitlines():
        if line.endswith(">:"):
            name = line.split("<", 1)[1][:-2]
            found[name] = ""
        elif name:
            found[name] += line + "\n"
    return found


def _one_gcc_by_two_names() -> bool:
    """Whether ``c++`` and ``g++`` on PATH are one GCC program (as a distribution installs them)."""
    found = [shutil.which(name) for name in ("c++", "g++")]
    return None not in found and len({str(Path(p).resolve()) for p in found if p}) == 1


@pytest.mark.skipif(not _one_gcc_by_two_names(), reason="needs c++ and g++ on PATH as one GCC program")
def test_c_plus_plus_and_g_plus_plus_share_the_runtime_and_objects(cache, runs, monkeypatch):
    """A build through ``c++`` (the CXX that CMake runs a project's nvcc with) finds what a build
    through ``g++`` cached, instead of building the runtime again; ``gcc`` keys apart."""
    assert toolchain.compiler_id("c++") == toolchain.compiler_id("g++")
    assert toolchain.compiler_id("c++").startswith(("g++ ", "g++-"))
    if shutil.which("gcc") is not None:
        assert toolchain.compiler_id("gcc") != toolchain.compiler_id("g++")
    monkeypatch.setenv("CXX", "g++")
    first = build.reaper_program()  # keyed as the runtime and every object are: by compiler_id
    compiles = sum("-o" in args for args in runs)
    monkeypatch.setenv("CXX", "c++")
    assert build.reaper_program() == first
    assert sum("-o" in args for args in runs) == compiles  # nothing compiled again


@needs_gxx
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the FMA policy is x86-64's")
@pytest.mark.skipif(shutil.which("objdump") is None, reason="needs objdump to read the instructions")
def test_fused_multiply_adds_stay_in_device_code(cache, tmp_path):
    if not build.host_has_fma(GXX):
        pytest.skip("this CPU has no FMA instructions")
    src = tmp_path / "fma.cu"
    src.write_text(
        'extern "C" __device__ __attribute__((noinline))\n'
        "float dev_madd(float a, float b, float c) { return a * b + c; }\n"
        'extern "C" float host_madd(float a, float b, float c) { return a * b + c; }\n'
        'extern "C" __global__ void k(float* v) { v[threadIdx.x] = dev_madd(v[0], v[1], v[2]); }\n'
    )
    code = _disassembly(build.kernel_object(src, "fast"))
    assert "vfmadd" in code["dev_madd"]
    assert "vfmadd" not in code["host_madd"]
    no_fmad = _disassembly(build.kernel_object(src, "fast", fmad=False))
    assert "vfmadd" not in no_fmad["dev_madd"]


@needs_gxx
def test_an_objects_symbols_are_read_once(cache, tmp_path, monkeypatch):
    src = tmp_path / "lib.cpp"
    src.write_text('extern "C" int used(void);\nextern "C" int defined_here(void) { return used(); }\n')
    obj = build.kernel_object(src, "fast")
    first = build.object_symbols(obj)
    assert first == link_stubs.symbols(obj)
    assert "defined_here" in first[0] and "used" in first[1]

    def unread(_path):
        raise AssertionError("read the symbol table again")

    monkeypatch.setattr(link_stubs, "symbols", unread)
    assert build.object_symbols(obj) == first


@needs_gxx
def test_a_host_source_left_unchecked_under_memcheck_reuses_the_fast_object(cache, runs, tmp_path):
    # memcheck compiles an unchecked host source with the fast build's flags: one object for both.
    src = tmp_path / "host_only.cpp"
    src.write_text('extern "C" int twice(int x) { return 2 * x; }\n')
    fast = build.kernel_object(src, "fast")
    before = len(runs)
    assert build.kernel_object(src, "memcheck", unchecked_host=True) == fast
    assert not any("-c" in args for args in runs[before:]), "compiled again for memcheck"
    before = len(runs)
    checked = build.kernel_object(src, "memcheck")  # host code judged: instrumented, its own object
    assert checked != fast
    assert any("-c" in args and "-fsanitize=address,undefined" in args for args in runs[before:])


def test_the_front_ends_quick_scans_find_what_the_full_ones_do():
    """The library walk's lookahead and the swap's needle only skip text where nothing matches."""
    assert all(linemap._GCC_ONLY_NEEDLE in rx.pattern for rx, _ in linemap._GCC_ONLY)
    full = re.compile(r"<<<|__attribute__\(\(shared\)\)|\basm\b|\b__asm__\b")
    text = (
        'k<<<1, 2>>>(); __attribute__((shared)) int s; asm("nop"); int x __asm__("y");\n'
        "plasma asm_ _asm __asm__x basm <<<< <<<<<<asm __asm__asm\n" + _translated(3)
    )
    expected = [m.start() for m in full.finditer(text)]
    assert [m.start() for m in syntax._LIBRARY_CONSTRUCTS.finditer(text)] == expected
    assert syntax._library_constructs(text) == expected  # the str.find scan of the walk


def _swapped_whole(text: str) -> str:
    """The GCC-only swap done over the whole text, pattern after pattern (the reference)."""
    for rx, repl in linemap._GCC_ONLY:
        text = rx.sub(
            lambda m, r=repl: r.rjust(len(m.group(0))) if len(r) <= len(m.group(0)) else m.group(0), text
        )
    return text


@pytest.mark.parametrize("end", ["", "\n", "\r\n"], ids=["no_newline", "newline", "crlf"])
def test_the_gcc_only_swap_of_the_needles_lines_is_the_whole_texts(end):
    """linemap._for_clang scans only the lines that hold the needle; the text is the one both
    patterns give over the whole text, for the lines libstdc++ writes and for near misses."""
    lines = [
        "      using __type = _Index_tuple<__integer_pack(_Num)...>;",
        "    = integer_sequence<_Tp, __integer_pack(_Num)...>;",
        "\tusing __type = _Index_tuple<__integer_pack(_Num)...>; // not alone on its line",
        "x using __type = _Index_tuple<__integer_pack(_Num)...>;",
        "__integer_pack __integer_pack(_Num)",
        "= integer_sequence<_Tp, __integer_pack(_Num)...>;= integer_sequence<_Tp, __integer_pack(_Num)...>;",
        "int unrelated;",
    ]
    for order in (lines, lines[::-1], lines[1:] + lines[:1]):
        text = end.join(order) + end
        assert linemap._for_clang(text) == _swapped_whole(text)
        assert linemap._for_clang(order[0]) == _swapped_whole(order[0])
    swapped = linemap._for_clang("\n".join(lines))
    assert swapped.count("__make_integer_seq") == 2 and len(swapped) == len("\n".join(lines))
    assert linemap._for_clang(_translated(5)) == _translated(5)


def test_the_compiler_headers_build_number_is_the_wheels_metadata(tmp_path, monkeypatch):
    """crt_build reads the first nvidia_cuda_crt dist-info's Version line, as importlib.metadata
    would, and asks importlib.metadata only where there is none."""
    from importlib import metadata

    toolchain._wheel_version.cache_clear()
    try:
        expected = int(metadata.version("nvidia-cuda-crt").split(".")[2])
    except metadata.PackageNotFoundError:
        expected = 0
    assert toolchain.crt_build() == expected
    info = tmp_path / "first" / "nvidia_cuda_crt-13.0.123.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: nvidia-cuda-crt\nVersion: 13.0.123\n\nbody\n"
    )
    monkeypatch.setattr("sys.path", [str(tmp_path / "first"), *sys.path])
    toolchain._wheel_version.cache_clear()

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    try:
        # Read from the file itself: importlib.metadata is not asked.
        monkeypatch.setattr(metadata, "version", missing)
        assert toolchain.crt_build() == 123
        monkeypatch.setattr("sys.path", [str(tmp_path / "empty")])
        toolchain._wheel_version.cache_clear()
        assert toolchain.crt_build() == 0
        monkeypatch.setattr(metadata, "version", lambda name: "13.0.77")
        assert toolchain.crt_build() == 77  # no dist-info found: importlib.metadata decides
    finally:
        toolchain._wheel_version.cache_clear()
