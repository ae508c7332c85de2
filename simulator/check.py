"""Run an ``extern "C" int ENTRY(void)`` of a simulated build in a child process and judge it.

The child is a small executable (the translated sources, the runtime and a ``main`` calling
the entry) linked with the sanitizer runtime its mode needs, so nothing has to be preloaded.
A run is clean when the child exits 0 and printed no sanitizer or simulator report. The entry
is a test driver, so memcheck holds it to more than ``run`` holds a program: device buffers it
leaves allocated are findings (``run`` reports them only with ``--leak-check full``), and so
are sanitizer reports from its host code, labelled ``host code`` (``run``: ``--check-host``).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field

from .build import DEFAULT_ARCH, SimBuildError, build_executable
from .compiler_run import launch_time_allowed
from .findings import death_by_signal
from .limits import (
    check_environment,
    environment_for_devices,
    grace_after,
    resolve_devices,
    resolve_timeout,
    wall_limit,
)
from .modes import CHECK_MODES, mode_named
from .sanitizer_env import check_child_env
from .supervise import end_tree, start_tree

__all__ = ["CheckResult", "CHECK_MODES", "run_check"]


@dataclass
class CheckResult:
    """Outcome of one mode: ``ok``, the findings (one line each) and the child's raw output."""

    mode: str
    ok: bool
    findings: list[str] = field(default_factory=list)
    output: str = ""
    returncode: int = 0


def run_check(
    sources: list[str],
    entry: str,
    mode: str,
    timeout: float | None = None,
    arch: int = DEFAULT_ARCH,
    devices: int | None = None,
    verbose: bool = False,
) -> CheckResult:
    """Build ``sources`` for ``mode``, run ``entry`` in a child process and collect findings.

    ``timeout`` (default: ``SIMULATOR_TIMEOUT``, see ``simulator.limits``; 0: none) is the limit
    per launch, passed to the child; the mode as a whole is stopped up to ``TIMEOUT_GRACE_S``
    seconds after it. ``devices`` is the number of modelled GPUs the entry sees (1 to 16;
    default: ``SIMULATOR_DEVICES``, else 1), as for ``run_program``. ``verbose`` (memcheck) keeps
    the sanitizers' own reports of device code beside the runtime's compute-sanitizer-shaped ones.
    """
    if mode not in CHECK_MODES:
        raise SimBuildError(f"unknown mode '{mode}' for check: choose one of {', '.join(CHECK_MODES)}")
    row = mode_named(mode)
    environ = environment_for_devices(devices)
    check_environment(environ)
    ndevices = resolve_devices(devices, environ)
    limit = resolve_timeout(timeout)
    with launch_time_allowed(limit):  # a compiler run may take as long as a launch
        exe = build_executable(sources, entry, row.check_build, arch)
    grace = grace_after(limit)
    env = check_child_env(mode, limit, ndevices, verbose)
    # The entry, and every process it starts, ends with the check (supervise.start_tree).
    proc = start_tree(
        [str(exe)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        stdout, stderr = proc.communicate(timeout=wall_limit(limit))
    except subprocess.TimeoutExpired:
        end_tree(proc)
        stdout, stderr = proc.communicate()
        out = (stdout + stderr).decode(errors="replace")
        return CheckResult(
            mode,
            False,
            [
                f"{mode}: did not finish within {limit + grace:g} s (--timeout {limit:g} per launch, "
                f"plus {grace:g} s) and was stopped (an endless loop on the host?)"
            ],
            out,
            -1,
        )
    except BaseException:
        end_tree(proc)
        raise
    # The entry's output is bytes: a checker's report may quote a string that is not UTF-8.
    out = (stdout + stderr).decode(errors="replace")
    findings = row.findings(out)
    rc = proc.returncode
    if rc < 0:
        findings.append(f"{mode}: the run died with {death_by_signal(-rc)}")
    elif rc != 0 and not findings:
        findings.append(f"{mode}: the run exited with status {rc}")
    return CheckResult(mode, rc == 0 and not findings, findings, out, rc)
