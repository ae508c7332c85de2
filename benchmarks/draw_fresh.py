"""Draw seeded samples of whole CUDA programs from sources the broad sample did not use, libraries
allowed, and write them as manifests.

Usage: ``python benchmarks/draw_fresh.py --root DIR [--seed 3917] [--sample programs|builds]
[--exclude MANIFEST ...] [--counts LABEL=N ...] [--library-weight W] [--with-build] [--out MANIFEST]``

``programs`` (default ``benchmarks/manifests/fresh_sample.json``) is a sample for
``benchmarks/real_programs.py``: HeCBench folders, NVIDIA's cuda-samples (``4_CUDA_Libraries``
drawn on its own) and The CUDA Handbook's examples, each with its sources, flags and arguments
as its own build files give them. ``builds`` (default ``benchmarks/manifests/build_sample.json``)
is a sample for ``benchmarks/build_programs.py``, which builds each program with its own build
files: HeCBench folders (none of the ``programs`` sample's), Rodinia's CUDA programs (all of them)
and cuda-samples CMake projects; its entries also carry the sources and flags, so
``real_programs.py`` runs it by hand too.

``--root`` holds one checkout per source under its folder name (``SOURCES``). The draw repeats:
candidates are found by the rules of ``program_finder.py``, sorted by name, and
``random.Random(seed)`` shuffles each source's pool; the first ``count`` that are in scope, not
tried before (``TRIED``, and every program named in an ``--exclude`` manifest) and reviewed as
self-checking (``CHECKS`` in ``fresh_checks.py``) are taken; a source with fewer leaves the rest to
the next one. A drawn program nobody has reviewed stops the draw with a proposed check to read and
enter.

A later draw takes a new seed and excludes the earlier manifests; ``fresh_sample2.json`` was drawn
with ``--seed 41207 --exclude`` the fresh, broad, build, limit and llmc_dev_cuda manifests
(``benchmarks/results/fresh_sample2.md`` gives the command). ``--counts`` sets how many programs
a source of the ``programs`` sample gives (its label in ``PROGRAM_SOURCES``), for a smaller draw.
``--library-weight W`` draws a program that uses CUB, Thrust, cuBLAS, cuRAND or cooperative groups
(``library_use.py``) W times as often as one that does not (a weighted order in place of the
shuffle; 1, the default, is the shuffle); ``--with-build`` gives the ``programs`` sample's entries
their own build too, for ``build_programs.py``. ``fresh_sample4.json`` was drawn with both
(``benchmarks/results/fresh_sample4.md``).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from draw_sample import EXIT, pick_reviewed
from fresh_checks import CHECKS, SMALLER_ARGS
from library_use import libraries_used, weighted_order
from program_finder import (
    Candidate,
    cmake_programs,
    listed_make_programs,
    make_programs,
    needs,
    program_text,
    unfetched_data,
)

MANIFESTS = Path(__file__).resolve().parent / "manifests"
HECBENCH_MAKE = {"CC": "nvcc", "ARCH": "sm_80"}  # as HeCBench's README builds a folder
# What build_programs.py puts on make's command line: "{nvcc}" and "{toolkit}" stand for its
# --nvcc and --toolkit.
HECBENCH_BUILD_VARS = {"CC": "{nvcc}", "ARCH": "sm_80"}
RODINIA_BUILD_VARS = {"CUDA_DIR": "{toolkit}"}


@dataclass(frozen=True)
class Source:
    """A checkout: its folder under the root, repository, commit, and how its programs are found."""

    folder: str
    repo: str
    commit: str
    kind: str  # "make": HeCBench folders (``where`` a glob); "cmake": executables below ``where``
    where: str
    include: tuple[str, ...] = ()
    leave_out: str = ""  # a regular expression on program names this source does not offer


HECBENCH = Source(
    "hecbench", "zjin-lcf/HeCBench", "f27000a5188f8ac79bd43fc95a1b3f890c18823d", "make", "src/*-cuda"
)
CUDA_SAMPLES_COMMIT = "c94ff366aed18c797b8a85dfaac7817b0228b420"
CUDA_SAMPLES = Source(
    "cuda-samples",
    "NVIDIA/cuda-samples",
    CUDA_SAMPLES_COMMIT,
    "cmake",
    "Samples",
    ("cuda-samples/Common",),
    leave_out=r"/4_CUDA_Libraries/",
)
CUDA_LIBRARY_SAMPLES = Source(
    "cuda-samples",
    "NVIDIA/cuda-samples",
    CUDA_SAMPLES_COMMIT,
    "cmake",
    "Samples/4_CUDA_Libraries",
    ("cuda-samples/Common",),
)
CUDA_HANDBOOK = Source(
    "cudahandbook",
    "ArchaeaSoftware/cudahandbook",
    "c56ebf85f3d226545daa1ffff4218fe8b8636f8e",
    "cmake",
    ".",
    ("cudahandbook/chLib",),
)
RODINIA = Source("rodinia", "yuhc/gpu-rodinia", "9c10d3ea16ddba2ba057cc3951a9efc4c2cc18a4", "rodinia", "cuda")

# label -> (source, programs drawn)
PROGRAM_SOURCES = {
    "hecbench": (HECBENCH, 16),
    "cuda-samples": (CUDA_SAMPLES, 12),
    "cuda-samples libraries": (CUDA_LIBRARY_SAMPLES, 4),
    "cudahandbook": (CUDA_HANDBOOK, 8),
}
BUILD_SOURCES = {
    "hecbench": (HECBENCH, 40),
    "cuda-samples cmake": (CUDA_SAMPLES, 6),
}

# In scope: the CUDA runtime and driver APIs, Thrust, CUB, libcu++, cooperative groups, cuBLAS
# (and cublasLt), cuRAND and NVTX annotations, with the C and C++ standard libraries. Out of
# scope by design: graphics interop (OpenGL, EGL, Vulkan, Direct3D), MPI and NCCL, and NVIDIA's
# other libraries (cuDNN, cuFFT, cuSPARSE, cuSOLVER, NPP, nvJPEG; and those the allowed list
# leaves out: NVRTC, nvJitLink, libNVVM, NVML, cuDLA, NvSci), matched in a program's sources and
# the headers they include, or in the libraries its build links. Host OpenMP is in scope.
OUT_OF_SCOPE = re.compile(
    r"(?:^|/)(?:cudnn|cufft|cusparse|cusolver|npp|nvjpeg|nccl|mpi|nvrtc|nvJitLink|nvvm|nvml|cudla|nvsci|"
    r"cudaEGL|cudaGL|cuda_gl|cuda_egl|cuda_d3d|d3d|dxgi|windows|tlhelp32|tchar|conio|helper_gl|FreeImage)[^/]*\.h(?:pp)?$|"
    r"(?:^|/)(?:GL|GLES\d*|EGL|GLFW|vulkan)/"
)
LIBRARIES = {
    "m",
    "pthread",
    "rt",
    "dl",
    "stdc++",
    "cuda",
    "cuda_driver",
    "cudart",
    "cudart_static",
    "cudadevrt",
    "cublas",
    "cublasLt",
    "curand",
    "nvToolsExt",
    "nvtx3",
    "OpenMP::OpenMP_CXX",  # host threads: a compiler flag, not a CUDA library
    "gomp",
}

# Programs measured before from these sources: the cuda-samples that the project's earlier notes
# and its broad sample name (HeCBench folders, Rodinia's suite as a whole and The CUDA Handbook
# are named nowhere before; the Rodinia list is a fixed list, not a draw).
TRIED = {
    "cuda-samples": set(
        "asyncAPI clock matrixMul mergeSort simpleAWBarrier simpleCooperativeGroups simpleHyperQ simpleP2P "
        "simpleTemplates systemWideAtomics template vectorAdd convolutionSeparable convolutionTexture dct8x8 "
        "eigenvalues histogram inlinePTX interval radixSortThrust reduction reductionMultiBlockCG scalarProd "
        "scan segmentationTreeThrust shfl_scan sortingNetworks threadFenceReduction bf16TensorCoreGemm "
        "cdpAdvancedQuicksort cdpBezierTessellation cdpQuadtree cdpSimplePrint cdpSimpleQuicksort "
        "cudaTensorCoreGemm dmmaTensorCoreGemm globalToShmemAsyncCopy graphMemoryFootprint graphMemoryNodes "
        "immaTensorCoreGemm newdelete simpleCudaGraphs tf32TensorCoreGemm warpAggregatedAtomicsCG "
        "conjugateGradientMultiBlockCG binomialOptions dxtc fastWalshTransform p2pBandwidthLatencyTest "
        "stereoDisparity alignedTypes cudaGraphsPerfScaling transpose".split()
    ),
}

# Rodinia 3.1's CUDA programs, all of them: name -> (folder, the executable its Makefile builds,
# the arguments of the folder's run script, its first line where it has several). Their data
# files are not in the checkout (the earlier measurement took them from JuliaParallel/rodinia).
R = "rodinia/cuda"
RODINIA_PROGRAMS: dict[str, tuple[str, str, list[str]]] = {
    "rodinia/b+tree": (
        f"{R}/b+tree",
        "b+tree.out",
        "file ../../data/b+tree/mil.txt command ../../data/b+tree/command.txt".split(),
    ),
    "rodinia/backprop": (f"{R}/backprop", "backprop", ["2097152"]),
    "rodinia/bfs": (f"{R}/bfs", "bfs.out", ["../../data/bfs/graph65536.txt"]),
    "rodinia/cfd": (f"{R}/cfd", "euler3d", ["../../data/cfd/fvcorr.domn.097K"]),
    "rodinia/dwt2d": (f"{R}/dwt2d", "dwt2d", "192.bmp -d 192x192 -f -5 -l 3".split()),
    "rodinia/gaussian": (f"{R}/gaussian", "gaussian", ["-f", "../../data/gaussian/matrix4.txt"]),
    "rodinia/heartwall": (f"{R}/heartwall", "heartwall", ["../../data/heartwall/test.avi", "20"]),
    "rodinia/hotspot": (
        f"{R}/hotspot",
        "hotspot",
        "512 2 2 ../../data/hotspot/temp_512 ../../data/hotspot/power_512 output.out".split(),
    ),
    "rodinia/hotspot3D": (
        f"{R}/hotspot3D",
        "3D",
        "512 8 100 ../../data/hotspot3D/power_512x8 ../../data/hotspot3D/temp_512x8 output.out".split(),
    ),
    "rodinia/huffman": (f"{R}/huffman", "pavle", ["../../data/huffman/test1024_H2.206587175259.in"]),
    "rodinia/hybridsort": (f"{R}/hybridsort", "hybridsort", ["r"]),
    "rodinia/kmeans": (f"{R}/kmeans", "kmeans", ["-o", "-i", "../../data/kmeans/kdd_cup"]),
    "rodinia/lavaMD": (f"{R}/lavaMD", "lavaMD", ["-boxes1d", "10"]),
    "rodinia/leukocyte": (f"{R}/leukocyte", "CUDA/leukocyte", ["../../data/leukocyte/testfile.avi", "5"]),
    "rodinia/lud": (f"{R}/lud", "cuda/lud_cuda", ["-s", "256", "-v"]),
    "rodinia/mummergpu": (
        f"{R}/mummergpu",
        "bin/mummergpu",
        ["../../data/mummergpu/NC_003997.fna", "../../data/mummergpu/NC_003997_q100bp.fna"],
    ),
    "rodinia/myocyte": (f"{R}/myocyte", "myocyte.out", ["100", "1", "0"]),
    "rodinia/nn": (f"{R}/nn", "nn", "filelist_4 -r 5 -lat 30 -lng 90".split()),
    "rodinia/nw": (f"{R}/nw", "needle", ["2048", "10"]),
    "rodinia/particlefilter": (
        f"{R}/particlefilter",
        "particlefilter_naive",
        "-x 128 -y 128 -z 10 -np 1000".split(),
    ),
    "rodinia/pathfinder": (f"{R}/pathfinder", "pathfinder", ["100000", "100", "20"]),
    "rodinia/srad_v1": (f"{R}/srad/srad_v1", "srad", ["100", "0.5", "502", "458"]),
    "rodinia/srad_v2": (f"{R}/srad/srad_v2", "srad", "2048 2048 0 127 0 127 0.5 2".split()),
    "rodinia/streamcluster": (
        f"{R}/streamcluster",
        "sc_gpu",
        "10 20 256 65536 65536 1000 none output.txt 1".split(),
    ),
}


# How the about text counts the programs left out before a draw, by the first word of the reason.
LEFT_OUT = {
    "includes": "with an out-of-scope header",
    "links": "linking an out-of-scope library",
    "reads": "reading a data file the checkout lacks",
    "Makefile:": "whose Makefile make cannot read or whose run target runs no program",
}


def find(root: Path, source: Source) -> tuple[list[Candidate], dict[str, str]]:
    """A source's candidates (sorted by name) and those left out, each with why."""
    left_out: dict[str, str] = {}
    if source.kind == "make":
        found, refused = make_programs(root / source.folder, source.where, HECBENCH_MAKE)
        left_out = {f"{source.folder}/{name}": why for name, why in refused.items()}
        for c in found:  # make_programs names them under the source's folder
            c.name, c.cwd = f"{source.folder}/{c.name}", f"{source.folder}/{c.cwd}"
            c.sources = [f"{source.folder}/{s}" for s in c.sources]
            c.include = [f"{source.folder}/{i}" for i in c.include]
            c.build["dir"] = f"{source.folder}/{c.build['dir']}"
            c.build["vars"] = dict(HECBENCH_BUILD_VARS)
    else:
        found = cmake_programs(root, f"{source.folder}/{source.where}".removesuffix("/."), source.include)
    keep = []
    for c in found:
        if source.leave_out and re.search(source.leave_out, c.name):
            continue
        why = needs(root, c, OUT_OF_SCOPE, LIBRARIES)
        if why:
            left_out[c.name] = why
        elif {c.name.rsplit("/", 2)[-2], c.build.get("program")} & TRIED.get(source.folder, set()):
            left_out[c.name] = "tried before"  # by its folder's name or its program's
        else:
            keep.append(c)
    return sorted(keep, key=lambda c: c.name), left_out


