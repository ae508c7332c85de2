"""Draw a seeded random sample of small self-checking CUDA programs and write it as a manifest.

Usage: ``python benchmarks/draw_sample.py --root DIR [--seed 2026] [--out MANIFEST]`` (default
``benchmarks/manifests/broad_sample.json``)

``--root`` holds one checkout per source of ``SOURCES``, each under its folder name (for example
``DIR/cuda-samples`` is a clone of github.com/NVIDIA/cuda-samples at the commit listed there). The
draw is repeatable: candidates are found by the rules below, sorted, and ``random.Random(seed)``
picks ``count`` of each source. ``benchmarks/real_programs.py`` runs the manifest.

A candidate is a ``.cu`` file that defines ``main``, builds alone (every other source file in its
folder is one it includes or has its own ``main``; no header from a git submodule, which a plain
clone leaves empty), uses no library outside the simulator's stated subset (``EXCLUDED``),
and checks its own result: it prints a verdict (``passes`` is that text) or, printing none, stops
with ``assert`` (``exit_status``: it passes when it exits 0).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

# folder name -> (repository, commit, glob of candidate files, programs drawn from it)
SOURCES = {
    "cuda-samples": (
        "NVIDIA/cuda-samples",
        "c94ff366aed18c797b8a85dfaac7817b0228b420",
        "Samples/**/*.cu",
        10,
    ),
    "cba": ("CoffeeBeforeArch/cuda_programming", "8711be08e2060680820304594f3691cc0016edd1", "**/*.cu", 6),
    "olcf": ("olcf/cuda-training-series", "9cd77d539d85ee3457e09a083ba299b787b7a16e", "**/*solution*.cu", 6),
    "pcuda": (
        "deeperlearning/professional-cuda-c-programming",
        "ee58310bcdcec62a609f02b6c5193452d8102183",
        "**/*.cu",
        6,
    ),
    "lcuda": (
        "PacktPublishing/Learn-CUDA-Programming",
        "10bd9b59bfcc680d608ea1417da5089f73d91b11",
        "**/*.cu",
        6,
    ),
    "devblog": (
        "NVIDIA-developer-blog/code-samples",
        "72d62ec464442786a36754508bcb1094d197d6a5",
        "**/*.cu",
        6,
    ),
}

EXIT = {"exit_status": True}
# Each drawn program's own check, read in its source, as manifest fields: ``passes``, the text it
# prints when its check succeeds; EXIT when it says so by its exit status alone (``exit`` or
# ``assert``), with ``fails``, the text it prints (and still exits 0) when the check fails; or None
# when it checks nothing (it is passed over and the next in the shuffled order is drawn).
CHECKS: dict[str, dict | None] = {
    # cuda-samples
    "cuda-samples/Samples/0_Introduction/systemWideAtomics/systemWideAtomics": EXIT,
    "cuda-samples/Samples/3_CUDA_Features/newdelete/newdelete": EXIT,
    "cuda-samples/Samples/0_Introduction/clock/clock": None,  # prints clock counts only
    "cuda-samples/Samples/0_Introduction/matrixMul/matrixMul": {"passes": "Result = PASS"},
    "cuda-samples/Samples/0_Introduction/simpleAWBarrier/simpleAWBarrier": {"passes": "Result = PASSED"},
    "cuda-samples/Samples/2_Concepts_and_Techniques/reductionMultiBlockCG/reductionMultiBlockCG": EXIT,
    "cuda-samples/Samples/3_CUDA_Features/cdpSimpleQuicksort/cdpSimpleQuicksort": EXIT,
    # compares with a CPU product only when built with -DCPU_DEBUG
    "cuda-samples/Samples/3_CUDA_Features/dmmaTensorCoreGemm/dmmaTensorCoreGemm": None,
    "cuda-samples/Samples/3_CUDA_Features/graphMemoryFootprint/graphMemoryFootprint": EXIT,
    "cuda-samples/Samples/5_Domain_Specific/dxtc/dxtc": {"passes": "Test passed"},
    "cuda-samples/Samples/5_Domain_Specific/stereoDisparity/stereoDisparity": EXIT,
    "cuda-samples/Samples/6_Performance/alignedTypes/alignedTypes": {"passes": "Test passed"},
    # CoffeeBeforeArch/cuda_programming: assert on the result, then a line
    "cba/01_vector_addition/baseline/vectorAdd": {"passes": "COMPLETED SUCCESSFULLY"},
    "cba/01_vector_addition/pinned_memory/vectorAdd_pinned": {"passes": "COMPLETED SUCCESSFULLY"},
    "cba/01_vector_addition/unified_memory/vectorAdd_um_baseline": {"passes": "COMPLETED SUCCESSFULLY"},
    "cba/02_matrix_mul/baseline/mmul": {"passes": "COMPLETED SUCCESSFULLY"},
    "cba/02_matrix_mul/noAliasing/restrict/mmul": {"passes": "COMPLETED SUCCESSFULLY"},
    "cba/03_sum_reduction/cooperative_groups/sumReduction": {"passes": "COMPLETED SUCCESSFULLY"},
    "cba/04_histogram/shmem_atomic/histogram": EXIT,
    # olcf/cuda-training-series
    "olcf/exercises/hw5/max_reduction_solution": None,  # prints the result beside the expected one
    "olcf/exercises/hw8/task1/task1_solution": {"passes": "^PASS"},
    "olcf/exercises/hw8/task2/task2_solution": {"passes": "^PASS"},
    "olcf/exercises/hw1/hello_solution": None,  # prints from threads
    "olcf/exercises/hw1/matrix_mul_solution": {"passes": "Success!"},
    "olcf/exercises/hw1/vector_add_solution": None,  # prints three values
    "olcf/exercises/hw12/task2_solution": None,  # prints an estimate beside the expected value
    "olcf/exercises/hw2/stencil_1d_solution": {"passes": "Success!"},
    "olcf/exercises/hw4/matrix_sums_solution": {"passes": "column sums correct!"},
    "olcf/exercises/hw5/matrix_sums_solution": {"passes": "column sums correct!"},
    # deeperlearning/professional-cuda-c-programming
    "pcuda/examples/chapter02/sumMatrixOnGPU": {"passes": "Arrays match"},
    "pcuda/examples/chapter04/sumMatrixGPUManaged": {**EXIT, "fails": "Arrays do not match"},
    "pcuda/solutions/chapter04/globalVariable1": None,  # prints values
    "pcuda/solutions/chapter04/sumArrayZerocpyUVA-offset": {**EXIT, "fails": "Arrays do not match"},
    "pcuda/solutions/chapter09/simpleP2P_PingPongDefault": None,  # prints bandwidths
    "pcuda/examples/chapter02/checkThreadIndex": None,  # prints indices
    "pcuda/examples/chapter07/my-atomic-add": None,  # prints a count
    "pcuda/examples/chapter10/debug-segfault": None,  # prints nothing
    "pcuda/examples/chapter10/debug-segfault.fixed": None,  # prints nothing
    "pcuda/solutions/chapter03/reduceFloatGpu": None,  # prints sums and times
    "pcuda/examples/chapter05/reduceInteger": {**EXIT, "fails": "Test failed"},
    "pcuda/solutions/chapter02/sumMatrixOnGPU-2D-grid-1D-block-two": {"passes": "Arrays match"},
    "pcuda/solutions/chapter04/readWriteSegment": None,  # prints times
    "pcuda/solutions/chapter09/simpleMultiGPUEvents": {**EXIT, "fails": "Arrays do not match"},
    # PacktPublishing/Learn-CUDA-Programming
    "lcuda/Chapter02/02_memory_overview/03_aos_soa/soa": None,  # prints nothing
    "lcuda/Chapter02/02_memory_overview/06_unified_memory/unified_memory": None,  # prints the error
    "lcuda/Chapter04/04_kernel_execution/01_cuda_stream/3_cuda_multi_stream_with_sync": None,  # prints steps
    "lcuda/Chapter07/07_parallel_programming_pattern/02_convolution/convolution": {"passes": "SUCCESS!!"},
    # prints C
    "lcuda/Chapter08/08_cuda_libs_and_other_languages/02_sgemm_mixed_precision/cublasGemmEx": None,
    # prints sums
    "lcuda/Chapter01/01_cuda_introduction/02_vector_addition/vector_addition_gpu_thread_block": None,
    "lcuda/Chapter03/03_cuda_thread_programming/11_mixed_precision_operation/mixed_precision_int": {
        "passes": "Success!!"
    },
    "lcuda/Chapter04/04_kernel_execution/02_pipelining/cuda_pipelining": None,  # prints one sample
    "lcuda/Chapter04/04_kernel_execution/05_cuda_event/cuda_event_with_streams": None,  # prints one sample
    # prints steps
    "lcuda/Chapter04/04_kernel_execution/01_cuda_stream/4_cuda_multi_stream_with_default": None,
    "lcuda/Chapter05/05_debug_profiling/01_focused_profile/sgemm": None,  # prints nothing
    "lcuda/Chapter05/05_debug_profiling/08_memcheck/simple_sgemm_oob": None,  # a line at the end, no check
    "lcuda/Chapter07/07_parallel_programming_pattern/04_pack_n_split/pack_n_split": {
        **EXIT,
        "fails": "wrong",
    },
    "lcuda/Chapter03/03_cuda_thread_programming/11_mixed_precision_operation/mixed_precision_half": {
        "passes": "Success!!"
    },
    "lcuda/Chapter01/01_cuda_introduction/01_hello_world/hello_world": None,  # prints a greeting
    # prints sums
    "lcuda/Chapter02/02_memory_overview/02_vector_addition/vector_addition_gpu_thread_block": None,
    # prints ids
    "lcuda/Chapter03/03_cuda_thread_programming/01_warp_and_thread_block/cuda_thread_block": None,
    "lcuda/Chapter03/03_cuda_thread_programming/02_cuda_occupancy/sgemm": None,  # prints a time
    "lcuda/Chapter04/04_kernel_execution/04_stream_priority/prioritized_cuda_stream": None,  # one sample
    "lcuda/Chapter04/04_kernel_execution/06_dynamic_parallelism/recursion": {"passes": "Correct!!"},
    "lcuda/Chapter05/05_debug_profiling/04_cuda_assert/sgemm": None,  # a debugging exercise, no check
    "lcuda/Chapter05/05_debug_profiling/05_debug_with_vs/simple_sgemm": None,  # a line at the end, no check
    "lcuda/Chapter05/05_debug_profiling/08_memcheck/simple_sgemm": None,  # a line at the end, no check
    "lcuda/Chapter03/03_cuda_thread_programming/11_mixed_precision_operation/mixed_precision": {
        "passes": "Success!!"
    },
    "lcuda/Chapter07/07_parallel_programming_pattern/01_sgemm_optimization/sgemm": None,  # verification off
    "lcuda/Chapter07/07_parallel_programming_pattern/05_n-body/n_body": None,  # prints iterations
    "lcuda/Chapter07/07_parallel_programming_pattern/07_radixsort/thrust_radix_sort": None,  # prints the sort
    # NVIDIA-developer-blog/code-samples
    "devblog/c++11_cuda/c++11_cuda": None,  # prints a count
    "devblog/posts/mixed-precision/haxpy": None,  # prints values
    "devblog/posts/american-options/longstaff_schwartz_svd_2": None,  # prints prices to compare by eye
    "devblog/posts/unified-memory/dataElem": None,  # prints values
    "devblog/posts/unified-memory/dataElem_um": None,  # prints values
    "devblog/posts/math-libraries-intro/cublas-example": None,  # prints no result
    "devblog/posts/parallel_reduction_with_shfl/main": {**EXIT, "fails": "INCORRECT"},
    "devblog/posts/printf-alternative/main": None,  # shows error reports, checks no result
    "devblog/posts/tensor-cores/simpleTensorCoreGEMM": {"passes": "Results verified"},
    "devblog/series/cuda-cpp/coalescing-global/coalescing": None,  # prints bandwidths
    "devblog/series/cuda-cpp/finite-difference/finite-difference": None,  # prints the error
    "devblog/series/cuda-cpp/optimize-data-transfers/bandwidthtest": {**EXIT, "fails": "transfers failed"},
    "devblog/series/cuda-cpp/optimize-data-transfers/profile": None,  # prints nothing
    "devblog/series/cuda-cpp/overlap-data-transfers/async": None,  # prints the error
    "devblog/series/cuda-cpp/shared-memory/shared-memory": {**EXIT, "fails": "Error: d"},
    "devblog/series/cuda-cpp/transpose/transpose": {**EXIT, "fails": "FAILED"},
    "devblog/posts/rnn/LSTM": None,  # prints checksums to compare by eye
    "devblog/posts/unified-memory-oversubscription/uvm_oversubs": None,  # prints bandwidths
    "devblog/posts/unified-memory/dataElem_um_c++_1": None,  # prints values
    "devblog/posts/unified-memory/dataElem_um_c++_2": None,  # prints values
}

# Outside the simulator's subset (cuda_runtime, cuBLAS, cublasLt, cuRAND, thrust/CUB, libcu++):
# other NVIDIA libraries, graphics interop, MPI/NCCL/OpenMP, run-time compilation and
# loading modules from files built for a GPU.
EXCLUDED = re.compile(
    r"#\s*include\s*[<\"](?:cufft|cusparse|cusolver|npp|nvjpeg|cudnn|nccl|mpi|omp|nvrtc|nvml|"
    r"nvToolsExt|nvtx3|GL/|GLES|EGL|vulkan|d3d|cudaEGL|cudaGL|cuda_gl|cuda_d3d|nvscisync|"
    r"cudla|FreeImage)|cuModuleLoad|cuLinkCreate|cufft|\bcutlass\b"
)
SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".c")
DEFINES_MAIN = re.compile(r"\bint\s+main\s*\(")
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
VERDICT = re.compile(r"(?i)\b(?:pass(?:ed)?|success(?:ful(?:ly)?)?|correct(?:ly)?|match(?:es)?|verified)\b")
NEGATED = re.compile(r"(?i)\bnot\b|n't|fail|mismatch|incorrect|error|wrong|\bno\b|\bun")
FORMAT = re.compile(r"%[-+ #0-9.]*[a-zA-Z]|\\.")


def verdict_text(source: str) -> str | None:
    """The first string literal that says the check succeeded, cut after its verdict word."""
    for literal in STRING.findall(source):
        found = VERDICT.search(literal)
        if found and not NEGATED.search(literal):
            text = FORMAT.sub(" ", literal[: found.end()]).strip()
            text = re.sub(r"\s+", " ", text)
            if text:
                return text
    return None


def builds_alone(path: Path, source: str) -> bool:
    """True when no other source file of the folder is part of the program (each defines its own
    ``main`` or is one this file includes)."""
    included = {Path(i).name for i in re.findall(r'#\s*include\s*"([^"]+)"', source)}
    for other in path.parent.iterdir():
        if other.suffix in SOURCE_SUFFIXES and other != path and other.name not in included:
            if not DEFINES_MAIN.search(other.read_text(errors="replace")):
                return False
    return True


def submodules(folder: Path) -> list[Path]:
    """The checkout's git submodules (a clone without ``--recurse-submodules`` has them empty)."""
    listing = folder / ".gitmodules"
    text = listing.read_text(errors="replace") if listing.is_file() else ""
    return [folder / m for m in re.findall(r"^\s*path\s*=\s*(\S+)", text, re.M)]


