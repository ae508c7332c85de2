"""Limits the runtime and the front end share.

``SIMULATOR_TIMEOUT`` is the longest a single kernel launch may run, in seconds; past it the
launch is stopped and returns ``cudaErrorLaunchTimeout`` (702), like a GPU watchdog. The C++
runtime reads the same variable with the same default (``kDefaultLaunchTimeoutS`` in
``runtime/sim_internal.h``); ``check`` and ``run`` size the time they allow a whole program
with :func:`resolve_timeout`, :func:`grace_after` and :func:`wall_limit`.

``SIMULATOR_THREADS``, ``SIMULATOR_STACK_KB``, ``SIMULATOR_DEVICES`` and ``SIMULATOR_DEVICE_MEMORY_MIB`` are
whole numbers in the ranges of
:data:`KNOBS` (the runtime's ``kKnobs`` in ``runtime/knobs.cpp`` has the same table and
refuses a bad value when it is loaded); :func:`check_environment` refuses a bad one with the
same one line before anything is built or loaded. ``run --devices N`` sets ``SIMULATOR_DEVICES``
for the program (:func:`resolve_devices`).

``SIMULATOR_FIBERS=1`` makes a fast build run barrier-free launches, and kernels whose barriers
are all block-uniform, with fibers too (for comparison and debugging; by default their threads
run as a plain loop, or as one loop per region between barriers). The runtime reads it once,
at a program's (or loaded library's) first launch, and keeps it; :func:`fibers_forced`
validates it for the front end.
"""

from __future__ import annotations

import math
import os
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass

from .errors import SimBuildError

__all__ = [
    "DEFAULT_LAUNCH_TIMEOUT_S",
    "TIMEOUT_GRACE_S",
    "KNOBS",
    "SIMULATOR_SECTION",
    "built_by_simulator",
    "check_environment",
    "DEVICES_KNOB",
    "resolve_devices",
    "fibers_forced",
    "grace_after",
    "launch_timeout",
    "seconds_setting",
    "resolve_timeout",
    "wall_limit",
]


@dataclass(frozen=True)
class Knob:
    """An integer environment variable of the runtime: its valid range and what it sets."""

    name: str
    low: int
    high: int
    what: str
    unset: str


KNOBS = (
    Knob("SIMULATOR_THREADS", 1, 64, "worker threads for blocks", "the CPU count, at most 64"),
    Knob(
        "SIMULATOR_STACK_KB", 16, 65536, "KiB of stack per CUDA thread", "128; 256 in memcheck and racecheck"
    ),
    Knob("SIMULATOR_DEVICES", 1, 16, "modelled GPUs", "1"),
    Knob(
        "SIMULATOR_DEVICE_MEMORY_MIB",
        1,
        16 << 20,
        "MiB of memory per modelled GPU",
        "the host's physical memory",
    ),
)
DEVICES_KNOB = KNOBS[2]

# The section the runtime puts into every object it is linked into (runtime/reports.cpp).
SIMULATOR_SECTION = b".cuda_cpu_simulator"


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """Refuse a bad ``SIMULATOR_FIBERS`` or knob (:data:`KNOBS`) with one line."""
    env = os.environ if environ is None else environ
    fibers_forced(env)
    for knob in KNOBS:
        raw = env.get(knob.name, "")
        if raw == "":
            continue
        # Digits only, as the runtime reads them: no sign, spaces or fractions.
        if not re.fullmatch(r"[0-9]{1,9}", raw) or not knob.low <= int(raw) <= knob.high:
            raise ValueError(
                f"{knob.name}={raw[:80]!r} is not valid: give a whole number of {knob.what} from "
                f"{knob.low} to {knob.high}, or leave it unset (default: {knob.unset})"
            )


def environment_for_devices(devices: int | None) -> dict[str, str]:
    """This process's environment, less ``SIMULATOR_DEVICES`` when ``devices`` is given.

    An explicit number of devices wins over the variable, so a bad value there does not matter.
    """
    return {k: v for k, v in os.environ.items() if devices is None or k != DEVICES_KNOB.name}


