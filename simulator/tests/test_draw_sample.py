"""``benchmarks/draw_sample.py`` and ``draw_fresh.py``: the seeded draws behind the sample manifests.

Which files are candidates (a ``main``, built alone, no library outside the subset), that the draw
repeats for a seed, passes over programs reviewed as checking nothing, and stops for a drawn
program nobody has reviewed; for the fresh samples, that a program is read from its own Makefile
(through ``make --dry-run``) or CMakeLists.txt, that what it needs is judged from the headers the
preprocessor includes, and that programs tried before or drawn by the other sample are left out."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys

import pytest

from .conftest import REPO

MAIN = "int main() { return 0; }\n"


def _draw_module():
    spec = importlib.util.spec_from_file_location("draw_sample", REPO / "benchmarks" / "draw_sample.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["draw_sample"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def draw(tmp_path, monkeypatch):
    module = _draw_module()
    src = tmp_path / "src"
    files = {
        # a program and the kernel file it includes
        "alone/prog.cu": '#include "kernel.cu"\n' + MAIN,
        "alone/kernel.cu": "__global__ void k() {}\n",
        # two programs side by side, each with its own main
        "pair/one.cu": MAIN,
        "pair/two.cu": MAIN,
        # needs a second file it does not include: not built alone
        "split/main.cu": MAIN,
        "split/gold.cpp": "void gold() {}\n",
        # a library outside the subset
        "fft/fft.cu": "#include <cufft.h>\n" + MAIN,
        # no main
        "lib/lib.cu": "__global__ void k() {}\n",
        # a header from a git submodule, empty in a plain clone
        ".gitmodules": '[submodule "ext"]\n\tpath = ext/lib\n\turl = https://example.org/lib.git\n',
        "usesext/prog.cu": '#include "../ext/lib/lib.h"\n' + MAIN,
    }
    for rel, text in files.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    monkeypatch.setattr(module, "SOURCES", {"src": ("someone/src", "0" * 40, "**/*.cu", 2)})
    return module, tmp_path


def test_candidates_define_main_build_alone_and_need_no_other_library_or_submodule(draw):
    module, root = draw
    found = [p.relative_to(root / "src").as_posix() for p in module.candidates(root, "src", "**/*.cu")]
    assert found == ["alone/prog.cu", "pair/one.cu", "pair/two.cu"]


def test_the_draw_repeats_for_a_seed_and_passes_over_programs_that_check_nothing(draw, monkeypatch):
    module, root = draw
    names = ["src/alone/prog", "src/pair/one", "src/pair/two"]
    monkeypatch.setattr(module, "CHECKS", dict.fromkeys(names, module.EXIT))
    first, unreviewed = module.draw(root, seed=7)
    assert not unreviewed
    assert first == module.draw(root, seed=7)[0]
    drawn = [e["name"] for e in first["programs"]]
    assert len(drawn) == 2 and set(drawn) <= set(names)
    assert all(e["exit_status"] is True for e in first["programs"])
    assert first["programs"][0]["cwd"] == first["programs"][0]["sources"][0].rsplit("/", 1)[0]

    # One of them checks nothing: the next in the shuffled order takes its place.
    left_out = (set(names) - set(drawn)).pop()
    monkeypatch.setitem(module.CHECKS, drawn[0], None)
    again = [e["name"] for e in module.draw(root, seed=7)[0]["programs"]]
    assert sorted(again) == sorted([drawn[1], left_out])
    assert "1 passed over as not self-checking" in module.draw(root, seed=7)[0]["about"]


def test_an_unreviewed_program_stops_the_draw_with_a_proposed_check(draw, monkeypatch, capsys):
    module, root = draw
    (root / "src" / "pair" / "one.cu").write_text(
        'int main() { bool ok = true; printf(ok ? "Test passed\\n" : "Test failed\\n"); }\n'
    )
    monkeypatch.setattr(module, "CHECKS", {"src/alone/prog": None, "src/pair/two": None})
    manifest, unreviewed = module.draw(root, seed=7)
    assert unreviewed == ["'src/pair/one': {'passes': 'Test\\\\ passed'},"]
    out = root / "out.json"
    assert module.main(["--root", str(root), "--out", str(out)]) == 2
    assert not out.exists()
    assert "enter their checks in CHECKS" in capsys.readouterr().out


@pytest.mark.parametrize(
    "source,expected",
    [
        ('printf(ok ? "Test passed\\n" : "Test failed\\n");', "Test passed"),
        ('printf("Arrays do not match.\\n"); printf("Arrays match.\\n");', "Arrays match"),
        ('printf("Result = %s\\n", "PASS");', "PASS"),
        ('printf("mismatch at %d\\n", i);', None),
    ],
)
def test_the_proposed_verdict_is_the_first_unnegated_success_line(source, expected):
    assert _draw_module().verdict_text(source) == expected


# --- the fresh samples: whole programs as their own build files define them --------------------

HEC_MAKEFILE = """\
CC = nvcc
ARCH = sm_60
program = main
source = main.cu util.cu
obj = $(source:.cu=.o)
CFLAGS := -std=c++17 -Xcompiler -Wall -arch=$(ARCH) -I../include -DUSE_FAST=1
$(program): $(obj)
\t$(CC) $(CFLAGS) $(obj) -o $@ -lcublas
%.o: %.cu
\t$(CC) $(CFLAGS) -c $< -o $@
run: $(program)
\t./$(program) 64 10 > out.txt
"""
CMAKELISTS = """\
project(demo LANGUAGES CXX CUDA)
include_directories(common)
add_library(shared STATIC shared.cu)
add_executable(alpha alpha.cu)  # a comment
target_link_libraries(alpha shared CUDA::cublas)
target_include_directories(alpha PRIVATE inc)
add_executable(beta beta.cu beta_gold.cpp)
target_link_libraries(beta PRIVATE CUDA::cufft)
add_executable(${NAME} ${NAME}.cu)
"""


@pytest.fixture
def finder(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    for name in ("build_files", "program_finder", "draw_fresh"):
        sys.modules.pop(name, None)
    import program_finder

    return program_finder


def _tree(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make for its dry run")
def test_a_makefile_is_read_through_make_dry_run(finder, tmp_path):
    _tree(
        tmp_path,
        {
            "suite/src/a-cuda/Makefile": HEC_MAKEFILE,
            "suite/src/a-cuda/main.cu": MAIN,
            "suite/src/a-cuda/util.cu": "",
            "suite/src/include/h.h": "",
        },
    )
    (got,), refused = finder.make_programs(tmp_path / "suite", "src/*-cuda", {"CC": "nvcc", "ARCH": "sm_80"})
    assert not refused
    assert got.name == "src/a-cuda" and got.sources == ["src/a-cuda/main.cu", "src/a-cuda/util.cu"]
    assert got.include == ["src/include"] and got.defines == ["USE_FAST=1"]
    # the run target's command, its redirection left out; the library the link line names
    assert got.args == ["64", "10"] and got.libraries == ["cublas"]
    assert got.build == {
        "system": "make",
        "dir": "src/a-cuda",
        "program": "main",
        "vars": {"CC": "nvcc", "ARCH": "sm_80"},
    }


def test_cmake_executables_with_their_folders_libraries_and_project_libraries(finder, tmp_path):
    _tree(tmp_path, {f"proj/{n}": "" for n in ("alpha.cu", "beta.cu", "beta_gold.cpp", "shared.cu")})
    _tree(tmp_path, {"proj/CMakeLists.txt": CMAKELISTS, "proj/common/x.h": "", "proj/inc/y.h": ""})
    got = {c.name: c for c in finder.cmake_programs(tmp_path, "proj", ["top"])}
    assert sorted(got) == ["proj/alpha", "proj/beta"]  # the call built from a variable is passed over
    alpha, beta = got["proj/alpha"], got["proj/beta"]
    assert alpha.sources == ["proj/alpha.cu", "proj/shared.cu"] and alpha.libraries == ["cublas"]
    assert alpha.include == ["top", "proj/common", "proj/inc"] and beta.include == ["top", "proj/common"]
    assert beta.sources == ["proj/beta.cu", "proj/beta_gold.cpp"] and beta.libraries == ["cufft"]
    assert alpha.build == {"system": "cmake", "dir": "proj", "program": "alpha"}


def test_what_a_program_needs_is_read_as_the_preprocessor_includes_it(finder, tmp_path):
    scope = re.compile(r"(?:^|/)(?:cusparse|windows|mpi)[^/]*\.h$")
    guarded = "#ifdef _WIN32\n#include <windows.h>\n#endif\n#ifdef USE_MPI\n#include <mpi.h>\n#endif\n"
    _tree(
        tmp_path,
        {
            "p/guarded.cu": guarded + MAIN,
            "p/sparse.cu": '#include "k.h"\n' + MAIN,
            "p/k.h": "#include <cusparse.h>\n",
            "p/data.txt": "",
        },
    )

    def candidate(source, **kw):
        return finder.Candidate(name=source, sources=[f"p/{source}"], cwd="p", **kw)

    assert finder.needs(tmp_path, candidate("guarded.cu"), scope, {"cublas"}) is None
    assert (
        finder.needs(tmp_path, candidate("guarded.cu", defines=["USE_MPI"]), scope, set()) == "includes mpi.h"
    )
    assert finder.needs(tmp_path, candidate("sparse.cu"), scope, set()) == "includes cusparse.h"
    assert finder.needs(tmp_path, candidate("guarded.cu", libraries=["gsl"]), scope, set()) == "links gsl"
    ok = candidate("guarded.cu", args=["data.txt", "-n", "1.5", "10"])
    assert finder.needs(tmp_path, ok, scope, set()) is None
    gone = candidate("guarded.cu", args=["../data/big.bin", "3"])
    assert finder.needs(tmp_path, gone, scope, set()) == "reads ../data/big.bin, which the checkout lacks"
    assert finder.unfetched_data(tmp_path, ok) is None
    (tmp_path / "p" / "data.tar.gz.dvc").write_text("outs:\n- path: data.tar.gz\n")  # kept with DVC
    assert finder.unfetched_data(tmp_path, ok) == "data.tar.gz"


def test_the_fresh_draw_repeats_avoids_tried_programs_and_keeps_sources_apart(finder, tmp_path, monkeypatch):
    import draw_fresh

    files = {f"kit/{n}/{n}.cu": MAIN for n in ("one", "two", "three", "four", "gl")}
    files["kit/gl/gl.cu"] = "#include <GL/gl.h>\n" + MAIN
    files.update(
        {
            f"kit/{n}/CMakeLists.txt": f"add_executable({n} {n}.cu)\n"
            for n in ("one", "two", "three", "four", "gl")
        }
    )
    _tree(tmp_path, files)
    kit = draw_fresh.Source("kit", "someone/kit", "1" * 40, "cmake", ".")
    monkeypatch.setattr(draw_fresh, "TRIED", {"kit": {"four"}})
    names = [f"kit/{n}/{n}" for n in ("one", "two", "three")]
    monkeypatch.setattr(draw_fresh, "CHECKS", dict.fromkeys(names, draw_fresh.EXIT))
    sources = {"kit": (kit, 2)}
    first, about, unreviewed = draw_fresh.draw_sources(tmp_path, 5, sources, set(), with_build=True)
    assert not unreviewed and first == draw_fresh.draw_sources(tmp_path, 5, sources, set(), True)[0]
    drawn = [e["name"] for e in first]
    assert len(drawn) == 2 and set(drawn) <= set(names)
    assert first[0]["build"]["system"] == "cmake" and first[0]["exit_status"] is True
    assert "left out before the draw: 1 tried before; 1 with an out-of-scope header" in about[0]
    # a program the other sample drew is not drawn again; the one left takes its place
    again, _, _ = draw_fresh.draw_sources(tmp_path, 5, sources, {drawn[0]}, with_build=False)
    assert drawn[0] not in [e["name"] for e in again] and "build" not in again[0]
    # one whose data is kept with DVC and not fetched is passed over; the others keep their order
    (tmp_path / "kit" / drawn[0].split("/")[1] / "input.bin.dvc").write_text("outs:\n- path: input.bin\n")
    unfetched, about, _ = draw_fresh.draw_sources(tmp_path, 5, sources, set(), with_build=False)
    assert [e["name"] for e in unfetched] == sorted([drawn[1], (set(names) - set(drawn)).pop()])
    assert "1 as needing data kept with DVC" in about[0]
    # a drawn program nobody reviewed stops the draw with a proposed check
    monkeypatch.setattr(draw_fresh, "CHECKS", {})
    assert len(draw_fresh.draw_sources(tmp_path, 5, sources, set(), False)[2]) == 2


def test_a_later_draw_leaves_out_the_programs_of_earlier_manifests(finder, tmp_path, monkeypatch):
    import json

    import draw_fresh

    names = [f"kit/{n}/{n}" for n in ("one", "two", "three")]
    first = tmp_path / "first.json"
    first.write_text(json.dumps({"about": "", "programs": [{"name": names[0]}, {"name": names[1]}]}))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"about": "", "programs": [{"name": names[1]}, {"name": "elsewhere/p"}]}))
    avoid, excluded = draw_fresh.excluded_programs([other, first])
    assert avoid == {names[0], names[1], "elsewhere/p"} and excluded == "first.json, other.json"
    bad = tmp_path / "bad.json"
    bad.write_text('{"about": "no programs"}')
    with pytest.raises(ValueError, match="bad.json"):
        draw_fresh.excluded_programs([bad])

    # drawn from a tree of three, those two left out: only the third can be drawn
    _tree(tmp_path, {f"kit/{n}/{n}.cu": MAIN for n in ("one", "two", "three")})
    _tree(
        tmp_path,
        {f"kit/{n}/CMakeLists.txt": f"add_executable({n} {n}.cu)\n" for n in ("one", "two", "three")},
    )
    monkeypatch.setattr(draw_fresh, "TRIED", {})
    monkeypatch.setattr(draw_fresh, "CHECKS", dict.fromkeys(names, draw_fresh.EXIT))
    kit = draw_fresh.Source("kit", "someone/kit", "1" * 40, "cmake", ".")
    monkeypatch.setattr(draw_fresh, "PROGRAM_SOURCES", {"kit": (kit, 2)})
    manifest, unreviewed = draw_fresh.draw_programs(tmp_path, 5, avoid, excluded)
    assert not unreviewed and [e["name"] for e in manifest["programs"]] == [names[2]]
    assert "none of the 3 programs of first.json, other.json" in manifest["about"]


def test_a_source_short_of_candidates_leaves_the_rest_to_the_next(finder, tmp_path, monkeypatch):
    import draw_fresh

    small = [f"small/{n}/{n}" for n in ("a", "b")]
    big = [f"big/{n}/{n}" for n in ("c", "d", "e", "f")]
    for name in small + big:
        folder, prog = name.rsplit("/", 1)
        _tree(
            tmp_path,
            {f"{folder}/{prog}.cu": MAIN, f"{folder}/CMakeLists.txt": f"add_executable({prog} {prog}.cu)\n"},
        )
    monkeypatch.setattr(draw_fresh, "TRIED", {})
    monkeypatch.setattr(draw_fresh, "CHECKS", dict.fromkeys(small + big, draw_fresh.EXIT))
    sources = {
        "small": (draw_fresh.Source("small", "someone/small", "1" * 40, "cmake", "."), 3),
        "big": (draw_fresh.Source("big", "someone/big", "2" * 40, "cmake", "."), 2),
    }
    drawn, about, _ = draw_fresh.draw_sources(tmp_path, 5, sources, set(), with_build=False)
    names = [e["name"] for e in drawn]
    assert sorted(n for n in names if n.startswith("small/")) == small  # both it has
    assert len([n for n in names if n.startswith("big/")]) == 3  # its 2 and the one small lacked
    assert "(3 drawn from 4 candidates" in about[1]
    # with enough candidates in the first source, the next keeps its own count
    sources["small"] = (sources["small"][0], 1)
    drawn, _, _ = draw_fresh.draw_sources(tmp_path, 5, sources, set(), with_build=False)
    assert [e["name"].split("/")[0] for e in drawn] == ["small", "big", "big"]


def test_counts_set_what_each_source_gives_and_a_bad_one_is_named(finder, tmp_path, monkeypatch):
    import draw_fresh

    names = [f"kit/{n}/{n}" for n in ("one", "two", "three")]
    for name in names:
        folder, prog = name.rsplit("/", 1)
        _tree(
            tmp_path,
            {f"{folder}/{prog}.cu": MAIN, f"{folder}/CMakeLists.txt": f"add_executable({prog} {prog}.cu)\n"},
        )
    monkeypatch.setattr(draw_fresh, "TRIED", {})
    monkeypatch.setattr(draw_fresh, "CHECKS", dict.fromkeys(names, draw_fresh.EXIT))
    kit = draw_fresh.Source("kit", "someone/kit", "1" * 40, "cmake", ".")
    monkeypatch.setattr(draw_fresh, "PROGRAM_SOURCES", {"kit": (kit, 3)})
    counts = draw_fresh.program_counts(["kit=1"])
    assert counts == {"kit": 1}
    manifest, _ = draw_fresh.draw_programs(tmp_path, 5, counts=counts)
    assert len(manifest["programs"]) == 1
    assert len(draw_fresh.draw_programs(tmp_path, 5)[0]["programs"]) == 3  # the table's count
    for bad in ("kit", "kit=two", "nokit=1"):
        with pytest.raises(ValueError, match=f"--counts '{bad}'.*'kit'"):
            draw_fresh.program_counts([bad])