def entry(c: Candidate, check: dict, with_build: bool) -> dict:
    """A drawn program's manifest entry (``with_build``: also how its own build files build it)."""
    e: dict = {"name": c.name, "sources": c.sources, "cwd": c.cwd}
    if c.include:
        e["include"] = c.include
    if c.defines:
        e["defines"] = c.defines
    args = c.args
    if c.name in SMALLER_ARGS:
        args, reason = SMALLER_ARGS[c.name]
        given = " ".join(c.args) or "none"
        e["note"] = f"arguments of its run target or its own defaults: {given}; smaller here: {reason}"
    if args:
        e["args"] = list(args)
    e.update(check)
    if with_build:
        e["build"] = c.build
    return e


def draw_sources(
    root: Path,
    seed: int,
    sources: dict,
    avoid: set[str],
    with_build: bool,
    library_weight: float = 1.0,
) -> tuple[list[dict], list[str], list[str]]:
    """The entries drawn from each of ``sources`` (none named in ``avoid``), one line of ``about``
    per source, and the drawn programs not yet in ``CHECKS``. A ``library_weight`` other than 1
    draws a program that uses one of ``LIBRARY_USE``'s libraries that many times as often."""
    rng = random.Random(seed)
    programs, about, unreviewed = [], [], []
    short = 0  # what the sources before this one could not fill, for lack of candidates
    for label, (source, count) in sources.items():
        count += short
        pool, left_out = find(root, source)
        pool = [c for c in pool if c.name not in avoid]
        uses = {c.name: libraries_used(program_text(root, c)) for c in pool}
        if library_weight == 1:
            rng.shuffle(pool)  # as every draw before the weight was added
        else:
            pool = weighted_order(pool, rng, lambda c, uses=uses: library_weight if uses[c.name] else 1.0)
        # Data kept with DVC (HeCBench's data folders) is not in a plain checkout: such a program is
        # passed over in the shuffled order, which leaves the order of the others as it was.
        unfetched = [c for c in pool if unfetched_data(root, c)]
        pool = [c for c in pool if c not in unfetched]
        picked, skipped, waiting = pick_reviewed(
            pool, count, CHECKS, lambda c: c.name, lambda c: program_text(root, c)
        )
        unreviewed += waiting
        short = count - len(picked) - len(waiting)
        programs += sorted((entry(c, check, with_build) for c, check in picked), key=lambda e: e["name"])
        reasons: dict[str, int] = {}
        for why in left_out.values():
            kind = LEFT_OUT.get(why.split(" ", 1)[0], why)
            reasons[kind] = reasons.get(kind, 0) + 1
        drawn_uses = _library_counts(uses[c.name] for c, _ in picked)
        pool_uses = sum(1 for c in pool + unfetched if uses[c.name])
        about.append(
            f"{label}: github.com/{source.repo} at {source.commit[:12]} ({len(picked)} drawn from "
            f"{len(pool) + len(unfetched)} candidates, {pool_uses} of them using a library; "
            f"the drawn use {drawn_uses}; {skipped} passed over as not self-checking, "
            f"{len(unfetched)} as needing data kept with DVC; left out before the "
            f"draw: {'; '.join(f'{n} {k}' for k, n in sorted(reasons.items())) or 'none'})"
        )
    return programs, about, unreviewed


