"""Run an ``extern "C" int ENTRY(void)`` of a simulated build in a child process and judge it.

The child is a small executable (the translated sources, the runtime and a ``main`` calling
the entry) linked with the sanitizer runtime its mode needs, so nothing has to be preloaded.
A run is clean when the child exits 0 and printed no sanitizer or simulator report. The entry
is a test driver, so memcheck holds it to more than ``run`` holds a program: device buffers it
leaves allocated are findings (``run`` reports them only with ``--leak-check full``), and so
are sanitizer reports from its host code, labelled ``host code`` (``run``: ``--check-host``).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass, field

from .build import DEFAULT_ARCH, SimBuildError, build_executable
from .limits import check_environment, fibers_forced, launch_timeout
from .supervise import die_with_parent

# After the per-launch limit, this long again (at most; never more than the limit itself) for
# the launch's report and the program's exit.
TIMEOUT_GRACE_S = 10.0


def grace_after(limit: float) -> float:
    """Seconds a run may go on after its per-launch ``limit`` before it is stopped."""
    return min(TIMEOUT_GRACE_S, limit)


_SIGNAL_HINTS = {
    signal.SIGABRT: "an abort: a failed assert() or std::abort",
    signal.SIGSEGV: "a segmentation fault: e.g. a wild pointer or a stack overflow",
    signal.SIGBUS: "a bus error: e.g. a misaligned or wild pointer",
    signal.SIGFPE: "an arithmetic fault: e.g. an integer division by zero",
    signal.SIGILL: "an illegal instruction: e.g. __builtin_trap or a function that fell off its end",
}


def death_by_signal(number: int) -> str:
    """``signal N`` with what it usually means in a simulated program."""
    hint = _SIGNAL_HINTS.get(number, "")
    return f"signal {number}" + (f" ({hint})" if hint else "")


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


__all__ = ["CheckResult", "CHECK_MODES", "run_check"]

CHECK_MODES = ("memcheck", "racecheck", "synccheck")

# Sanitizer options per mode. memcheck: reports do not stop the program by themselves
# (halt_on_error=0, kernels built with -fsanitize-recover=address): the runtime stops it at a
# device fault with status 86 and lets host-code reports pass unless host checks are on
# (runtime/reports.cpp). The remaining options keep the cost near the README's bound (see
# _MEMCHECK_COST_OPTIONS).
_MEMCHECK_COST_OPTIONS = ""
_ENV = {
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
    "racecheck": {"TSAN_OPTIONS": "halt_on_error=0:exitcode=66:report_signal_unsafe=0:history_size=4"},
    "synccheck": {},
}

_FRAME = re.compile(r"#\d+ 0x[0-9a-f]+ in (.+?) (/\S+?):(\d+)(?::\d+)?$|#\d+ (.+?) (/\S+?):(\d+)(?::\d+)? \(")


@dataclass
class CheckResult:
    """Outcome of one mode: ``ok``, the findings (one line each) and the child's raw output."""

    mode: str
    ok: bool
    findings: list[str] = field(default_factory=list)
    output: str = ""
    returncode: int = 0


def _runtime_frame(path: str) -> bool:
    return "/simulator/runtime/" in path or path.startswith("/usr/") or "/gcc/" in path


def _first_user_frame(lines: list[str], start: int) -> str:
    for ln in lines[start : start + 40]:
        m = _FRAME.search(ln.strip())
        if not m:
            continue
        func = m.group(1) or m.group(4)
        path = m.group(2) or m.group(5)
        line = m.group(3) or m.group(6)
        if not _runtime_frame(path):
            return f"{func} at {path}:{line}"
    return "source line unknown"


def _tsan_threads(lines: list[str]) -> dict[str, str]:
    """Thread names (``T3`` -> ``kernel K block (..) thread (..)``) as one report lists them.

    The runtime reuses ThreadSanitizer fibers between launches and renames them, so a name is
    only right within the report that prints it.
    """
    names = {}
    for ln in lines:
        m = re.match(r"\s*Thread (T\d+) '(.*)' \(tid=", ln)
        if m:
            names[m.group(1)] = m.group(2)
    return names


def _report_end(lines: list[str], start: int) -> int:
    for j in range(start + 1, len(lines)):
        if lines[j].startswith("SUMMARY") or "WARNING: ThreadSanitizer:" in lines[j]:
            return j
    return len(lines)


# Lines the runtime prints to label a sanitizer report, not findings of their own.
_LABEL = re.compile(
    r"simulator: memcheck: (the fault above happened in|the undefined behaviour below happened in"
    r"|host code: the report (above|below) is from host code|note: )"
)
_HOST_ABOVE = "simulator: memcheck: host code: the report above"
_HOST_BELOW = "simulator: memcheck: host code: the report below"
_UB_BELOW = re.compile(r"simulator: memcheck: the undefined behaviour below happened in (.*)")


