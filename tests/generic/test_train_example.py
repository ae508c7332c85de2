"""The training example, shortened: the loss must fall well below where it started."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import tl_testing

ROOT = Path(__file__).resolve().parents[2]


def _example():
    spec = importlib.util.spec_from_file_location("train_sort", ROOT / "examples" / "train_sort.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


@pytest.mark.op("train_example")
@pytest.mark.parametrize("fused", [True, False], ids=["fused", "unfused"])
def test_short_training_run_learns(backend, fused):
    if tl_testing.LIMITS.tier == "cudasim":
        pytest.skip(
            "a training loop is too slow under the numba CUDA simulator; nn equivalence tests cover it"
        )
    example = _example()
    cfg = example.Config(
        device=backend,
        fused=fused,
        length=4,
        dim=32,
        heads=2,
        layers=1,
        batch=32,
        epochs=2,
        steps=40,
        lr=3e-3,
        eval_size=32,
        checkpoint=None,
        progress=False,
    )
    history = example.train(cfg, log=lambda *_: None)
    first, last = history["first_loss"][0], history["loss"][-1]
    assert last < 0.35 * first, f"loss went from {first:.3f} to only {last:.3f}"


def test_command_line_writes_checkpoint_and_final_line(tmp_path):
    ckpt = tmp_path / "out.npz"
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "train_sort.py"),
            "--epochs",
            "1",
            "--steps",
            "3",
            "--length",
            "3",
            "--dim",
            "16",
            "--heads",
            "2",
            "--layers",
            "1",
            "--eval-size",
            "8",
            "--no-progress",
            "--checkpoint",
            str(ckpt),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith("final sequence accuracy:")
    assert ckpt.exists()
    assert list(tmp_path.iterdir()) == [ckpt], "the example must write nothing else into the cwd"


def test_default_checkpoint_goes_to_an_ignored_build_folder():
    example = _example()
    default = Path(example.parse_args([]).checkpoint)
    assert default.parent == ROOT / "build" / "examples"
    assert "build/" in (ROOT / ".gitignore").read_text().splitlines()