def _library_counts(uses) -> str:
    """How many programs use each library, in words (``uses``: each program's list)."""
    counts: dict[str, int] = {}
    for names in uses:
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items())) or "no library"


def program_counts(items: list[str]) -> dict[str, int]:
    """``LABEL=N`` items read as the programs drawn from each source of ``PROGRAM_SOURCES``."""
    counts: dict[str, int] = {}
    for item in items:
        label, _, n = item.partition("=")
        if label not in PROGRAM_SOURCES or not n.isdigit():
            raise ValueError(
                f"--counts {item!r}: give LABEL=N, N a whole number and LABEL one of "
                + ", ".join(repr(k) for k in PROGRAM_SOURCES)
            )
        counts[label] = int(n)
    return counts


def draw_programs(
    root: Path,
    seed: int,
    avoid: frozenset[str] = frozenset(),
    excluded: str = "",
    counts: dict[str, int] | None = None,
    library_weight: float = 1.0,
    with_build: bool = False,
) -> tuple[dict, list[str]]:
    """The ``programs`` sample's manifest (none of ``avoid``, the programs of the manifests named in
    ``excluded``; ``counts`` by label in place of ``PROGRAM_SOURCES``'s; ``library_weight`` as
    ``draw_sources`` takes it; ``with_build``: each entry also says how its own build files build
    it) and the drawn programs not yet in ``CHECKS``."""
    sources = {label: (src, (counts or {}).get(label, n)) for label, (src, n) in PROGRAM_SOURCES.items()}
    programs, about, unreviewed = draw_sources(root, seed, sources, set(avoid), with_build, library_weight)
    leaves_out = f"; none of the {len(avoid)} programs of {excluded}" if excluded else ""
    weighted = (
        f", a program using a library (see LIBRARY_USE in library_use.py) weighted {library_weight:g}"
        if library_weight != 1
        else ""
    )
    manifest = {
        "about": f"A random draw (seed {seed}) by benchmarks/draw_fresh.py --sample programs, libraries "
        f"allowed (see OUT_OF_SCOPE and LIBRARIES there){weighted}{leaves_out}; each program with the "
        "sources, flags and arguments its own build files give; --root holds the checkouts: "
        + "; ".join(about),
        "programs": programs,
    }
    return manifest, unreviewed