def needs_submodule(path: Path, source: str, modules: list[Path]) -> bool:
    """True when the file includes a header from one of the checkout's submodules."""
    for include in re.findall(r'#\s*include\s*"([^"]+)"', source):
        target = (path.parent / include).resolve()
        if any(target.is_relative_to(m.resolve()) for m in modules):
            return True
    return False


def candidates(root: Path, name: str, pattern: str) -> list[Path]:
    """Every file of one source that defines ``main``, builds alone from the checkout (no header
    from a submodule) and needs no excluded library."""
    folder = root / name
    if not folder.is_dir():
        raise SystemExit(f"{folder} is missing: clone {SOURCES[name][0]} there at {SOURCES[name][1]}")
    modules = submodules(folder)
    found = []
    for path in sorted(folder.glob(pattern)):
        source = path.read_text(errors="replace")
        if not DEFINES_MAIN.search(source) or EXCLUDED.search(source) or not builds_alone(path, source):
            continue
        if not needs_submodule(path, source, modules):
            found.append(path)
    return found


def entry(path: Path, root: Path, check: dict) -> dict:
    """The manifest entry of one drawn program whose reviewed check is ``check``."""
    rel = path.relative_to(root)
    return {"name": program_name(path, root), "sources": [str(rel)], "cwd": str(rel.parent), **check}


