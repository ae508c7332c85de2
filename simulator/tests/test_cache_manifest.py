"""A source's manifest (simulator/source_manifest.py) lets a build find its cached object without
preprocessing, and only while every file the preprocessor read and every folder where a new
header could be found first is as it was: a change to either rebuilds, never runs a stale object."""

from __future__ import annotations

import contextlib
import json
import os
import textwrap
import time
from pathlib import Path

import pytest

from simulator import build, cuda_headers, source_compile, source_manifest
from simulator.run import run_program


@pytest.fixture
def settled(monkeypatch):
    """Files written by the test count as settled at once (else each build waits SETTLE_S)."""
    monkeypatch.setattr(source_manifest, "SETTLE_S", 0.0)
    # The cache's copy of NVIDIA's headers is an include folder of every build: made first, so
    # that another test process making it now cannot leave it too recent for the test's manifests.
    cuda_headers.include_dir(build.cache_dir())
    time.sleep(0.05)  # past the file system's time resolution


def _no_preprocessor(monkeypatch):
    """Make any further preprocessing fail the test: a build must come from its manifest."""

    def refuse(*_args, **_kwargs):
        raise AssertionError("preprocessed although the manifest should have served the object")

    monkeypatch.setattr(source_compile, "run_compiler", refuse)
    monkeypatch.setattr(source_compile, "preprocess", refuse)
    monkeypatch.setattr(source_compile, "_listed_preprocess", refuse)


def _output(src: Path, capfd, *include_dirs: Path) -> str:
    res = run_program([str(src)], include_dirs=[str(d) for d in include_dirs])
    assert res.status == 0
    return capfd.readouterr().out


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _manifests(src: Path) -> list[Path]:
    """The manifests in the (shared) cache that list ``src`` among the files read."""
    found = []
    for manifest in sorted(build.cache_dir().glob(f"{src.stem}-*.deps")):
        with contextlib.suppress(OSError, ValueError, KeyError):
            if str(src.resolve()) in json.loads(manifest.read_text())["files"]:
                found.append(manifest)
    return found