def excluded_programs(manifests: list[Path]) -> tuple[frozenset[str], str]:
    """The names of the programs in ``manifests`` (tried before) and the manifests' file names."""
    names: set[str] = set()
    for path in manifests:
        try:
            programs = json.loads(path.read_text())["programs"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"--exclude {path}: not a manifest with a 'programs' list ({e})") from e
        names.update(p["name"] for p in programs)
    return frozenset(names), ", ".join(sorted(p.name for p in manifests))


def draw_builds(root: Path, seed: int, avoid: set[str]) -> tuple[dict, list[str]]:
    """The ``builds`` sample's manifest (none of ``avoid``) and the drawn programs not yet in ``CHECKS``."""
    programs, about, unreviewed = draw_sources(root, seed, BUILD_SOURCES, avoid, with_build=True)
    for c in listed_make_programs(root, RODINIA_PROGRAMS, RODINIA_BUILD_VARS):
        programs.append(entry(c, {**EXIT}, with_build=True))
    about.append(
        f"rodinia: github.com/{RODINIA.repo} at {RODINIA.commit[:12]} (all {len(RODINIA_PROGRAMS)} CUDA "
        "programs, built by their own Makefiles with CUDA_DIR; judged here by exit status 0 only, their "
        "output is verified against the suite's OpenMP versions by hand; their data files are not in "
        "the checkout: an earlier measurement took them from JuliaParallel/rodinia)"
    )
    manifest = {
        "about": f"A random draw (seed {seed}) by benchmarks/draw_fresh.py --sample builds, for "
        "benchmarks/build_programs.py: HeCBench folders built with `make CC=NVCC ARCH=sm_80`, "
        "cuda-samples with their own CMakeLists.txt, none of the programs sample's; --root holds the "
        "checkouts: " + "; ".join(about),
        "programs": programs,
    }
    return manifest, unreviewed


