"""The simulator's build errors, and the C++ front end's one dependency (libclang)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["INSTALL_HINT", "RUNTIME_DIR", "SimBuildError", "clang_module", "require_clang"]

RUNTIME_DIR = str(Path(__file__).resolve().parent / "runtime")
INSTALL_HINT = (
    'the simulator\'s C++ front end needs libclang: pip install "torchlight[simulator]" '
    '(in a source checkout: pip install "libclang>=18.1")'
)


class SimBuildError(Exception):
    """A source the simulator cannot build; the message names the file, line and construct."""


def clang_module():
    """``clang.cindex``, or a ``SimBuildError`` with the pip command when libclang is missing."""
    try:
        import clang.cindex as ci
    except ImportError as exc:
        raise SimBuildError(INSTALL_HINT) from exc
    return ci


def require_clang() -> None:
    """A ``SimBuildError`` with the pip command when libclang is missing, without importing it."""
    from importlib.util import find_spec

    try:
        found = find_spec("clang.cindex") is not None
    except ImportError:  # no ``clang`` package at all
        found = False
    if not found:
        raise SimBuildError(INSTALL_HINT)