def test_a_cached_cuda_object_comes_from_its_manifest_until_a_header_changes(tmp_path, capfd, monkeypatch):
    header = _write(tmp_path / "inc" / "value.h", "#define VALUE 3\n")
    src = _write(
        tmp_path / "manifest_kernel.cu",
        """\
        #include <cstdio>
        #include "value.h"
        __global__ void put(int* out) { *out = VALUE * 2; }
        int main() {
            int* d;
            cudaMallocManaged(&d, sizeof(int));
            put<<<1, 1>>>(d);
            cudaDeviceSynchronize();
            std::printf("%d\\n", *d);
            return 0;
        }
        """,
    )
    monkeypatch.setattr(source_manifest, "SETTLE_S", 0.0)
    time.sleep(0.05)
    first = source_compile.kernel_object(src, "fast", include_dirs=[str(tmp_path / "inc")])
    assert len(_manifests(src)) == 1
    with monkeypatch.context() as m:
        _no_preprocessor(m)
        assert source_compile.kernel_object(src, "fast", include_dirs=[str(tmp_path / "inc")]) == first
    # Same size, same modification time: only the content tells the change.
    stamp = header.stat()
    header.write_text("#define VALUE 4\n")
    os.utime(header, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    second = source_compile.kernel_object(src, "fast", include_dirs=[str(tmp_path / "inc")])
    assert second != first
    assert _output(src, capfd, tmp_path / "inc") == "8\n"


def test_a_header_that_a_new_file_would_shadow_rebuilds_the_cached_object(tmp_path, capfd, settled):
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    _write(second_dir / "shadowed.h", '#define WHICH "second"\n')
    _write(second_dir / "sub" / "deep.h", '#define DEEP "second"\n')
    _write(first_dir / "sub" / "other.h", "// a folder that exists before the header appears in it\n")
    src = _write(
        tmp_path / "main.cpp",
        """\
        #include <cstdio>
        #include "shadowed.h"
        #include "sub/deep.h"
        int main() { std::printf("%s %s\\n", WHICH, DEEP); return 0; }
        """,
    )
    flags = (first_dir, second_dir)
    time.sleep(0.05)
    assert _output(src, capfd, *flags) == "second second\n"
    assert _output(src, capfd, *flags) == "second second\n"
    assert _manifests(src)
    _write(first_dir / "shadowed.h", '#define WHICH "first"\n')
    assert _output(src, capfd, *flags) == "first second\n"
    time.sleep(0.05)
    _write(first_dir / "sub" / "deep.h", '#define DEEP "first"\n')
    assert _output(src, capfd, *flags) == "first first\n"


def test_a_header_in_an_include_folder_made_later_rebuilds_the_cached_object(tmp_path, settled, monkeypatch):
    # g++ skips a missing -I folder (the simulator's own -I refuses one; a host compiler option,
    # as nvcc passes them, may name one): a header created there later is found first.
    later, there = tmp_path / "elsewhere" / "include", tmp_path / "there"
    later.parent.mkdir()
    _write(there / "which.h", "#define WHICH 1\n")
    src = _write(tmp_path / "src" / "later.cpp", '#include "which.h"\nint main() { return WHICH; }\n')
    flags = ["-I", str(later), "-I", str(there)]
    time.sleep(0.05)
    first = source_compile.kernel_object(src, "fast", extra_flags=flags)
    with monkeypatch.context() as m:
        _no_preprocessor(m)
        assert source_compile.kernel_object(src, "fast", extra_flags=flags) == first
    _write(later / "which.h", "#define WHICH 2\n")
    assert source_compile.kernel_object(src, "fast", extra_flags=flags) != first


def test_a_cached_object_whose_file_was_just_written_gets_no_manifest(tmp_path, monkeypatch):
    # A change within the file system's time resolution would go unseen: no manifest is written
    # while a file read (or a folder watched) is younger than SETTLE_S, so the next build
    # preprocesses again. The folder is left to settle; the file is rewritten in place.
    monkeypatch.setattr(source_manifest, "SETTLE_S", 0.5)
    src = _write(tmp_path / "fresh.cpp", "int main() { return 1; }\n")
    time.sleep(0.6)
    with open(src, "r+") as fh:  # in place: the folder's times stay as they were
        fh.write("int main() { return 0; }\n")
    source_compile.kernel_object(src, "fast")
    assert not _manifests(src)
    time.sleep(0.6)
    source_compile.kernel_object(src, "fast")
    assert len(_manifests(src)) == 1


@pytest.mark.parametrize(
    "text",
    [
        "const char* when = __TIME__;\nint main() { return when[0] == 0; }\n",
        '#if __has_include("later.h")\n#include "later.h"\n#endif\nint main() { return 0; }\n',
    ],
    ids=["time-macro", "has-include"],
)
def test_a_source_whose_text_depends_on_more_than_its_files_gets_no_cache_manifest(tmp_path, settled, text):
    src = _write(tmp_path / "volatile.cpp", text)
    time.sleep(0.05)
    source_compile.kernel_object(src, "fast")
    assert not _manifests(src)


def test_a_damaged_cache_manifest_is_not_trusted(tmp_path, settled, monkeypatch):
    src = _write(tmp_path / "damaged.cpp", "int main() { return 0; }\n")
    time.sleep(0.05)
    obj = source_compile.kernel_object(src, "fast")
    (manifest,) = _manifests(src)
    assert source_manifest.lookup(manifest) == obj
    # Planted content with no matching record: never read as a manifest.
    manifest.unlink()
    manifest.write_text('{"object": "elsewhere.o", "files": {}, "folders": {}}')
    assert source_manifest.lookup(manifest) is None
    with monkeypatch.context() as m:
        _no_preprocessor(m)
        with pytest.raises(AssertionError, match="preprocessed"):
            source_compile.kernel_object(src, "fast")
    assert source_compile.kernel_object(src, "fast") == obj
    assert source_manifest.lookup(manifest) == obj


def test_a_cache_manifest_reads_again_only_a_file_whose_identity_changed(tmp_path, settled, monkeypatch):
    header = _write(tmp_path / "same.h", "#define SAME 0\n")
    src = _write(tmp_path / "same.cpp", '#include "same.h"\nint main() { return SAME; }\n')
    time.sleep(0.05)
    obj = source_compile.kernel_object(src, "fast")
    (manifest,) = _manifests(src)
    read: list[str] = []
    real = source_manifest._read_regular
    monkeypatch.setattr(source_manifest, "_read_regular", lambda path: read.append(path) or real(path))
    assert source_manifest.lookup(manifest) == obj
    assert read == []
    # The same bytes written again: a new change time, so the file is read, and its digest matches.
    header.write_text("#define SAME 0\n")
    assert source_manifest.lookup(manifest) == obj
    assert [Path(path).name for path in read] == ["same.h"]


def test_each_build_mode_has_its_own_cache_manifest(tmp_path, settled):
    src = _write(tmp_path / "modes.cpp", "int main() { return 0; }\n")
    time.sleep(0.05)
    fast = source_compile.kernel_object(src, "fast")
    synccheck = source_compile.kernel_object(src, "synccheck")
    assert fast != synccheck
    assert len(_manifests(src)) == 2
    assert {source_manifest.lookup(m) for m in _manifests(src)} == {fast, synccheck}


def test_a_response_file_rules_out_a_cache_manifest(tmp_path, settled):
    rsp = _write(tmp_path / "flags.rsp", "-DVALUE=1\n")
    src = _write(tmp_path / "response.cpp", "int main() { return VALUE - 1; }\n")
    time.sleep(0.05)
    source_compile.kernel_object(src, "fast", extra_flags=[f"@{rsp}"])
    assert not _manifests(src)


def test_a_source_whose_path_the_markers_escape_gets_no_cache_manifest(tmp_path, settled):
    # A name that is not plain ASCII (g++ writes some bytes of a name in its line markers as octal
    # escapes): preprocessed every time rather than hashed under a name that could be read wrongly.
    src = _write(tmp_path / "f\u00e4cher" / "escaped.cpp", "int main() { return 0; }\n")
    time.sleep(0.05)
    source_compile.kernel_object(src, "fast")
    assert not _manifests(src)


def _refuse_search_question(monkeypatch):
    """Make a separate ``g++ -E -v /dev/null`` fail the test: the preprocessor's run lists the folders."""

    def refuse(_command):
        raise AssertionError("asked the compiler for its include search path a second time")

    monkeypatch.setattr(source_manifest, "search_dirs", refuse)


@pytest.mark.parametrize("name", ["listed.cu", "listed.cpp"])
def test_the_manifest_takes_the_search_folders_from_the_preprocessors_own_run(
    tmp_path, settled, monkeypatch, name
):
    # The folders watched are those a separate question gives, the missing -I folder among them.
    missing, there = tmp_path / "missing" / "include", tmp_path / "there"
    missing.parent.mkdir()
    _write(there / "value.h", "#define VALUE 0\n")
    src = _write(tmp_path / "src" / name, '#include "value.h"\nint main() { return VALUE; }\n')
    flags = ["-I", str(missing), "-I", str(there)]
    time.sleep(0.05)
    with monkeypatch.context() as m:
        _refuse_search_question(m)
        obj = source_compile.kernel_object(src, "fast", extra_flags=flags)
    (manifest,) = _manifests(src)
    folders = set(json.loads(manifest.read_text())["folders"])
    assert str(missing.parent) in folders and str(there) in folders
    asked = source_manifest.search_dirs([build.compiler(), *flags, "-x", "c++"])
    assert str(missing) in asked and str(there) in asked
    listed = source_compile.invoke(
        [build.compiler(), "-v", *flags, "-x", "c++", "-E", "/dev/null"], "a listing"
    )
    assert source_manifest.search_list(listed.stderr) == asked
    with monkeypatch.context() as m:
        _no_preprocessor(m)
        assert source_compile.kernel_object(src, "fast", extra_flags=flags) == obj


@pytest.mark.parametrize("name", ["broken.cu", "broken.cpp"])
def test_a_failing_preprocessor_says_only_what_failed(tmp_path, name):
    src = _write(tmp_path / name, '#include "no_such_header.h"\nint main() { return 0; }\n')
    with pytest.raises(build.SimBuildError, match="no_such_header.h") as failed:
        source_compile.kernel_object(src, "fast")
    assert "search starts here" not in str(failed.value)
