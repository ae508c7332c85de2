"""``benchmarks/draw_sample.py``: the seeded draw behind the broad sample's manifest.

Which files are candidates (a ``main``, built alone, no library outside the subset), that the draw
repeats for a seed, passes over programs reviewed as checking nothing, and stops for a drawn
program nobody has reviewed."""

from __future__ import annotations

import importlib.util
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
