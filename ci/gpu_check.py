"""The steps of ``ci/gpu-check.sh``: the whole device check of a GPU day, and its one report.

``ci/gpu-check.sh`` asks the tier table for the gpu tier's pytest arguments and environment
(``python3 -m ci.tiers pytest-args gpu`` / ``env gpu``) and hands them here. The steps, in order:

* ``precheck``: ``nvidia-smi`` lists a GPU and its compute capability (else: stop, status 2);
* ``build``: ``python -m torchlight build-kernels --arch <compute capability>`` into the tier's
  kernel folder;
* ``tests``: the gpu tier of the suite (the cudasim tier's tests, on the device, GPU_LAUNCH);
* ``gpu-launch``: the ``-m gpu_launch`` pass alone, on the device;
* ``sanitize``: ``compute-sanitizer`` memcheck and racecheck on the shipped kernels through
  their launchers (``python3 -m ci.sanitize_kernels``);
* ``bench``: ``benchmarks/bench_gpu.py``, the primitives and fused ops against PyTorch CUDA.

Each step runs with what is left of ``--budget`` seconds; a missing tool (compute-sanitizer,
PyTorch) skips that part with a line saying so. Everything goes into one markdown report,
``gpu-check.md`` under ``--out`` (default ``$OUT`` when set, else ``reports/gpu-check``); the
full logs go to ``--logs`` (default ``build/gpu-check/``). ``--dry-run`` runs the precheck and
writes the report with each step's command, running none. Exit status: 0 when every step that ran passed,
1 when one failed, 2 for no GPU or bad arguments.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from simulator.host import cpu_count

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("build", "tests", "gpu-launch", "sanitize", "bench")
DEFAULT_BUDGET_S = 480  # the 8 minutes a GPU day allows, report included
REPORT_RESERVE_S = 10
# Each step's own cap (it also gets no more than what is left of the budget).
STEP_CAP_S = {"build": 180, "tests": 300, "gpu-launch": 120, "sanitize": 150, "bench": 150}
# What each step keeps for itself from the steps before it: a slow test run cannot starve the rest.
STEP_MIN_S = {"build": 30, "tests": 60, "gpu-launch": 40, "sanitize": 40, "bench": 45}
SANITIZER_TOOLS = ("memcheck", "racecheck")
LOG_TAIL_LINES = 40
SMI_QUERY = "index,name,compute_cap,driver_version,memory.total"


class Usage(Exception):
    """A bad argument: the message says which and what is accepted."""


@dataclass
class Gpu:
    """One line of ``nvidia-smi --query-gpu``."""

    index: str
    name: str
    compute_cap: str
    driver: str
    memory: str

    @property
    def arch(self) -> str:
        """The SM version nvcc takes: compute capability 9.0 -> ``90``."""
        return self.compute_cap.replace(".", "")


@dataclass
class Step:
    """What one step did, for the report."""

    name: str
    status: str = "not selected"  # passed, failed, skipped, dry run, not selected
    seconds: float = 0.0
    commands: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    log_tail: str = ""
    extra: str = ""  # markdown appended as is (the benchmark table)


@dataclass
class Context:
    """The run's settings and what the steps share."""

    out: Path
    logs: Path
    dry_run: bool
    deadline: float
    jobs: int
    tier_args: list[str]
    tier_env: dict[str, str]
    gpu: Gpu | None = None
    later: list[str] = field(default_factory=list)  # the selected steps after the running one

    @property
    def kernel_dir(self) -> Path:
        return (ROOT / self.tier_env.get("TORCHLIGHT_CUDA_KERNEL_DIR", "build/kernels")).resolve()

    def env(self) -> dict[str, str]:
        """The children's environment: the tier's, the kernel folder, the working tree importable."""
        env = {**os.environ, **self.tier_env, "TORCHLIGHT_CUDA_KERNEL_DIR": str(self.kernel_dir)}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        return env

    def left(self) -> float:
        return self.deadline - time.monotonic() - REPORT_RESERVE_S


# --- arguments ------------------------------------------------------------------------------------


