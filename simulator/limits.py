"""Limits the runtime and the front end share.

``SIMULATOR_TIMEOUT`` is the longest a single kernel launch may run, in seconds; past it the
launch is stopped and returns ``cudaErrorLaunchTimeout`` (702), like a GPU watchdog. The C++
runtime reads the same variable with the same default (``kDefaultLaunchTimeoutS`` in
``runtime/sim_internal.h``); ``check`` and ``run`` can use :func:`launch_timeout` to size the
time they allow a whole program per mode.

``SIMULATOR_FIBERS=1`` makes a fast build run barrier-free launches with fibers too (for
comparison and debugging; by default their threads run as a plain loop). The runtime reads it at
each launch; :func:`fibers_forced` validates it for the front end.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

__all__ = ["DEFAULT_LAUNCH_TIMEOUT_S", "fibers_forced", "launch_timeout"]

DEFAULT_LAUNCH_TIMEOUT_S = 60.0


def launch_timeout(environ: Mapping[str, str] | None = None) -> float:
    """Seconds one launch may run (``SIMULATOR_TIMEOUT``, default 60; 0 means no limit)."""
    env = os.environ if environ is None else environ
    raw = env.get("SIMULATOR_TIMEOUT", "")
    if raw == "":
        return DEFAULT_LAUNCH_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (0 <= value <= 1e9):
        raise ValueError(
            f"SIMULATOR_TIMEOUT={raw!r} is not a number of seconds per launch; "
            "set e.g. SIMULATOR_TIMEOUT=60, or 0 for no limit"
        )
    return value


def fibers_forced(environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``SIMULATOR_FIBERS`` forces fibers for barrier-free launches ("1"; "0" or unset: no)."""
    env = os.environ if environ is None else environ
    raw = env.get("SIMULATOR_FIBERS", "")
    if raw not in ("", "0", "1"):
        raise ValueError(
            f"SIMULATOR_FIBERS={raw!r} is not 0 or 1; set SIMULATOR_FIBERS=1 to run barrier-free "
            "kernels with fibers, or unset it"
        )
    return raw == "1"
