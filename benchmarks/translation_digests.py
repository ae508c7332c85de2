"""The front end's translation of every test program in every build, as SHA-256 digests, and its CPU time.

Usage: ``python benchmarks/translation_digests.py --texts DIR [--out DIGESTS.json] [--log FILE]
[--shard I/N] [FILE.cu ...]``
(default: ``simulator/tests/kernels``, ``simulator/tests/frontend`` and the shipped kernels).
Each source is preprocessed for each build mode (``g++ -E``, as ``kernel_object`` does; the texts
are kept in ``--texts`` and reused by a later run, so that two checkouts translate the same
input) and translated with host code checked and unchecked, without compiling. The digests of
two checkouts' ``--out`` files must be equal for a change that must not alter any translation;
the CPU seconds of ``translate_preprocessed`` (median per translation, and the sum) say what it
costs. Run it from the checkout to measure (``PYTHONPATH`` pointing at it); ``--shard`` splits the
sources between processes (each writes its own ``--out``); ``--log`` gets one JSON line per
translation as it is made (name, digest, CPU seconds), for a run stopped part way.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import re
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from simulator import modes, source_compile, toolchain  # noqa: E402
from simulator.errors import SimBuildError  # noqa: E402


def default_sources() -> list[Path]:
    """The test programs and the shipped kernels."""
    tests = REPO / "simulator" / "tests"
    found = [*sorted((tests / "kernels").glob("*.cu")), *sorted((tests / "frontend").glob("*.cu"))]
    return found + sorted((REPO / "torchlight" / "cuda_kernels").glob("*.cu"))


def preprocessed(src: Path, mode: str, texts: Path) -> tuple[str, str | None] | str:
    """The host and device ``g++ -E`` texts of ``src`` for ``mode`` (kept in ``texts``), or the error."""
    kept = texts / f"{src.parent.name}-{src.name}-{mode}.pickle"
    if kept.is_file():
        return pickle.loads(kept.read_bytes())
    cxx = toolchain.compiler()
    includes = ["-I", str(src.parent), *toolchain.toolkit_flags()]
    if toolchain.host_has_fma(cxx):
        includes.append("-DSIM_DEVICE_FMA")
    flags = toolchain.common_flags(cxx) + modes.BUILD_NAMED[mode].kernel_flags + includes
    try:
        result: tuple[str, str | None] | str = source_compile.preprocess(
            cxx, str(src), flags, source_compile.DEFAULT_ARCH, str(src)
        )
    except SimBuildError as exc:
        result = f"preprocess error: {exc}"
    kept.write_bytes(pickle.dumps(result))
    return result


def runtime_named(text: str) -> str | None:
    """The runtime folder that the preprocessed ``text`` force-included ``cuda_sim.h`` from."""
    found = re.search(r'^# \d+ "([^"]*)/cuda_sim\.h"', text, re.MULTILINE)
    return found.group(1) if found else None


def translated(pre: tuple[str, str | None], build: modes.Build, unchecked: bool, fma: bool) -> str:
    """The translation of ``pre`` by this checkout, its runtime folder written ``<runtime>``.

    The front end treats the runtime's own headers apart, by their folder: a text preprocessed
    by another checkout has that checkout's folder replaced with this one's first.
    """
    here = str(toolchain.RUNTIME_DIR)
    there = runtime_named(pre[0])
    host, device = pre
    if there is not None and there != here:
        host = host.replace(f"{there}/", f"{here}/")
        device = device.replace(f"{there}/", f"{here}/") if device is not None else None
    try:
        text = source_compile.translate_preprocessed(
            host,
            lambda _path: True,
            device,
            unchecked,
            fma,
            build.unjudged_regions,
            hoisted=build.hoisted_checks,
        )
    except SimBuildError as exc:
        text = f"translation error: {exc}"
    return text.replace(f"{here}/", "<runtime>/")


def main() -> None:
    """Write the digests and print the CPU time per translation."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="*", type=Path)
    p.add_argument("--texts", type=Path, required=True, help="folder of the preprocessed texts (kept)")
    p.add_argument("--out", type=Path, help="JSON file of the digests")
    p.add_argument("--log", type=Path, help="a file each translation's digest and CPU seconds are added to")
    p.add_argument(
        "--shard", default="1/1", metavar="I/N", help="the I-th of N shares of the sources (from 1)"
    )
    args = p.parse_args()
    index, count = (int(n) for n in args.shard.split("/"))
    args.texts.mkdir(parents=True, exist_ok=True)
    cxx = toolchain.compiler()
    fma = toolchain.host_has_fma(cxx)
    digests: dict[str, str] = {}
    seconds: list[float] = []
    for src in ([f.resolve() for f in args.files] or default_sources())[index - 1 :: count]:
        for mode in modes.BUILD_MODES:
            build = modes.BUILD_NAMED[mode]
            pre = preprocessed(src, mode, args.texts)
            for unchecked in (False, True):
                name = f"{src.parent.name}/{src.name} {mode}{' unchecked-host' if unchecked else ''}"
                if isinstance(pre, str):
                    digests[name] = hashlib.sha256(pre.encode()).hexdigest()
                    continue
                start = time.process_time()
                text = translated(pre, build, unchecked, fma)
                seconds.append(time.process_time() - start)
                digests[name] = hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
                if args.log:
                    with args.log.open("a") as log:
                        log.write(json.dumps([name, digests[name], seconds[-1]]) + "\n")
    if args.out:
        args.out.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    median = statistics.median(seconds) * 1000 if seconds else 0.0
    print(
        f"{len(digests)} translations ({len(seconds)} made): median {median:.1f} ms CPU, "
        f"sum {sum(seconds):.1f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