def _step_list(text: str, flag: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in STEPS]
    if unknown or not names:
        raise Usage(f"{flag} {text!r}: unknown step(s) {unknown}; the steps are {', '.join(STEPS)}")
    return names


def _tier_env(text: str) -> dict[str, str]:
    env: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.isidentifier():
            raise Usage(f"--tier-env: expected KEY=VALUE lines (python3 -m ci.tiers env gpu), got {line!r}")
        env[key] = " ".join(shlex.split(value)) if value else ""
    return env


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The options, and the steps selected; Usage on a bad value."""
    parser = argparse.ArgumentParser(prog="ci/gpu-check.sh", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, help="the report's folder (default: $OUT, else reports/gpu-check)"
    )
    parser.add_argument("--logs", type=Path, help="the full logs' folder (default: build/gpu-check)")
    parser.add_argument("--only", help=f"comma list of steps to run, from {','.join(STEPS)} (default: all)")
    parser.add_argument("--skip", help="comma list of steps not to run")
    parser.add_argument("--dry-run", action="store_true", help="precheck, then report the commands only")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S, help="seconds for everything")
    parser.add_argument("--jobs", type=int, help="pytest-xdist workers (default: the CPUs, at most 16)")
    parser.add_argument("--tier-args", required=True, help="`python3 -m ci.tiers pytest-args gpu` (one line)")
    parser.add_argument("--tier-env", required=True, help="`python3 -m ci.tiers env gpu` (KEY=VALUE lines)")
    args = parser.parse_args(argv)
    selected = list(STEPS)
    if args.only is not None:
        selected = _step_list(args.only, "--only")
    if args.skip is not None:
        skipped = _step_list(args.skip, "--skip")
        selected = [s for s in selected if s not in skipped]
    if args.budget <= REPORT_RESERVE_S:
        raise Usage(f"--budget {args.budget}: needs more than {REPORT_RESERVE_S} seconds")
    if args.jobs is not None and args.jobs < 1:
        raise Usage(f"--jobs {args.jobs}: needs a whole number >= 1")
    if not args.tier_args.strip():
        raise Usage("--tier-args is empty: `python3 -m ci.tiers pytest-args gpu` printed nothing")
    return args, [s for s in STEPS if s in selected]


# --- running things -------------------------------------------------------------------------------


def _tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run_logged(ctx: Context, step: Step, label: str, cmd: list[str], cap_s: float) -> tuple[int, str] | None:
    """Run ``cmd`` from the repository root, logging to ``build/gpu-check/<label>.log``.

    Returns (exit status, output), 124 when it ran out of time; None in a dry run or when no
    time is left (the step then says so).
    """
    step.commands.append(shlex.join(cmd))
    if ctx.dry_run:
        return None
    timeout = min(cap_s, ctx.left() - sum(STEP_MIN_S[s] for s in ctx.later))
    if timeout < 5:
        step.summary.append(f"`{label}` not run: the --budget is spent")
        return None
    start = time.monotonic()
    try:
        # A session of its own, so a timeout ends the whole tree (pytest-xdist workers hold the GPU).
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            env=ctx.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    except OSError as err:
        code, output = 127, f"{cmd[0]}: {err}\n"
    else:
        try:
            output, _ = proc.communicate(timeout=timeout)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
            code = 124
            output += f"\n(stopped after {timeout:.0f} s: the step's share of the --budget)\n"
    step.seconds += time.monotonic() - start
    (ctx.logs / f"{label}.log").write_text(output)
    step.log_tail = (step.log_tail + "\n" + _tail(output)).strip()
    return code, output


def precheck() -> tuple[list[Gpu], str | None]:
    """The GPUs nvidia-smi lists, or the reason there is none."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return [], "nvidia-smi not found on PATH (this check needs an NVIDIA GPU and its driver)"
    cmd = [smi, f"--query-gpu={SMI_QUERY}", "--format=csv,noheader"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return [], f"nvidia-smi did not run: {err}"
    if proc.returncode != 0:
        said = (proc.stderr or proc.stdout).strip().splitlines()
        return [], f"nvidia-smi exited {proc.returncode}: {said[0] if said else 'no output'}"
    gpus = []
    for line in proc.stdout.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) == 5:
            gpus.append(Gpu(*fields))
    if not gpus:
        return [], "nvidia-smi lists 0 GPUs (is the device passed to this machine or container?)"
    if not re.fullmatch(r"\d+\.\d+", gpus[0].compute_cap):
        return gpus, f"nvidia-smi gives no compute capability for GPU 0 ({gpus[0].compute_cap!r})"
    return gpus, None


