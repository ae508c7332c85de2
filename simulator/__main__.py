"""Command line: ``python -m simulator build ...`` and ``python -m simulator check ...``."""

from __future__ import annotations

import argparse
import sys

from .build import MODES, SimBuildError, build_shared
from .check import CHECK_MODES, run_check


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m simulator",
        description="Build CUDA C sources into CPU shared objects, or check them under sanitizers.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build each FILE.cu into DIR/FILE.so with the same exported launchers")
    b.add_argument("sources", nargs="+", metavar="FILE.cu")
    b.add_argument("--out", required=True, metavar="DIR")
    b.add_argument("--mode", default="fast", choices=MODES)
    c = sub.add_parser(
        "check", help='run extern "C" int ENTRY(void) under memcheck, racecheck and/or synccheck'
    )
    c.add_argument(
        "sources", nargs="+", metavar="FILE.cu", help="the file defining ENTRY (and any it links with)"
    )
    c.add_argument("--entry", required=True, metavar="NAME")
    c.add_argument("--mode", default="all", choices=(*CHECK_MODES, "all"))
    c.add_argument("--timeout", type=float, default=300.0, help="seconds per mode (default 300)")
    c.add_argument("--verbose", action="store_true", help="print the full sanitizer output")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the process exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "build":
            for src in args.sources:
                out = build_shared(src, args.out, args.mode)
                print(f"built {out} ({args.mode})")
            return 0
        modes = CHECK_MODES if args.mode == "all" else (args.mode,)
        failed = False
        for mode in modes:
            res = run_check(args.sources, args.entry, mode, args.timeout)
            if res.ok:
                print(f"{mode}: clean ({args.entry} returned 0)")
                continue
            failed = True
            print(f"{mode}: FAILED")
            for f in res.findings:
                print(f"  {f}")
            raw = res.output.strip().splitlines()
            if raw:
                limit = len(raw) if args.verbose else 60
                print(f"  --- {mode} output ({len(raw)} lines{'' if args.verbose else ', first 60'}) ---")
                for ln in raw[:limit]:
                    print(f"  | {ln}")
        return 1 if failed else 0
    except BrokenPipeError:
        return 1
    except SimBuildError as exc:
        print(f"simulator: build failed: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
