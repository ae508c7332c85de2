"""The environment a simulated child runs in, per mode: sanitizer options and runtime switches.

``check`` runs a test driver (:data:`CHECK_ENV`): memcheck holds it to device leaks and judges
its host code. ``run`` runs a whole program (:data:`RUN_ENV`): as compute-sanitizer does, it
reports device leaks and host-code findings only when asked. Both give the child its per-launch
limit as ``SIMULATOR_TIMEOUT`` and, when given one, the number of modelled GPUs as
``SIMULATOR_DEVICES``.
"""

from __future__ import annotations

import os

__all__ = ["CHECKER_STATUS", "CHECK_ENV", "RUN_ENV", "check_child_env", "run_child_env"]

# Sanitizer options per mode. memcheck: reports do not stop the program by themselves
# (halt_on_error=0, kernels built with -fsanitize-recover=address): the runtime stops it at a
# device fault with status 86 and lets host-code reports pass unless host checks are on
# (runtime/reports.cpp). The remaining options keep the cost near the README's bound (see
# _MEMCHECK_COST_OPTIONS).
_MEMCHECK_COST_OPTIONS = ""


def racecheck_memory_mb() -> int:
    """Half the memory this machine (or its cgroup) gives the program, in MiB; 0 when unknown.

    racecheck's ThreadSanitizer keeps 4 bytes of shadow per byte of memory the program's threads
    touch: a program with gigabytes of device buffers (llm.c's 1.6 GB logits) would take 20 GB
    and more. Past this much resident memory it forgets the accesses it has recorded
    (``memory_limit_mb``) instead of being killed by the kernel: a race between an access before
    that moment and one after it is not seen, and nothing is reported that is not a race.
    """
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 0
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit.isdigit():
            total = min(total, int(limit))
    except OSError:
        pass
    return total // 2 // (1 << 20)


_TSAN_MEMORY = f":memory_limit_mb={mb}" if (mb := racecheck_memory_mb()) > 0 else ""
CHECK_ENV = {
    "memcheck": {
        "ASAN_OPTIONS": "detect_leaks=1:halt_on_error=0:detect_stack_use_after_return=0:exitcode=86"
        ":allocator_may_return_null=1:strict_string_checks=1" + _MEMCHECK_COST_OPTIONS,
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=0:exitcode=87",
        "LSAN_OPTIONS": "exitcode=88",
        # check's entry is a test driver: its device buffers must be freed, and its own host
        # code is judged too (run leaves both off unless asked).
        "SIMULATOR_LEAK_CHECK": "full",
        "SIMULATOR_CHECK_HOST": "1",
    },
    "racecheck": {
        "TSAN_OPTIONS": "halt_on_error=0:exitcode=66:report_signal_unsafe=0:history_size=4" + _TSAN_MEMORY
    },
    "synccheck": {},
}

# Per mode, what a program run by ``run`` gets. As compute-sanitizer does, memcheck judges
# device code and reports device memory left allocated at exit only when asked
# (``leak_check``); host-code reports only with ``check_host``. Host memory leaks are the
# program's own affair (LeakSanitizer off).
RUN_ENV = {
    "fast": {},
    "memcheck": {
        **CHECK_ENV["memcheck"],
        "ASAN_OPTIONS": CHECK_ENV["memcheck"]["ASAN_OPTIONS"].replace("detect_leaks=1", "detect_leaks=0"),
        "SIMULATOR_LEAK_CHECK": "no",
        "SIMULATOR_CHECK_HOST": "0",
    },
    "racecheck": CHECK_ENV["racecheck"],
    "synccheck": CHECK_ENV["synccheck"],
}

# The exit statuses the sanitizers are told to use above: the checker stopped the program.
CHECKER_STATUS = {"memcheck": (86, 87, 88), "racecheck": (66,)}


def _child_env(mode_env: dict[str, str], limit: float) -> dict[str, str]:
    env = dict(os.environ)
    env.update(mode_env)
    env.pop("SIMULATOR_QUIET", None)  # the child's reports are read for findings
    env["SIMULATOR_TIMEOUT"] = f"{limit:g}"
    return env


def _with_devices(mode_env: dict[str, str], devices: int | None) -> dict[str, str]:
    """``mode_env`` plus ``SIMULATOR_DEVICES`` when ``devices`` is given."""
    return mode_env if devices is None else {**mode_env, "SIMULATOR_DEVICES": str(devices)}


def check_child_env(mode: str, limit: float, devices: int | None = None) -> dict[str, str]:
    """The environment of ``check``'s child in ``mode`` with a per-launch ``limit`` in seconds.

    ``devices`` (when given) is the number of modelled GPUs, passed as ``SIMULATOR_DEVICES``.
    """
    return _child_env(_with_devices(CHECK_ENV[mode], devices), limit)


def run_child_env(
    mode: str,
    limit: float,
    leak_check: str = "no",
    check_host: bool = False,
    devices: int | None = None,
    line_buffered: bool = False,
) -> dict[str, str]:
    """The environment of a program ``run`` starts in ``mode`` (memcheck options as ``run_program``).

    ``devices`` (when given) is the number of modelled GPUs, passed as ``SIMULATOR_DEVICES``;
    ``line_buffered`` makes the program's stdout line-buffered (``SIMULATOR_LINE_BUFFERED=1``).
    """
    mode_env = _with_devices(dict(RUN_ENV[mode]), devices)
    mode_env["SIMULATOR_LINE_BUFFERED"] = "1" if line_buffered else "0"
    if mode == "memcheck":
        mode_env["SIMULATOR_LEAK_CHECK"] = leak_check
        mode_env["SIMULATOR_CHECK_HOST"] = "1" if check_host else "0"
        if not check_host:
            # AddressSanitizer fills new host allocations (0xbe): host code that reads memory
            # it never set would see other values than in fast mode or on a GPU.
            mode_env["ASAN_OPTIONS"] += ":max_malloc_fill_size=0"
    return _child_env(mode_env, limit)