def program_name(path: Path, root: Path) -> str:
    """A drawn program's name: its path under the root, without the suffix."""
    return str(path.relative_to(root).with_suffix(""))


def pick_reviewed(pool: list, count: int, checks: dict, key, text) -> tuple[list[tuple], int, list[str]]:
    """Walk the shuffled ``pool`` and take the first ``count`` programs reviewed as self-checking.

    ``key(item)`` is a program's name in ``checks`` and ``text(item)`` its source. Returns the
    picks as ``(item, check)``, how many were passed over as checking nothing (``checks`` says
    None), and one proposed ``checks`` line for each drawn program nobody has reviewed yet."""
    picked, skipped, unreviewed = [], 0, []
    for item in pool:
        if len(picked) + len(unreviewed) == count:
            break
        name = key(item)
        if name not in checks:
            proposal = verdict_text(text(item))
            proposed = {"passes": re.escape(proposal)} if proposal else EXIT
            unreviewed.append(f"{name!r}: {proposed},")
        elif checks[name] is None:
            skipped += 1
        else:
            picked.append((item, checks[name]))
    return picked, skipped, unreviewed


def draw(root: Path, seed: int) -> tuple[dict, list[str]]:
    """The manifest (``count`` self-checking programs of each source, in the order
    ``random.Random(seed)`` shuffles the candidates) and the drawn programs not yet in ``CHECKS``."""
    rng = random.Random(seed)
    programs, about, unreviewed = [], [], []
    for name, (repo, commit, pattern, count) in SOURCES.items():
        pool = candidates(root, name, pattern)
        rng.shuffle(pool)
        picked, skipped, waiting = pick_reviewed(
            pool, count, CHECKS, lambda p: program_name(p, root), lambda p: p.read_text(errors="replace")
        )
        unreviewed += waiting
        programs += sorted((entry(path, root, check) for path, check in picked), key=lambda e: e["name"])
        about.append(
            f"{name}: github.com/{repo} at {commit[:12]} ({len(picked)} drawn from {len(pool)} candidates; "
            f"{skipped} passed over as not self-checking)"
        )
    manifest = {
        "about": f"A random draw (seed {seed}) by benchmarks/draw_sample.py; --root holds the checkouts: "
        + "; ".join(about),
        "defaults": {"include": ["cuda-samples/Common"]},
        "programs": programs,
    }
    return manifest, unreviewed


def main(argv: list[str] | None = None) -> int:
    """Write the drawn manifest."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, required=True, help="the folder holding one checkout per source")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--out", type=Path, default=Path(__file__).parent / "manifests" / "broad_sample.json")
    a = p.parse_args(argv)
    manifest, unreviewed = draw(a.root.resolve(), a.seed)
    if unreviewed:
        print("read these drawn programs and enter their checks in CHECKS:", *unreviewed, sep="\n  ")
        return 2
    a.out.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(manifest['programs'])} programs -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