def main(argv: list[str] | None = None) -> int:
    """Write the drawn manifest."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, required=True, help="the folder holding one checkout per source")
    p.add_argument("--seed", type=int, default=3917)
    p.add_argument("--sample", choices=("programs", "builds"), default="programs")
    p.add_argument(
        "--exclude",
        type=Path,
        nargs="+",
        default=[],
        metavar="MANIFEST",
        help="manifests whose programs count as tried before and are not drawn",
    )
    p.add_argument(
        "--counts",
        nargs="+",
        default=[],
        metavar="LABEL=N",
        help="programs drawn from a source of the programs sample (labels: "
        + ", ".join(PROGRAM_SOURCES)
        + ")",
    )
    p.add_argument(
        "--library-weight",
        type=float,
        default=1.0,
        metavar="W",
        help="draw a program that uses CUB, Thrust, cuBLAS, cuRAND or cooperative groups W times as "
        "often (default 1: the plain shuffle of the earlier draws)",
    )
    p.add_argument(
        "--with-build",
        action="store_true",
        help="programs sample: each entry also says how its own build files build it (for build_programs.py)",
    )
    p.add_argument("--out", type=Path, help="default: manifests/fresh_sample.json or build_sample.json")
    a = p.parse_args(argv)
    root = a.root.resolve()
    try:
        avoid, excluded = excluded_programs(a.exclude)
        counts = program_counts(a.counts)
        if not a.library_weight > 0:
            raise ValueError(
                f"--library-weight {a.library_weight:g}: give a weight above 0 (1: no weighting)"
            )
    except ValueError as e:
        p.error(str(e))
    needed = [*PROGRAM_SOURCES.values()] + ([(RODINIA, 0)] if a.sample == "builds" else [])
    for source, _ in needed:
        if not (root / source.folder).is_dir():
            p.error(
                f"{root / source.folder} is missing: check out github.com/{source.repo} there "
                f"at {source.commit}"
            )
    programs_out = MANIFESTS / "fresh_sample.json"
    if a.sample == "programs":
        manifest, unreviewed = draw_programs(
            root, a.seed, avoid, excluded, counts, a.library_weight, a.with_build
        )
        out = a.out or programs_out
    else:
        # The programs sample is drawn again (not read back), so that the two never share a program.
        drawn, unreviewed = draw_programs(root, a.seed, avoid, excluded, counts, a.library_weight)
        manifest, more = draw_builds(root, a.seed, {e["name"] for e in drawn["programs"]} | avoid)
        unreviewed += more
        out = a.out or MANIFESTS / "build_sample.json"
    if unreviewed:
        print(
            "read these drawn programs and enter their checks in CHECKS (fresh_checks.py):",
            *unreviewed,
            sep="\n  ",
        )
        return 2
    out.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(manifest['programs'])} programs -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
