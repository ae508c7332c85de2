"""Limits the runtime and the front end share.

``SIMULATOR_TIMEOUT`` is the longest a single kernel launch may run, in seconds; past it the
launch is stopped and returns ``cudaErrorLaunchTimeout`` (702), like a GPU watchdog. The C++
runtime reads the same variable with the same default (``kDefaultLaunchTimeoutS`` in
``runtime/sim_internal.h``); ``check`` and ``run`` can use :func:`launch_timeout` to size the
time they allow a whole program per mode.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

__all__ = ["DEFAULT_LAUNCH_TIMEOUT_S", "launch_timeout"]

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
