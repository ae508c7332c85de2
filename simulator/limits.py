"""Limits shared by the runtime and the front end."""

from __future__ import annotations

import os

DEFAULT_LAUNCH_TIMEOUT_S = 60.0


def launch_timeout() -> float:
    """Seconds a launch may run (``SIMULATOR_TIMEOUT``, default 60)."""
    raw = os.environ.get("SIMULATOR_TIMEOUT", "").strip()
    if not raw:
        return DEFAULT_LAUNCH_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(
            f"SIMULATOR_TIMEOUT={raw!r} is not a number of seconds; set e.g. SIMULATOR_TIMEOUT=60"
        ) from None
    if not value > 0:
        raise ValueError(f"SIMULATOR_TIMEOUT={raw!r} must be positive; set e.g. SIMULATOR_TIMEOUT=60")
    return value