def _junit_counts(path: Path) -> tuple[dict[str, int], list[str]] | None:
    """(passed/failed/error/skipped counts, failed test ids) of a pytest --junitxml file."""
    if not path.is_file():
        return None
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return None
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    failed: list[str] = []
    for case in root.iter("testcase"):
        kinds = {child.tag for child in case}
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        if "failure" in kinds:
            counts["failed"] += 1
            failed.append(name)
        elif "error" in kinds:
            counts["error"] += 1
            failed.append(name)
        elif "skipped" in kinds:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return counts, failed


def _pytest_step(ctx: Context, step: Step, extra: list[str], cap_s: float) -> None:
    xml = ctx.logs / f"{step.name}.xml"
    xml.unlink(missing_ok=True)
    workers = ["-n", str(ctx.jobs)] if ctx.jobs > 1 and _has_xdist() else []
    cmd = [sys.executable, "-m", "pytest", *ctx.tier_args, *extra, "-q", "-p", "no:cacheprovider"]
    cmd += [*workers, f"--junitxml={xml}"]
    step.summary.append("environment: " + " ".join(f"{k}={v}" for k, v in ctx.tier_env.items()))
    result = run_logged(ctx, step, step.name, cmd, cap_s)
    if result is None:
        step.status = "dry run" if ctx.dry_run else "skipped"
        return
    code, output = result
    counted = _junit_counts(xml)
    last = [ln for ln in output.splitlines() if re.search(r"\d+ (passed|failed|error|skipped)", ln)]
    if last:
        step.summary.append(f"pytest: {last[-1].strip('= ')}")
    if counted:
        counts, failed = counted
        step.summary.append(", ".join(f"{n} {k}" for k, n in counts.items()))
        step.summary += [f"FAILED {name}" for name in failed[:30]]
        if len(failed) > 30:
            step.summary.append(f"... and {len(failed) - 30} more (see {ctx.logs / step.name}.log)")
    if code == 124:
        step.summary.append("stopped: it ran out of time")
    elif code == 5:
        step.summary.append("pytest ran zero tests (exit 5)")
    step.status = "passed" if code == 0 else "failed"


def _has_xdist() -> bool:
    import importlib.util

    return importlib.util.find_spec("xdist") is not None


# --- the steps ----------------------------------------------------------------------------------------


def step_build(ctx: Context, step: Step) -> None:
    """nvcc builds the CUDA C kernels for the GPU present, into the tier's kernel folder."""
    arch = ctx.gpu.arch if ctx.gpu else "?"
    cmd = [sys.executable, "-m", "torchlight", "build-kernels", "--arch", arch, "--out", str(ctx.kernel_dir)]
    result = run_logged(ctx, step, "build", cmd, STEP_CAP_S["build"])
    if result is None:
        step.status = "dry run" if ctx.dry_run else "skipped"
        return
    code, output = result
    step.summary += [ln for ln in output.splitlines() if ln.startswith("build-kernels:")][:3]
    step.status = "passed" if code == 0 else "failed"


def step_tests(ctx: Context, step: Step) -> None:
    """The gpu tier: the tier table's folders and environment, on the device."""
    _pytest_step(ctx, step, [], STEP_CAP_S["tests"])


def step_gpu_launch(ctx: Context, step: Step) -> None:
    """The numba-cuda kernels with the GPU launch configuration, alone (``-m gpu_launch``)."""
    _pytest_step(ctx, step, ["-m", "gpu_launch"], STEP_CAP_S["gpu-launch"])


