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

from .build import DEFAULT_ARCH, build_executable
from .findings import death_by_signal, parse_findings
from .limits import (
    check_environment,
    environment_for_devices,
    grace_after,
    resolve_devices,
    resolve_timeout,
    wall_limit,
)
from .sanitizer_env import check_child_env
from .supervise import die_with_parent

__all__ = ["CheckResult", "CHECK_MODES", "run_check"]

CHECK_MODES = ("memcheck", "racecheck", "synccheck")


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
) -> CheckResult:
    """Build ``sources`` for ``mode``, run ``entry`` in a child process and collect findings.

    ``timeout`` (default: ``SIMULATOR_TIMEOUT``, see ``simulator.limits``; 0: none) is the limit
    per launch, passed to the child; the mode as a whole is stopped up to ``TIMEOUT_GRACE_S``
    seconds after it. ``devices`` is the number of modelled GPUs the entry sees (1 to 16;
    default: ``SIMULATOR_DEVICES``, else 1), as for ``run_program``.
    """
    environ = environment_for_devices(devices)
    check_environment(environ)
    ndevices = resolve_devices(devices, environ)
    limit = resolve_timeout(timeout)
    exe = build_executable(sources, entry, mode, arch)
    grace = grace_after(limit)
    env = check_child_env(mode, limit, ndevices)
    try:
        proc = subprocess.run(
            [str(exe)],
            capture_output=True,
            text=True,
            timeout=wall_limit(limit),
            env=env,
            preexec_fn=die_with_parent(),  # a check killed from outside takes its child with it
        )
    except subprocess.TimeoutExpired as exc:
        out = "".join(
            (s or b"").decode(errors="replace") if isinstance(s, bytes) else (s or "")
            for s in (exc.stdout, exc.stderr)
        )
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
    out = proc.stdout + proc.stderr
    findings = parse_findings(mode, out)
    rc = proc.returncode
    if rc < 0:
        findings.append(f"{mode}: the run died with {death_by_signal(-rc)}")
    elif rc != 0 and not findings:
        findings.append(f"{mode}: the run exited with status {rc}")
    return CheckResult(mode, rc == 0 and not findings, findings, out, rc)
