"""Questions to the C++ compiler whose answers its installed files decide (``--version``,
``-print-file-name=NAME``, and with the CPU ``-march=native``'s macros), answered from the build
cache after the first time.

Every ``python -m simulator`` asks them once, and each answer costs a process start (tens of
milliseconds of CPU, more on a loaded machine): a test suite that runs hundreds of programs paid
for them hundreds of times. An answer is kept in the cache keyed by the question, the path, size
and modification time of each program the ``$CXX`` command names (``ccache g++``: both), and the
variables that steer GCC's searches, so that an upgraded or replaced compiler is asked again.
Only answers of a run that succeeded are kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil

from .build_cache import cache_dir, cache_key, publish, verified
from .compiler_run import CompilerRun, compiler_command, invoke

__all__ = ["probe"]

# What GCC's driver reads besides its arguments when it looks for files and programs.
_STEERING = ("COMPILER_PATH", "LIBRARY_PATH", "GCC_EXEC_PREFIX")


def _program_identity(word: str) -> str:
    """Path, size and modification time of the program ``word`` names (as found on PATH)."""
    found = shutil.which(word)
    if found is None:
        return f"{word}:absent"
    real = os.path.realpath(found)
    info = os.stat(real)
    return f"{found}>{real}:{info.st_size}:{info.st_mtime_ns}"


def _cpu_identity() -> str:
    """The CPU's model and feature flags as Linux lists them (empty where it does not)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            lines = [ln for ln in fh if ln.startswith(("model name", "flags"))]
    except OSError:
        return ""
    return "".join(sorted(set(lines)))


def probe(args: list[str], what: str, cpu_bound: bool = False) -> CompilerRun:
    """:func:`compiler_run.invoke` for a question whose answer depends only on the compiler's
    installed files, kept in the build cache (``args[0]`` a ``$CXX`` value); ``cpu_bound``: the
    answer depends on this machine's CPU too (``-march=native``), which joins the key."""
    try:
        programs = [_program_identity(w) for w in compiler_command(args[0]) if not w.startswith("-")]
    except OSError:  # a compiler that cannot be looked at: ask it, and let invoke say what is wrong
        return invoke(args, what)
    steering = [f"{v}={os.environ.get(v, '')}" for v in _STEERING]
    cpu = _cpu_identity() if cpu_bound else ""
    key = cache_key("probe", *programs, *args, *steering, cpu)
    record = cache_dir() / f"probe-{key}.json"
    if verified(record):
        with contextlib.suppress(OSError, ValueError, KeyError):
            kept = json.loads(record.read_text())
            return CompilerRun(0, kept["stdout"], kept["stderr"])
    # Asked without the cache's lock: the first run of a compiler starts the build of the
    # supervisor, which asks the same question again (--version keys it), in this thread.
    run = invoke(args, what)
    if run.returncode == 0:
        with contextlib.suppress(OSError):  # an answer not kept is asked again next time
            publish(record, json.dumps({"stdout": run.stdout, "stderr": run.stderr}).encode())
    return run
