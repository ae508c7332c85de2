"""What this machine gives a build: the C++ compiler to run and the CPUs this process may use.

One lookup of each for the whole repository: the simulator's builds, the verification tiers
(``ci/tiers.py``), the mutation tier, ``torchlight info`` and the benchmarks all ask here, so
they agree on which compiler and how many CPUs. The simulator's C++ runtime counts CPUs by the
same rule (``host_cpu_count`` in ``runtime/device_props.cpp``); a test holds the two equal.
Standard library only: ``ci/tiers.py`` imports it before anything is installed.
"""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

__all__ = ["CXX_NAMES", "cgroup_cpu_quota", "cpu_count", "find_cxx"]

# Searched on PATH in this order when $CXX is unset: the compiler the simulator is tested with first.
CXX_NAMES = ("g++", "c++", "clang++")

_CGROUP_V2 = Path("/sys/fs/cgroup/cpu.max")  # "max 100000" or "<quota> <period>"
_CGROUP_V1 = (Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup/cpu,cpuacct"))


def cgroup_cpu_quota() -> float | None:
    """The CPU limit of this process's cgroup (a container's ``--cpus``), or None when unlimited."""
    try:
        if _CGROUP_V2.is_file():
            quota, period = _CGROUP_V2.read_text().split()[:2]
            return None if quota == "max" else int(quota) / int(period)
        for folder in _CGROUP_V1:
            if (folder / "cpu.cfs_quota_us").is_file():
                quota_us = int((folder / "cpu.cfs_quota_us").read_text())
                period_us = int((folder / "cpu.cfs_period_us").read_text())
                return None if quota_us <= 0 else quota_us / period_us
    except (OSError, ValueError):
        return None
    return None


def cpu_count() -> int:
    """CPUs this process may run on: its affinity mask, capped by a cgroup quota (containers).

    ``os.cpu_count()`` counts the host's CPUs, which inside a CPU-limited container (or under
    ``taskset``) oversubscribes it.
    """
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = cgroup_cpu_quota()
    if quota is not None:
        count = min(count, max(1, math.ceil(quota)))
    return max(1, count)


def find_cxx() -> str | None:
    """The C++ compiler command: ``$CXX`` when set (a command with arguments, as make takes it:
    ``CXX='g++ -w'``), else the first of g++, c++, clang++ on PATH; None when there is none."""
    explicit = os.environ.get("CXX")
    if explicit:  # checked when it is run (compiler_run.compiler_command names a bad one)
        return explicit
    for name in CXX_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None