def resolve_devices(devices: int | None, environ: Mapping[str, str] | None = None) -> int:
    """The modelled GPUs for a run: ``devices``, else ``SIMULATOR_DEVICES``, else 1 (1 to 16).

    ``TypeError`` when ``devices`` is not an int; ``ValueError`` naming the value and the range
    when it (or, with ``devices=None``, the variable) is out of range.
    """
    knob = DEVICES_KNOB
    if devices is None:
        check_environment(environ)
        raw = (os.environ if environ is None else environ).get(knob.name, "")
        return int(raw) if raw else 1
    if isinstance(devices, bool) or not isinstance(devices, int):
        raise TypeError(
            f"devices={devices!r}: give a whole number (int) of {knob.what} from {knob.low} to {knob.high}"
        )
    if not knob.low <= devices <= knob.high:
        raise ValueError(
            f"devices={devices!r} is not valid: give a whole number of {knob.what} from {knob.low} to "
            f"{knob.high} (--devices N or {knob.name}=N; default: {knob.unset})"
        )
    return devices


def built_by_simulator(path: str | os.PathLike) -> bool:
    """True when the ELF file ``path`` holds the runtime's marker section (reads only headers)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
            # 64-bit little-endian ELF only: the simulator builds for the machine it runs on.
            if len(head) < 64 or head[:6] != b"\x7fELF\x02\x01":
                return False
            (shoff,) = struct.unpack_from("<Q", head, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
            if shoff == 0 or shentsize != 64 or not 0 < shnum <= 65280 or shstrndx >= shnum:
                return False
            fh.seek(shoff)
            table = fh.read(shentsize * shnum)
            if len(table) < shentsize * shnum:
                return False
            str_offset, str_size = struct.unpack_from("<QQ", table, shstrndx * shentsize + 0x18)
            if str_size > 1 << 20:
                return False
            fh.seek(str_offset)
            names = fh.read(str_size)
    except OSError:
        return False
    wanted = SIMULATOR_SECTION + b"\0"
    for i in range(shnum):
        (name,) = struct.unpack_from("<I", table, i * shentsize)
        if names[name : name + len(wanted)] == wanted:
            return True
    return False


DEFAULT_LAUNCH_TIMEOUT_S = 60.0


def seconds_setting(
    variable: str, default: float, most: float, what: str, fix: str, environ: Mapping[str, str] | None = None
) -> float:
    """Seconds from ``variable`` in ``environ`` (os.environ when None), ``default`` when unset or empty;
    ValueError ``"VARIABLE='value' is not <what>; <fix>"`` for a value that is not 0 to ``most``."""
    raw = (os.environ if environ is None else environ).get(variable, "")
    if raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 <= value <= most:
        raise ValueError(f"{variable}={raw[:80]!r} is not {what}; {fix}")
    return value


def launch_timeout(environ: Mapping[str, str] | None = None) -> float:
    """Seconds one launch may run (``SIMULATOR_TIMEOUT``, default 60; 0 means no limit)."""
    return seconds_setting(
        "SIMULATOR_TIMEOUT",
        DEFAULT_LAUNCH_TIMEOUT_S,
        1e9,
        "a number of seconds per launch",
        "set e.g. SIMULATOR_TIMEOUT=60, or 0 for no limit",
        environ,
    )


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


# After the per-launch limit, this long again (at most; never more than the limit itself) for
# the launch's report and the program's exit.
TIMEOUT_GRACE_S = 10.0


def grace_after(limit: float) -> float:
    """Seconds a run may go on after its per-launch ``limit`` before it is stopped."""
    return min(TIMEOUT_GRACE_S, limit)


def resolve_timeout(timeout: float | None) -> float:
    """The per-launch limit in seconds: ``timeout``, else ``SIMULATOR_TIMEOUT`` (0: no limit).

    Also refuses a bad ``SIMULATOR_FIBERS`` before anything is built or run.
    """
    try:
        fibers_forced()  # a bad SIMULATOR_FIBERS stops here with one line, not in every launch
        limit = launch_timeout() if timeout is None else float(timeout)
    except ValueError as exc:
        raise SimBuildError(str(exc)) from None
    if not 0 <= limit <= 1e9:
        raise SimBuildError(f"--timeout {timeout}: give the seconds per launch (0 for no limit)")
    return limit


def wall_limit(limit: float) -> float | None:
    """How long a whole run may take for a per-launch ``limit`` (None: no limit)."""
    return None if limit == 0 else limit + grace_after(limit)
