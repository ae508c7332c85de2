"""Compile every numba-cuda kernel of the CUDA provider to PTX, then assemble it with ptxas.

The CUDA simulator runs kernels as plain Python and type-checks nothing, so a kernel can pass
the whole cudasim tier and still fail to compile for a GPU. This check needs no GPU: numba-cuda
lowers each kernel through NVVM for an explicit compute capability and explicit signatures
(``CudaProvider.kernel_specs()``, the same registry the launch path compiles from), and
``ptxas -arch=sm_XX`` (from the CUDA toolkit, when it is on PATH) assembles the PTX.

Usage::

    python ci/compile_ptx.py                       # sm_80 and sm_90, every kernel
    python ci/compile_ptx.py --arch 90 -k matmul   # one arch, kernels whose name has "matmul"
    python ci/compile_ptx.py --require-ptxas       # a missing ptxas is an error, not a note
    python ci/compile_ptx.py --json reports/raw/compile_ptx.json   # counts for the matrix report

Exit status: 0 when every kernel compiled (and assembled), 1 naming each kernel that failed,
2 when the check itself cannot run (numba-cuda missing, a bad argument).
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

# The check compiles for real hardware: the simulator must be off before numba is imported.
os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")
# Run from a checkout without installing: the repository root holds the torchlight package.
sys.path.append(str(Path(__file__).resolve().parents[1]))

DEFAULT_PROVIDER = "torchlight.backends.numba_cuda.provider:CudaProvider"
DEFAULT_ARCHS = "80,90"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--arch",
        default=DEFAULT_ARCHS,
        help=f"comma list of compute capabilities as two digits (default {DEFAULT_ARCHS})",
    )
    parser.add_argument(
        "--provider",
        default=DEFAULT_PROVIDER,
        help=f"MODULE:CLASS whose kernel_specs() lists the kernels (default {DEFAULT_PROVIDER})",
    )
    parser.add_argument(
        "-k",
        "--match",
        action="append",
        default=[],
        help="only kernels whose name contains this text (repeatable; any match counts)",
    )
    parser.add_argument("--out", type=Path, help="keep the .ptx (and .cubin) files in this folder")
    parser.add_argument("--require-ptxas", action="store_true", help="fail when ptxas is not on PATH")
    parser.add_argument("--no-ptxas", action="store_true", help="stop at PTX; do not run ptxas")
    parser.add_argument(
        "--json", type=Path, metavar="PATH", help="also write the counts here (read by ci/matrix_report.py)"
    )
    return parser.parse_args(argv)


def parse_archs(text: str) -> list[tuple[int, int]]:
    """``"80,90"`` (or ``"80;90"``) -> ``[(8, 0), (9, 0)]``; ValueError naming a bad entry."""
    archs = []
    for item in text.replace(";", ",").split(","):
        item = item.strip().removeprefix("sm_")
        if not item:
            continue
        if not item.isdigit() or len(item) < 2:
            raise ValueError(f"--arch entry {item!r} is not a compute capability like 80 or 90")
        archs.append((int(item[:-1]), int(item[-1])))
    if not archs:
        raise ValueError(f"--arch {text!r} names no compute capability")
    return archs


def load_provider(spec: str):
    """The provider class named by ``MODULE:CLASS``."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"--provider {spec!r} must look like MODULE:CLASS")
    return getattr(importlib.import_module(module_name), attr)