def find_sanitizer() -> tuple[str | None, list[str]]:
    """compute-sanitizer from PATH, $CUDA_HOME, /usr/local/cuda or beside nvcc; and where it looked."""
    looked = ["PATH"]
    found = shutil.which("compute-sanitizer")
    if found:
        return found, looked
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        homes.append(str(Path(nvcc).resolve().parent.parent))
    for home in filter(None, homes):
        for candidate in (Path(home) / "bin" / "compute-sanitizer", Path(home) / "compute-sanitizer" / "bin"):
            looked.append(str(candidate))
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate), looked
    return None, looked


def step_sanitize(ctx: Context, step: Step) -> None:
    """compute-sanitizer memcheck and racecheck over every launcher (ci/sanitize_kernels.py)."""
    sanitizer, looked = find_sanitizer()
    if sanitizer is None:
        step.status = "skipped"
        where = ", ".join(looked)
        step.summary.append(
            f"compute-sanitizer not found (looked at {where}): memcheck and racecheck not run"
        )
        return
    libs = [ctx.kernel_dir / f"{lib}.so" for lib in ("softmax_kernel", "layernorm_kernel")]
    if not ctx.dry_run and not all(p.is_file() for p in libs):
        step.status = "skipped"
        step.summary.append(f"no kernel libraries in {ctx.kernel_dir} (the build step did not make them)")
        return
    verdicts = []
    for tool in SANITIZER_TOOLS:
        cmd = [sanitizer, "--tool", tool, "--error-exitcode", "1", "--print-limit", "20"]
        cmd += [sys.executable, "-m", "ci.sanitize_kernels", "--kernel-dir", str(ctx.kernel_dir)]
        result = run_logged(ctx, step, f"sanitize-{tool}", cmd, STEP_CAP_S["sanitize"] / len(SANITIZER_TOOLS))
        if result is None:
            verdicts.append("dry run" if ctx.dry_run else "skipped")
            continue
        code, output = result
        said = [
            ln.strip("= ").strip() for ln in output.splitlines() if "SUMMARY" in ln or "not supported" in ln
        ]
        matched = [ln for ln in output.splitlines() if ln.startswith("sanitize_kernels:")]
        if code != 0 and any("not supported" in ln.lower() for ln in output.splitlines()):
            verdicts.append("skipped")
            step.summary.append(
                f"{tool}: compute-sanitizer does not accept this device: {said[-1] if said else ''}"
            )
            continue
        verdicts.append("passed" if code == 0 else "failed")
        step.summary.append(
            f"{tool}: {'clean' if code == 0 else f'FAILED (exit {code})'}; " + "; ".join(said + matched)
        )
    if "failed" in verdicts:
        step.status = "failed"
    elif "passed" in verdicts:
        step.status = "passed"
    else:
        step.status = verdicts[0] if verdicts else "skipped"


def step_bench(ctx: Context, step: Step) -> None:
    """benchmarks/bench_gpu.py: GB/s and the ratio to PyTorch CUDA, transfers apart."""
    table = ctx.logs / "bench_gpu.md"
    table.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        "benchmarks/bench_gpu.py",
        "--kernel-dir",
        str(ctx.kernel_dir),
        "--markdown",
        str(table),
    ]
    cmd += ["--json", str(ctx.logs / "bench_gpu.json")]
    result = run_logged(ctx, step, "bench", cmd, STEP_CAP_S["bench"])
    if result is None:
        step.status = "dry run" if ctx.dry_run else "skipped"
        return
    code, _ = result
    if table.is_file():
        # The table's own title becomes a sub-heading of this step's section.
        step.extra = re.sub(r"^# ", "#### ", table.read_text(), count=1, flags=re.M)
    step.status = "passed" if code == 0 else "failed"


# Step name -> what runs it. A new step is one entry here and one in STEPS.
RUNNERS: dict[str, Callable[[Context, Step], None]] = {
    "build": step_build,
    "tests": step_tests,
    "gpu-launch": step_gpu_launch,
    "sanitize": step_sanitize,
    "bench": step_bench,
}


# --- the report -------------------------------------------------------------------------------------


