"""The training example's command line: checkpoint and final line, default checkpoint folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import tl_testing

ROOT = Path(__file__).resolve().parents[2]


def _train(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """``examples/train_sort.py ARGS`` run in ``cwd`` (no progress bar)."""
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "train_sort.py"), "--no-progress", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_command_line_writes_checkpoint_and_final_line(tmp_path):
    ckpt = tmp_path / "out.safetensors"
    small = ["--epochs", "1", "--steps", "3", "--length", "3", "--dim", "16", "--heads", "2"]
    run = _train(tmp_path, *small, "--layers", "1", "--eval-size", "8", "--checkpoint", str(ckpt))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith("final sequence accuracy:")
    assert ckpt.exists()
    assert list(tmp_path.iterdir()) == [ckpt], "the example must write nothing else into the cwd"


def test_default_checkpoint_goes_to_an_ignored_build_folder():
    example = tl_testing.load_train_example()
    default = Path(example.parse_args([]).checkpoint)
    assert default.parent == ROOT / "build" / "examples"
    assert "build/" in (ROOT / ".gitignore").read_text().splitlines()


def test_a_checkpoint_path_that_cannot_be_written_is_refused_before_training(tmp_path):
    read_only = tmp_path / "kept.npz"
    read_only.write_bytes(b"an earlier run's model")
    read_only.chmod(0o444)
    for bad in (tmp_path, read_only):  # a folder, a read-only file
        run = _train(tmp_path, "--checkpoint", str(bad))
        assert run.returncode == 2, run.stderr
        assert run.stdout == "", "nothing was trained"
        assert run.stderr.startswith("train_sort.py: --checkpoint: cannot write"), run.stderr
        assert run.stderr.count("\n") == 1
    assert read_only.read_bytes() == b"an earlier run's model"