def first_error_line(err: BaseException) -> str:
    """The telling part of a compile error: its kind, numba's reason and the source line."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(err))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    picked = lines[:2]
    picked += [line for line in lines[2:] if line.startswith("File ")][:1]
    return f"{type(err).__name__}: {' | '.join(picked)}"[:400]


def find_ptxas() -> str | None:
    """The ptxas of the nvcc wheel installed beside numba-cuda's NVVM wheel, else the one on PATH.

    NVVM writes PTX of its own release's ISA version; an older toolkit's ptxas refuses it
    ("Unsupported .version"), so a ptxas of the same wheel release is preferred.
    """
    try:
        import nvidia  # namespace package of NVIDIA's CUDA wheels
    except ImportError:
        nvidia = None
    for root in getattr(nvidia, "__path__", []):
        for candidate in sorted(Path(root).glob("*/bin/ptxas"), reverse=True):
            if os.access(candidate, os.X_OK):
                return str(candidate)
    return shutil.which("ptxas")


def assemble(ptxas: str, ptx_path: Path, arch: tuple[int, int]) -> str | None:
    """Run ptxas on one PTX file; None when it succeeds, else its error text."""
    sm = f"sm_{arch[0]}{arch[1]}"
    done = subprocess.run(
        [ptxas, f"-arch={sm}", str(ptx_path), "-o", str(ptx_path.with_suffix(".cubin"))],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode == 0:
        return None
    text = (done.stderr or done.stdout).strip()
    return text.splitlines()[0][:300] if text else f"ptxas exited with {done.returncode}"


def build_one(spec, arch: tuple[int, int], ptxas: str | None, out_dir: Path) -> tuple[str, str | None]:
    """Compile (and assemble) one kernel for one arch: its printed line, and its failure or None."""
    from numba import cuda

    sm = f"sm_{arch[0]}{arch[1]}"
    try:
        ptx, _ = cuda.compile_ptx(spec.pyfunc, spec.signature, cc=arch)
    except Exception as err:  # every numba error class counts as a failed kernel
        why = first_error_line(err)
        return f"FAIL {spec.name} {sm}: {why}", f"{spec.name} {sm}: compile: {why}"
    safe = spec.name.replace("[", "_").replace("]", "")
    path = out_dir / f"{safe}.{sm}.ptx"
    path.write_text(ptx)
    note = "ptx only"
    if ptxas is not None:
        problem = assemble(ptxas, path, arch)
        if problem is not None:
            return f"FAIL {spec.name} {sm}: ptxas: {problem}", f"{spec.name} {sm}: ptxas: {problem}"
        note = "ptxas ok"
    return f"ok   {spec.name} {sm} ({len(ptx) / 1024:.1f} kB PTX, {note})", None


# The builds a forked worker reads (set before the pool forks: kernels are functions, which a
# pool would otherwise have to pickle).
_BUILDS: list = []


def _build_at(index: int, ptxas: str | None, out_dir: Path) -> tuple[str, str | None]:
    spec, arch = _BUILDS[index]
    return build_one(spec, arch, ptxas, out_dir)


def _run_builds(builds: list, ptxas: str | None, out_dir: Path):
    """(line, failure) of each build, in order; on several CPUs, forked workers run them (the
    builds are independent, and NVVM and ptxas each keep one CPU busy)."""
    from simulator.host import cpu_count  # the CPUs this process may use, container quotas included

    jobs = min(cpu_count(), len(builds))
    if jobs < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [build_one(spec, arch, ptxas, out_dir) for spec, arch in builds]
    _BUILDS[:] = builds
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            indices = range(len(builds))
            return list(pool.map(_build_at, indices, [ptxas] * len(builds), [out_dir] * len(builds)))
    finally:
        _BUILDS.clear()


def main(argv: list[str] | None = None) -> int:
    """Compile (and assemble) every selected kernel for every arch; 0 only when all succeed."""
    args = parse_args(argv)
    try:
        archs = parse_archs(args.arch)
        provider = load_provider(args.provider)
        # The provider's registry; ImportError with the install line when numba-cuda is missing.
        every = provider.kernel_specs()
    except (ValueError, ImportError, AttributeError) as err:
        print(f"compile_ptx: cannot run: {err}", file=sys.stderr)
        return 2
    specs = [s for s in every if not args.match or any(m in s.name for m in args.match)]
    if not specs:
        print(f"compile_ptx: no kernel of {args.provider} matches {args.match}", file=sys.stderr)
        return 2
    ptxas = None if args.no_ptxas else find_ptxas()
    if ptxas is None and not args.no_ptxas:
        if args.require_ptxas:
            print(
                "compile_ptx: no ptxas found: install the CUDA toolkit or the nvcc wheel "
                "of the pinned CUDA release (CUDA_WHEELS in ci/versions.env; nox -s kernels installs it)",
                file=sys.stderr,
            )
            return 2
        print("compile_ptx: note: no ptxas found, so PTX is generated but not assembled")
    elif ptxas is not None:
        print(f"compile_ptx: assembling with {ptxas}")

    if args.out is None:
        with tempfile.TemporaryDirectory(prefix="torchlight-ptx-") as scratch:
            return check(specs, archs, ptxas, Path(scratch), keep=False, summary=args.json)
    args.out.mkdir(parents=True, exist_ok=True)
    return check(specs, archs, ptxas, args.out, keep=True, summary=args.json)


def check(
    specs: list,
    archs: list[tuple[int, int]],
    ptxas: str | None,
    out_dir: Path,
    keep: bool,
    summary: Path | None = None,
) -> int:
    """Compile each spec for each arch into ``out_dir``; print one line per build; 0 if all pass.

    ``summary``: also write the counts there as ``{"compile_ptx": {...}}`` for the matrix report.
    """
    failures: list[str] = []
    started = time.perf_counter()
    builds = [(spec, arch) for spec in specs for arch in archs]
    for line, failure in _run_builds(builds, ptxas, out_dir):
        print(line)
        if failure is not None:
            failures.append(failure)
    took = time.perf_counter() - started
    total = len(specs) * len(archs)
    print(
        f"compile_ptx: {total - len(failures)}/{total} kernel builds passed "
        f"({len(specs)} kernels x {len(archs)} archs) in {took:.1f} s"
        + (f"; PTX in {out_dir}" if keep else "")
    )
    if summary is not None:
        counts = {
            "passed": total - len(failures),
            "total": total,
            "kernels": len(specs),
            "archs": [f"sm_{a[0]}{a[1]}" for a in archs],
            "ptxas": ptxas,
            "seconds": round(took, 1),
            "failures": failures,
        }
        summary.parent.mkdir(parents=True, exist_ok=True)
        tmp = summary.with_name(summary.name + ".tmp")
        tmp.write_text(json.dumps({"compile_ptx": counts}, indent=1) + "\n")
        tmp.replace(summary)
    if failures:
        print("compile_ptx: these kernels would not build for the GPU:", file=sys.stderr)
        for line in failures:
            print(f"  {line}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