def _commit() -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown (no git)"
    return proc.stdout.strip() if proc.returncode == 0 else "unknown (not a git checkout)"


def write_report(
    ctx: Context, gpus: list[Gpu], problem: str | None, steps: list[Step], started: float
) -> Path:
    """The one markdown report: verdict, machine, a table of the steps, then each step's details."""
    failed = [s.name for s in steps if s.status == "failed"]
    if problem:
        verdict = f"NO GPU: {problem}"
    elif ctx.dry_run:
        verdict = "DRY RUN: nothing but the precheck ran"
    else:
        verdict = f"FAILED: {', '.join(failed)}" if failed else "PASSED"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"# GPU check, {now}", "", f"**{verdict}**", ""]
    lines.append(f"- commit: {_commit()}; host: {platform.node()}; Python {platform.python_version()}")
    lines.append(f"- time: {time.monotonic() - started:.0f} s of a {ctx.deadline - started:.0f} s budget")
    for gpu in gpus:
        lines.append(
            f"- GPU {gpu.index}: {gpu.name}, compute capability {gpu.compute_cap} (sm_{gpu.arch}), "
            f"driver {gpu.driver}, {gpu.memory}"
        )
    lines.append(f"- logs: {ctx.logs}")
    lines += ["", "| step | status | seconds |", "|---|---|---|"]
    lines.append(f"| precheck | {'failed' if problem else 'passed'} | |")
    lines += [f"| {s.name} | {s.status} | {s.seconds:.0f} |" for s in steps]
    for s in steps:
        if not (s.commands or s.summary or s.extra):
            continue
        lines += ["", f"## {s.name}: {s.status}", ""]
        lines += [f"- `{c}`" for c in s.commands]
        lines += [f"- {line}" for line in s.summary]
        if s.extra:
            lines += ["", s.extra.rstrip()]
        if s.log_tail and s.status in ("failed", "skipped"):
            lines += ["", "Last lines of its output:", "", "```text", s.log_tail, "```"]
    ctx.out.mkdir(parents=True, exist_ok=True)
    path = ctx.out / "gpu-check.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    """Run the selected steps and write the report; the exit status says how it went."""
    started = time.monotonic()
    try:
        args, selected = parse_args(sys.argv[1:] if argv is None else argv)
        tier_env = _tier_env(args.tier_env)
    except Usage as err:
        print(f"gpu-check: {err}", file=sys.stderr)
        return 2
    out = args.out or Path(os.environ.get("OUT") or ROOT / "reports" / "gpu-check")
    jobs = args.jobs or min(16, cpu_count())
    ctx = Context(
        out=out.resolve(),
        logs=(args.logs or ROOT / "build" / "gpu-check").resolve(),
        dry_run=args.dry_run,
        deadline=started + args.budget,
        jobs=jobs,
        tier_args=shlex.split(args.tier_args),
        tier_env=tier_env,
    )
    ctx.logs.mkdir(parents=True, exist_ok=True)
    gpus, problem = precheck()
    steps = [Step(name) for name in STEPS]
    if problem:
        for step in steps:
            if step.name in selected:
                step.status = "not run (no GPU)"
        path = write_report(ctx, gpus, problem, steps, started)
        print(f"gpu-check: no GPU: {problem}; report: {path}", file=sys.stderr)
        return 2
    ctx.gpu = gpus[0]
    print(f"gpu-check: {ctx.gpu.name} (sm_{ctx.gpu.arch}), steps: {', '.join(selected)}", flush=True)
    for step in steps:
        if step.name not in selected:
            continue
        ctx.later = selected[selected.index(step.name) + 1 :]
        RUNNERS[step.name](ctx, step)
        print(f"gpu-check: {step.name}: {step.status} ({step.seconds:.0f} s)", flush=True)
        for line in step.summary:
            print(f"  {line}", flush=True)
    path = write_report(ctx, gpus, None, steps, started)
    print(f"gpu-check: report: {path}")
    return 1 if any(s.status == "failed" for s in steps) else 0


if __name__ == "__main__":
    sys.exit(main())
