"""The environment a simulated child runs in: its mode's variables (``modes.py``) and the run's own.

``check`` runs a test driver (a mode's ``check_env``): memcheck holds it to device leaks and judges
its host code. ``run`` runs a whole program (``run_env``): as compute-sanitizer does, it
reports device leaks and host-code findings only when asked. Both give the child its per-launch
limit as ``SIMULATOR_TIMEOUT`` and, when given one, the number of modelled GPUs as
``SIMULATOR_DEVICES``.
"""

from __future__ import annotations

import os

from .modes import TABLE, mode_named, racecheck_memory_mb

__all__ = [
    "CHECKER_STATUS",
    "CHECK_ENV",
    "RUN_ENV",
    "check_child_env",
    "racecheck_memory_mb",
    "run_child_env",
]

# Each mode's variables as the table (modes.py) gives them, by mode name: ``check``'s for the modes
# it offers, ``run``'s for every mode.
CHECK_ENV = {m.name: dict(m.check_env) for m in TABLE if m.check_build is not None}
RUN_ENV = {m.name: dict(m.run_env) for m in TABLE}
# The exit statuses the sanitizers are told to use: the checker stopped the program.
CHECKER_STATUS = {m.name: m.stop_statuses for m in TABLE if m.stop_statuses}


def _child_env(mode_env: dict[str, str], limit: float) -> dict[str, str]:
    env = dict(os.environ)
    env.update(mode_env)
    env.pop("SIMULATOR_QUIET", None)  # the child's reports are read for findings
    env["SIMULATOR_TIMEOUT"] = f"{limit:g}"
    return env


def _with_devices(mode_env: dict[str, str], devices: int | None) -> dict[str, str]:
    """``mode_env`` plus ``SIMULATOR_DEVICES`` when ``devices`` is given."""
    return mode_env if devices is None else {**mode_env, "SIMULATOR_DEVICES": str(devices)}


def check_child_env(
    mode: str, limit: float, devices: int | None = None, verbose: bool = False
) -> dict[str, str]:
    """The environment of ``check``'s child in ``mode`` with a per-launch ``limit`` in seconds.

    ``devices`` (when given) is the number of modelled GPUs, passed as ``SIMULATOR_DEVICES``;
    ``verbose`` (memcheck) shows the sanitizers' own reports of device code beside the runtime's.
    """
    mode_env = dict(mode_named(mode).check_env)
    if mode == "memcheck":
        mode_env["SIMULATOR_MEMCHECK_RAW"] = "1" if verbose else "0"
    return _child_env(_with_devices(mode_env, devices), limit)


def run_child_env(
    mode: str,
    limit: float,
    leak_check: str = "no",
    check_host: bool = False,
    devices: int | None = None,
    line_buffered: bool = False,
    verbose: bool = False,
    stop_on_error: bool = False,
    print_limit: int | None = None,
) -> dict[str, str]:
    """The environment of a program ``run`` starts in ``mode`` (memcheck options as ``run_program``).

    ``devices`` (when given) is the number of modelled GPUs, passed as ``SIMULATOR_DEVICES``;
    ``line_buffered`` makes the program's stdout line-buffered (``SIMULATOR_LINE_BUFFERED=1``).
    """
    mode_env = _with_devices(dict(mode_named(mode).run_env), devices)
    mode_env["SIMULATOR_LINE_BUFFERED"] = "1" if line_buffered else "0"
    if mode == "memcheck":
        mode_env["SIMULATOR_LEAK_CHECK"] = leak_check
        mode_env["SIMULATOR_CHECK_HOST"] = "1" if check_host else "0"
        mode_env["SIMULATOR_MEMCHECK_RAW"] = "1" if verbose else "0"
        mode_env["SIMULATOR_STOP_ON_ERROR"] = "1" if stop_on_error else "0"
        if print_limit is not None:
            mode_env["SIMULATOR_PRINT_LIMIT"] = str(print_limit)
        if not check_host:
            # AddressSanitizer fills new host allocations (0xbe): host code that reads memory
            # it never set would see other values than in fast mode or on a GPU.
            mode_env["ASAN_OPTIONS"] += ":max_malloc_fill_size=0"
    return _child_env(mode_env, limit)