def _asan_is_host(lines: list[str], start: int) -> bool:
    """Whether the AddressSanitizer report at ``start`` is labelled as host code after it."""
    for ln in lines[start + 1 :]:
        if "ERROR: AddressSanitizer" in ln or "runtime error:" in ln:
            return False
        if ln.startswith(_HOST_ABOVE):
            return True
    return False


def _ub_label(lines: list[str], at: int) -> tuple[bool, str]:
    """(host code?, the CUDA thread) from the runtime's label printed just before a UBSan report."""
    for ln in reversed(lines[max(0, at - 3) : at]):
        if ln.startswith(_HOST_BELOW):
            return True, ""
        m = _UB_BELOW.match(ln)
        if m:
            return False, m.group(1)
    return False, ""


def _findings(mode: str, out: str) -> list[str]:
    lines = out.splitlines()
    found: list[str] = []
    where = ""
    for ln in lines:
        m = re.search(r"simulator: memcheck: the fault above happened in (.*)", ln)
        if m:
            where = m.group(1)
    for i, ln in enumerate(lines):
        m = re.search(r"ERROR: AddressSanitizer: ([\w-]+)", ln)
        if m:
            kind = m.group(1)
            if _asan_is_host(lines, i):
                found.append(f"memcheck: host code: {kind}: {_first_user_frame(lines, i + 1)}")
                continue
            detail = f"{kind}: {_first_user_frame(lines, i + 1)}"
            if where:
                detail += f"; in {where}"
            found.append(f"memcheck: {detail}")
            continue
        if "ERROR: LeakSanitizer" in ln:
            block = "\n".join(lines[i : i + 30])
            what = (
                "device memory leak (cudaMalloc without cudaFree)" if "cudaMalloc" in block else "memory leak"
            )
            found.append(f"memcheck: {what}: {_first_user_frame(lines, i + 1)}")
            continue
        m = re.search(r"(/\S+?):(\d+):\d+: runtime error: (.*)", ln)
        if m:
            host, thread = _ub_label(lines, i)
            at = f"at {m.group(1)}:{m.group(2)}"
            if _runtime_frame(m.group(1)):  # inside a runtime header: name the program's line
                at = _first_user_frame(lines, i + 1)
            detail = f"memcheck: {'host code: ' if host else ''}undefined behaviour: {m.group(3)} {at}"
            found.append(detail + (f"; in {thread}" if thread else ""))
            continue
        if "WARNING: ThreadSanitizer:" in ln:
            kind = ln.split("WARNING: ThreadSanitizer:", 1)[1].split("(")[0].strip()
            detail = f"racecheck: {kind}"
            tsan_names = _tsan_threads(lines[i : _report_end(lines, i)])
            accesses = []
            for j in range(i + 1, min(i + 60, len(lines))):
                am = re.match(
                    r"\s*(?:Previous )?(\w+) of size (\d+) at (0x[0-9a-f]+) by thread (T\d+)", lines[j]
                )
                if am:
                    who = tsan_names.get(am.group(4), am.group(4))
                    accesses.append(f"{am.group(1).lower()} by {who} in {_first_user_frame(lines, j + 1)}")
                if lines[j].startswith("SUMMARY"):
                    break
            if accesses:
                detail += ": " + "; ".join(accesses[:2])
            found.append(detail)
            continue
        if _LABEL.match(ln):
            continue
        m = re.match(r"simulator: (.*)", ln)
        if m:
            found.append(m.group(1))
    return found


def run_check(
    sources: list[str], entry: str, mode: str, timeout: float | None = None, arch: int = DEFAULT_ARCH
) -> CheckResult:
    """Build ``sources`` for ``mode``, run ``entry`` in a child process and collect findings.

    ``timeout`` (default: ``SIMULATOR_TIMEOUT``, see ``simulator.limits``; 0: none) is the limit
    per launch, passed to the child; the mode as a whole is stopped up to ``TIMEOUT_GRACE_S``
    seconds after it.
    """
    check_environment()
    limit = resolve_timeout(timeout)
    exe = build_executable(sources, entry, mode, arch)
    grace = grace_after(limit)
    env = dict(os.environ)
    env.update(_ENV[mode])
    env.pop("SIMULATOR_QUIET", None)
    env["SIMULATOR_TIMEOUT"] = f"{limit:g}"
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
    findings = _findings(mode, out)
    rc = proc.returncode
    if rc < 0:
        findings.append(f"{mode}: the run died with {death_by_signal(-rc)}")
    elif rc != 0 and not findings:
        findings.append(f"{mode}: the run exited with status {rc}")
    return CheckResult(mode, rc == 0 and not findings, findings, out, rc)
