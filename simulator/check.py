"""Run an ``extern "C" int ENTRY(void)`` of a simulated build in a child process and judge it.

The child is a small executable (the translated sources, the runtime and a ``main`` calling
the entry) linked with the sanitizer runtime its mode needs, so nothing has to be preloaded.
A run is clean when the child exits 0 and printed no sanitizer or simulator report.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field

from .build import build_executable

__all__ = ["CheckResult", "CHECK_MODES", "run_check"]

CHECK_MODES = ("memcheck", "racecheck", "synccheck")

_ENV = {
    "memcheck": {
        "ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0:exitcode=86"
        ":allocator_may_return_null=1:strict_string_checks=1",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:exitcode=87",
        "LSAN_OPTIONS": "exitcode=88",
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
        m = re.search(r"(/\S+?:\d+):\d+: runtime error: (.*)", ln)
        if m:
            detail = f"memcheck: undefined behaviour: {m.group(2)} at {m.group(1)}"
            found.append(detail + (f"; in {where}" if where else ""))
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
        m = re.match(r"simulator: (?!memcheck: the fault above)(.*)", ln)
        if m:
            found.append(m.group(1))
    return found


def run_check(sources: list[str], entry: str, mode: str, timeout: float = 300.0) -> CheckResult:
    """Build ``sources`` for ``mode``, run ``entry`` in a child process and collect findings."""
    exe = build_executable(sources, entry, mode)
    env = dict(os.environ)
    env.update(_ENV[mode])
    env.pop("SIMULATOR_QUIET", None)
    try:
        proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as exc:
        out = (
            (exc.stdout or b"").decode(errors="replace")
            if isinstance(exc.stdout, bytes)
            else (exc.stdout or "")
        )
        return CheckResult(
            mode, False, [f"{mode}: timed out after {timeout:.0f} s (an endless loop?)"], out, -1
        )
    out = proc.stdout + proc.stderr
    findings = _findings(mode, out)
    rc = proc.returncode
    if rc < 0:
        findings.append(f"{mode}: the run died with signal {-rc} (e.g. a wild pointer or a stack overflow)")
    elif rc != 0 and not findings:
        findings.append(f"{mode}: the run exited with status {rc}")
    return CheckResult(mode, rc == 0 and not findings, findings, out, rc)
