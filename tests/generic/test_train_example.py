"""The training example, shortened: the loss must fall well below where it started."""

from __future__ import annotations

import pytest
import tl_testing


@pytest.mark.op("train_example")
@pytest.mark.parametrize("fused", [True, False], ids=["fused", "unfused"])
def test_short_training_run_learns(backend, fused):
    if tl_testing.LIMITS.tier == "cudasim":
        pytest.skip(
            "a training loop is too slow under the numba CUDA simulator; nn equivalence tests cover it"
        )
    example = tl_testing.load_train_example()
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
