"""``torchlight-sim toolkit``: print the toolkit folder (``toolkit.py``), making it on first use."""

from __future__ import annotations

import argparse
import sys

from . import toolkit
from .errors import SimBuildError

__all__ = ["main"]


def main(argv: list[str] | None = None, prog: str = "torchlight-sim toolkit") -> int:
    """Print the toolkit folder's path (for ``CUDA_HOME``); returns the exit status."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Print a folder laid out as a CUDA installation whose nvcc and libraries are the "
        "simulator's (made on first use in the build cache, one per install: its nvcc runs this Python's "
        "simulator): CUDA_HOME=$(torchlight-sim toolkit). "
        "With SIMULATOR_MODE set, the folder whose lib64 holds that checker's runtime.",
    )
    parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        print(toolkit.mode_root(toolkit.build_mode()))
    except SimBuildError as exc:
        print(f"simulator: toolkit: {exc}", file=sys.stderr)
        return 2
    return 0
