"""Time of the simulator's C++ front end per source: ``g++ -E``, the libclang parse, the rewrite.

Usage: ``python benchmarks/bench_frontend.py [FILE.cu ...] [--repeat 3]`` (default: the shipped
kernels and the front end's conformance programs). Each phase reports its minimum over the rounds
(the walk column is the syntax-tree walk that collects the rewrites); a build-cache hit pays only
the ``g++ -E`` column (two passes when the source tests ``__CUDA_ARCH__``). The parse loads the
runtime prelude's precompiled parse from the build cache (``syntax_pch.py``), which a source's first
round builds when the cache has none; ``--whole`` parses the whole text, as before it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from simulator import build, modes, source_compile, syntax_pch, toolchain, transform  # noqa: E402

DEFAULT = [
    REPO / "torchlight" / "cuda_kernels" / "softmax_kernel.cu",
    REPO / "torchlight" / "cuda_kernels" / "layernorm_kernel.cu",
    *sorted((REPO / "simulator" / "tests" / "frontend").glob("*.cu")),
]


def phases(path: Path) -> tuple[float, float, float, int]:
    """Seconds of preprocessing, libclang parsing and the walk plus rewrite of one source (all passes)."""
    src = path.resolve()
    flags = toolchain.common_flags(build.compiler()) + modes.BUILD_NAMED["fast"].kernel_flags
    # The include folders every build uses (the runtime's and NVIDIA's headers), then the source's.
    flags += [*toolchain.toolkit_flags(), "-I", str(src.parent)]
    t0 = time.perf_counter()
    host, device = source_compile.preprocess(build.compiler(), str(src), flags, build.DEFAULT_ARCH, str(src))
    t1 = time.perf_counter()
    units = [transform.TranslationUnit(text, lambda _p: True) for text in (host, device) if text is not None]
    t2 = time.perf_counter()
    parse = sum(u.parse_seconds for u in units)
    return t1 - t0, parse, t2 - t1 - parse, len(units)


def main() -> None:
    """Print one row per source."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="*", type=Path)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--whole", action="store_true", help="parse the whole text (no precompiled prelude)")
    args = p.parse_args()
    syntax_pch.ENABLED = not args.whole
    print(f"{'source':<28} {'passes':>6} {'g++ -E s':>9} {'parse s':>8} {'walk s':>7}")
    for f in args.files or DEFAULT:
        rows = [phases(f) for _ in range(args.repeat)]
        pre, parse, rewrite = (min(r[i] for r in rows) for i in range(3))
        print(f"{f.name:<28} {rows[0][3]:>6} {pre:>9.3f} {parse:>8.3f} {rewrite:>7.3f}")


if __name__ == "__main__":
    main()
