"""``benchmarks/library_use.py`` and ``draw_fresh.py --library-weight``: a draw that favours
programs calling CUB, Thrust, cuBLAS, cuRAND or cooperative groups."""

from __future__ import annotations

import random
import sys

import pytest

from .conftest import REPO

MAIN = "int main() { return 0; }\n"


@pytest.fixture
def library_use(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    for name in ("build_files", "program_finder", "draw_fresh", "library_use"):
        sys.modules.pop(name, None)
    import library_use

    return library_use


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#include <cub/cub.cuh>\n", ["CUB"]),
        ("typedef cub::BlockReduce<int, 256> R;\n", ["CUB"]),
        ('#include "thrust/sort.h"\nthrust::sort(p, p + n);\n', ["Thrust"]),
        ("#include <cublas_v2.h>\n#include <curand_kernel.h>\n", ["cuBLAS", "cuRAND"]),
        ("namespace cg = cooperative_groups;\n", ["cooperative groups"]),
        # an error macro that names cuBLAS's calls for the programs that include it is no use
        ("#define cublas(fn) cublasGetStatusString(cublas##fn)\n", []),
        (MAIN, []),
    ],
)
def test_a_library_counts_as_used_by_its_header_or_namespace(library_use, text, expected):
    assert library_use.libraries_used(text) == expected


def test_the_weighted_order_repeats_for_a_seed_and_favours_the_heavier(library_use):
    pool = list(range(10))
    heavy = {0: 8.0}
    order = library_use.weighted_order(pool, random.Random(7), lambda i: heavy.get(i, 1.0))
    assert sorted(order) == pool
    assert order == library_use.weighted_order(pool, random.Random(7), lambda i: heavy.get(i, 1.0))
    # one item of weight 8 among nine of weight 1 comes first with probability 8/17
    firsts = [
        library_use.weighted_order(pool, random.Random(seed), lambda i: heavy.get(i, 1.0))[0] == 0
        for seed in range(3000)
    ]
    assert 0.42 < sum(firsts) / len(firsts) < 0.52
    unweighted = [
        library_use.weighted_order(pool, random.Random(s), lambda i: 1.0)[0] == 0 for s in range(3000)
    ]
    assert 0.07 < sum(unweighted) / len(unweighted) < 0.13
    with pytest.raises(ValueError, match="weight 0"):
        library_use.weighted_order(pool, random.Random(1), lambda i: 0)


def test_the_draw_leans_on_library_programs_and_counts_them(library_use, tmp_path, monkeypatch):
    import draw_fresh

    names = ["a", "b", "c", "d", "e", "f"]
    for n in names:
        (tmp_path / "kit" / n).mkdir(parents=True)
        (tmp_path / "kit" / n / "CMakeLists.txt").write_text(f"add_executable({n} {n}.cu)\n")
        text = ("#include <thrust/sort.h>\n" if n == "e" else "") + MAIN
        (tmp_path / "kit" / n / f"{n}.cu").write_text(text)
    kit = draw_fresh.Source("kit", "someone/kit", "1" * 40, "cmake", ".")
    monkeypatch.setattr(draw_fresh, "TRIED", {})
    monkeypatch.setattr(draw_fresh, "CHECKS", {f"kit/{n}/{n}": draw_fresh.EXIT for n in names})
    sources = {"kit": (kit, 1)}
    drawn = []
    for seed in range(8):
        programs, about, _ = draw_fresh.draw_sources(
            tmp_path, seed, sources, set(), False, library_weight=1e6
        )
        drawn.append(programs[0]["name"])
        assert "6 candidates, 1 of them using a library" in about[0]
    assert drawn == ["kit/e/e"] * 8
    assert "the drawn use Thrust 1" in about[0]
    # weight 1 is the plain shuffle of the draws before the weight
    plain = [draw_fresh.draw_sources(tmp_path, s, sources, set(), False)[0][0]["name"] for s in range(8)]
    expected = []
    for s in range(8):
        order = [f"kit/{n}/{n}" for n in names]
        random.Random(s).shuffle(order)
        expected.append(order[0])
    assert plain == expected and len(set(plain)) > 1
