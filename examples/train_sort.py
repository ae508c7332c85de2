"""Train a small decoder-only transformer to sort digits, on any torchlight backend.

    python examples/train_sort.py --device cpu --fused
    python examples/train_sort.py --device cuda --no-fused --epochs 3
    python examples/train_sort.py --checkpoint runs/sort.safetensors   # where the checkpoint goes

The checkpoint goes to ``build/examples/sort_checkpoint.safetensors`` of this repository (an ignored
output folder) unless ``--checkpoint PATH`` says otherwise; ``--checkpoint ''`` writes none.

Each example is ``d1 .. dL SEP s1 .. sL``: L random digits, a separator, then the same
digits sorted. The model learns to continue after SEP; accuracy counts a sequence as right
only when every generated digit is, decoding greedily from the prompt.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

try:
    import torchlight as tl
except ModuleNotFoundError as err:
    if err.name != "torchlight":
        raise
    # The examples import the installed package (README, "Set up on a fresh machine").
    print(
        "train_sort.py: needs torchlight, which is not installed here: "
        'from the repository root run  pip install ".[numba]"',
        file=sys.stderr,
    )
    raise SystemExit(2) from None
import numpy as np  # torchlight brings it

from torchlight import nn
from torchlight.nn import functional as F
from torchlight.optim import AdamW, check_writable, clip_grad_norm_, save_checkpoint

DIGITS = 10
SEP = DIGITS
VOCAB = DIGITS + 1
# build/ is git-ignored: a run never leaves files in the working directory or the source tree.
DEFAULT_CHECKPOINT = str(
    Path(__file__).resolve().parent.parent / "build" / "examples" / "sort_checkpoint.safetensors"
)


@dataclass
class Config:
    """Everything that shapes one training run."""

    device: str = "cpu"
    fused: bool = True
    length: int = 6
    dim: int = 64
    heads: int = 4
    layers: int = 2
    batch: int = 64
    epochs: int = 4
    steps: int = 100
    lr: float = 3e-3
    eval_size: int = 256
    seed: int = 0
    checkpoint: str | None = DEFAULT_CHECKPOINT
    progress: bool = True


def make_batch(rng: np.random.Generator, batch: int, length: int) -> np.ndarray:
    """``[batch, 2*length+1]`` token rows: digits, SEP, the digits sorted."""
    digits = rng.integers(0, DIGITS, size=(batch, length))
    sep = np.full((batch, 1), SEP)
    return np.concatenate([digits, sep, np.sort(digits, axis=1)], axis=1)


def split(rows: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and next-token targets; only the sorted half is scored."""
    inputs, targets = rows[:, :-1], rows[:, 1:].copy()
    targets[:, :length] = F.IGNORE_INDEX
    return inputs, targets


def sequence_accuracy(model: nn.DecoderLM, rows: np.ndarray, length: int) -> float:
    """Fraction of rows whose sorted half the model generates exactly (greedy decoding)."""
    model.eval()
    seq = rows[:, : length + 1]
    with tl.no_grad():
        for _ in range(length):
            logits = model(seq).numpy()[:, -1, :]
            seq = np.concatenate([seq, logits.argmax(-1)[:, None]], axis=1)
    model.train()
    return float(np.mean(np.all(seq[:, length + 1 :] == rows[:, length + 1 :], axis=1)))


def _progress(total: int, enabled: bool, label: str):
    if enabled:
        try:
            from tqdm import tqdm

            return tqdm(total=total, desc=label, leave=False)
        except ImportError:
            pass
    return None


def check_checkpoint(path: str | None) -> None:
    """Make the checkpoint's folder and check that the checkpoint can be written there, before any
    training: OSError naming the path (a folder, a read-only file, a folder that takes no file)."""
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        check_writable(path)


def train(cfg: Config, log=print) -> dict[str, list[float]]:
    """Run the training loop; returns per-epoch losses and accuracies (OSError at once, before
    training, when ``cfg.checkpoint`` cannot be written)."""
    check_checkpoint(cfg.checkpoint)
    tl.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    model = nn.DecoderLM(VOCAB, cfg.dim, cfg.heads, cfg.layers, max_len=2 * cfg.length + 1, fused=cfg.fused)
    model.to(cfg.device)
    optimizer = AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    held_out = make_batch(np.random.default_rng(cfg.seed + 1), cfg.eval_size, cfg.length)
    history: dict[str, list[float]] = {"loss": [], "accuracy": [], "first_loss": []}
    for epoch in range(1, cfg.epochs + 1):
        bar = _progress(cfg.steps, cfg.progress, f"epoch {epoch}")
        start, total = time.perf_counter(), 0.0
        for step in range(cfg.steps):
            # Cosine decay to 5% of the peak rate over the whole run settles the last errors.
            progress = ((epoch - 1) * cfg.steps + step) / max(cfg.epochs * cfg.steps - 1, 1)
            optimizer.lr = cfg.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * progress)))
            inputs, targets = split(make_batch(rng, cfg.batch, cfg.length), cfg.length)
            loss = F.cross_entropy(model(inputs), targets)
            optimizer.zero_grad()
            loss.backward()
            clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            value = loss.item()
            if epoch == 1 and step == 0:
                history["first_loss"].append(value)
            total += value
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{value:.3f}")
        if bar is not None:
            bar.close()
        accuracy = sequence_accuracy(model, held_out, cfg.length)
        history["loss"].append(total / cfg.steps)
        history["accuracy"].append(accuracy)
        log(
            f"epoch {epoch:2d}  loss {total / cfg.steps:.4f}  sequence accuracy {accuracy:6.1%}  "
            f"({time.perf_counter() - start:.1f}s)"
        )
    if cfg.checkpoint:
        save_checkpoint(cfg.checkpoint, model, optimizer)
        log(f"checkpoint written to {Path(cfg.checkpoint).resolve()}")
    return history


def parse_args(argv: list[str] | None = None) -> Config:
    """Command-line flags -> Config."""
    d = Config()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", default=d.device, help="cpu or cuda (default: cpu)")
    p.add_argument(
        "--fused", action=argparse.BooleanOptionalAction, default=d.fused, help="fused kernels (default on)"
    )
    p.add_argument("--length", type=int, default=d.length, help="digits per example")
    p.add_argument("--dim", type=int, default=d.dim)
    p.add_argument("--heads", type=int, default=d.heads)
    p.add_argument("--layers", type=int, default=d.layers)
    p.add_argument("--batch", type=int, default=d.batch)
    p.add_argument("--epochs", type=int, default=d.epochs)
    p.add_argument("--steps", type=int, default=d.steps, help="optimizer steps per epoch")
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--eval-size", type=int, default=d.eval_size)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument(
        "--checkpoint",
        metavar="PATH",
        default=d.checkpoint,
        help=f"where to write the model and optimizer (safetensors) ('' for none; default {d.checkpoint})",
    )
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    args = p.parse_args(argv)
    return Config(**{k: v for k, v in vars(args).items()})


def main(argv: list[str] | None = None) -> int:
    """Train and print the final accuracy."""
    cfg = parse_args(argv)
    try:
        check_checkpoint(cfg.checkpoint)  # a place no checkpoint can go is said before training
    except OSError as exc:
        print(f"train_sort.py: --checkpoint: {exc} (or --checkpoint '' for none)", file=sys.stderr)
        return 2
    history = train(cfg)
    print(f"final sequence accuracy: {history['accuracy'][-1]:.1%} ({cfg.device}, fused={cfg.fused})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
