"""The ``torchlight`` command (also ``python -m torchlight``): ``info`` and ``build-kernels``."""

from __future__ import annotations

import argparse
import os
import sys

from ._version import __version__


def _prog() -> str:
    """How the user called this command: ``torchlight``, or ``python -m torchlight``."""
    called = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return "python -m torchlight" if called in ("", "__main__.py", "-c") else called


def _parser() -> argparse.ArgumentParser:
    from . import build_kernels, info

    parser = argparse.ArgumentParser(
        prog=_prog(), description="torchlight's commands: what works on this machine, and the kernel builds."
    )
    parser.add_argument("--version", action="version", version=f"torchlight {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    info_parser = commands.add_parser(
        "info",
        help="installed versions, which backends and tiers work here, GPU and kernel libraries",
        description=info.DESCRIPTION,
    )
    build = commands.add_parser(
        "build-kernels",
        help="build the CUDA C kernel libraries with nvcc, or with --simulator for the CPU",
        description=build_kernels.DESCRIPTION,
    )
    build_kernels.add_arguments(build)
    for sub in (info_parser, build):
        sub.add_argument("--version", action="version", version=f"torchlight {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit status (argparse's 2, on stderr, for a bad command line)."""
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "info":
        from .info import report

        print(report())
        return 0
    from .build_kernels import run

    return run(args)
