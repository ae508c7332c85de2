"""ci/gpu-check.sh on a machine without a GPU: it stops at the precheck, and with a stand-in
``nvidia-smi`` first on PATH its argument handling and its report are those of a GPU day."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "ci" / "gpu-check.sh"
sys.path.insert(0, str(ROOT))

from ci import gpu_check, tiers  # noqa: E402

H200_LINE = "0, NVIDIA H200, 9.0, 570.86.15, 143771 MiB"


def _bin(tmp_path: Path, nvidia_smi: str | None) -> Path:
    """A PATH folder with what the script needs (dirname) and, when given, a stand-in nvidia-smi."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    found = shutil.which("dirname")
    assert found, "dirname is needed to run this test"
    (bindir / "dirname").symlink_to(found)
    if nvidia_smi is not None:
        smi = bindir / "nvidia-smi"
        smi.write_text(f"#!{shutil.which('bash') or '/bin/bash'}\n{nvidia_smi}\n")
        smi.chmod(0o755)
    return bindir


def _run(
    tmp_path: Path, nvidia_smi: str | None, *args: str, out_env: bool = False
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHLIGHT_", "OUT"))}
    env.update(PATH=str(_bin(tmp_path, nvidia_smi)), PYTHON=sys.executable)
    if out_env:
        env["OUT"] = str(tmp_path / "from-env")
    else:
        args = ("--out", str(tmp_path / "out"), *args)
    bash = shutil.which("bash") or "/bin/bash"
    return subprocess.run(
        [bash, str(SCRIPT), "--logs", str(tmp_path / "logs"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.parametrize(
    ("smi", "reason"),
    [
        (None, "nvidia-smi not found on PATH (this check needs an NVIDIA GPU and its driver)"),
        (
            'echo "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver."; exit 9',
            "nvidia-smi exited 9: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
            "driver.",
        ),
        ("exit 0", "nvidia-smi lists 0 GPUs"),
    ],
    ids=["no-nvidia-smi", "driver-fails", "no-gpu-listed"],
)
def test_without_a_gpu_it_stops_at_the_precheck(tmp_path, smi, reason):
    proc = _run(tmp_path, smi)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"gpu-check: no GPU: {reason}" in proc.stderr
    report = (tmp_path / "out" / "gpu-check.md").read_text()
    assert f"**NO GPU: {reason}" in report
    assert "| build | not run (no GPU) |" in report and "| bench | not run (no GPU) |" in report
    assert not (tmp_path / "logs" / "build.log").exists(), "no step may run without a GPU"


def test_dry_run_with_a_gpu_reports_every_step_with_the_gpu_tiers_arguments(tmp_path):
    proc = _run(tmp_path, f'echo "{H200_LINE}"', "--dry-run", out_env=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = (tmp_path / "from-env" / "gpu-check.md").read_text()  # $OUT when no --out
    assert "**DRY RUN" in report
    assert "GPU 0: NVIDIA H200, compute capability 9.0 (sm_90), driver 570.86.15, 143771 MiB" in report
    gpu = tiers.tier("gpu")
    kernel_dir = (ROOT / gpu.environment()["TORCHLIGHT_CUDA_KERNEL_DIR"]).resolve()
    assert f"-m torchlight build-kernels --arch 90 --out {kernel_dir}`" in report
    tier_args = shlex.join(gpu.pytest_args())
    assert f"-m pytest {tier_args} -q" in report, "the tests step must run the tier table's folders"
    assert f"-m pytest {tier_args} -m gpu_launch -q" in report
    for key, value in gpu.environment().items():
        assert f"{key}={value}" in report, f"the tier's {key} is not in the tests' environment"
    assert "benchmarks/bench_gpu.py --kernel-dir" in report
    for step in ("build", "tests", "gpu-launch", "bench"):
        assert f"| {step} | dry run |" in report
    assert "| sanitize | dry run |" in report or "compute-sanitizer not found" in report
    assert not list((tmp_path / "logs").glob("*.log")), "a dry run runs no step"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--only", "build,nope"],
            "--only 'build,nope': unknown step(s) ['nope']; the steps are build, tests",
        ),
        (["--skip", ""], "--skip '': unknown step(s) []"),
        (["--budget", "5"], "--budget 5.0: needs more than 10 seconds"),
        (["--jobs", "0"], "--jobs 0: needs a whole number >= 1"),
    ],
)
def test_bad_arguments_stop_before_anything_runs(tmp_path, args, message):
    proc = _run(tmp_path, f'echo "{H200_LINE}"', *args)
    assert proc.returncode == 2 and f"gpu-check: {message}" in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()


def test_selected_steps_run_for_real_and_a_missing_part_is_skipped_with_its_reason(tmp_path, monkeypatch):
    # The real path (no --dry-run) with only the sanitize step, against an empty kernel folder:
    # with or without compute-sanitizer here, the step is skipped and says why.
    bindir = _bin(tmp_path, f'echo "{H200_LINE}"')
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    empty = tmp_path / "kernels"
    empty.mkdir()
    code = gpu_check.main(
        [
            "--out", str(tmp_path / "out"), "--logs", str(tmp_path / "logs"), "--only", "sanitize",
            "--tier-args", "tests/generic", "--tier-env", f"TORCHLIGHT_CUDA_KERNEL_DIR={empty}",
        ]
    )  # fmt: skip
    assert code == 0
    report = (tmp_path / "out" / "gpu-check.md").read_text()
    assert "**PASSED**" in report and "| sanitize | skipped |" in report
    assert "| tests | not selected |" in report
    assert (
        "compute-sanitizer not found (looked at PATH" in report
        or f"no kernel libraries in {empty} (the build step did not make them)" in report
    )


def test_the_script_asks_the_tier_table_and_passes_every_argument_on():
    text = SCRIPT.read_text()
    assert "-m ci.tiers pytest-args gpu" in text and "-m ci.tiers env gpu" in text
    assert '"$@"' in text
    assert set(gpu_check.RUNNERS) == set(gpu_check.STEPS)


def _ends(pid: int, wait_s: float = 30.0) -> bool:
    """True once ``pid`` is gone or a zombie (killed, not yet reaped by whoever adopted it)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_a_step_past_its_share_of_the_budget_is_stopped_with_its_whole_process_tree(tmp_path, monkeypatch):
    # A stand-in compute-sanitizer that starts a child and hangs: the step must end both.
    pidfile = tmp_path / "child.pid"
    bindir = _bin(tmp_path, f'echo "{H200_LINE}"')
    sanitizer = bindir / "compute-sanitizer"
    sanitizer.write_text(f"#!{shutil.which('bash') or '/bin/bash'}\nsleep 300 &\necho $! > {pidfile}\nwait\n")
    sanitizer.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    for lib in ("softmax_kernel.so", "layernorm_kernel.so"):
        (kernels / lib).write_bytes(b"")  # only their presence is checked before the run
    code = gpu_check.main(
        [
            "--out", str(tmp_path / "out"), "--logs", str(tmp_path / "logs"), "--only", "sanitize",
            "--budget", str(gpu_check.REPORT_RESERVE_S + 12), "--tier-args", "tests/generic",
            "--tier-env", f"TORCHLIGHT_CUDA_KERNEL_DIR={kernels}",
        ]
    )  # fmt: skip
    assert code == 1
    report = (tmp_path / "out" / "gpu-check.md").read_text()
    assert "| sanitize | failed |" in report and "memcheck: FAILED (exit 124)" in report
    assert "the step's share of the --budget" in report
    assert "racecheck` not run: the --budget is spent" in report
    assert _ends(int(pidfile.read_text())), "the step's child is still running"
