"""A writer killed with SIGKILL at many points of a large save leaves the old or the new checkpoint.

The writer is a separate Python process that fills a model and its SGD momentum buffers with
one value ``v`` (the step count is ``v`` too) and saves them over the checkpoint. The parent
kills it at times spread over the measured length of a save; after every kill the checkpoint
must load, and hold one value throughout: the previous one or the new one. A control run does
the same to a plain ``open(path, "wb")`` writer and must see a broken file, which shows that
the kills really land inside the write.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile

import numpy as np
import pytest

from torchlight import nn
from torchlight.optim import SGD, CheckpointError, load_checkpoint

ROWS, COLS = 2048, 2048  # 16 MiB of weights + 16 MiB of momentum: a save takes tens of ms
KILLS = 24

WRITER = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from torchlight import nn
    from torchlight.optim import SGD, save_checkpoint

    path, value, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    model = nn.Linear({cols}, {rows})
    opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
    full = {{k: np.full(v.shape, value, np.float32) for k, v in model.state_dict().items()}}
    model.load_state_dict(full)
    state = opt.state_dict()
    for i, p in enumerate(opt.params):
        state[f"state.{{i}}.velocity"] = np.full(p.shape, value, np.float32)
    state["steps"] = np.asarray(value)
    opt.load_state_dict(state)
    print("ready", flush=True)
    start = time.perf_counter()
    if mode == "atomic":
        save_checkpoint(path, model, opt)
    else:
        arrays = {{"model/" + k: v for k, v in model.state_dict().items()}}
        arrays.update({{"optim/" + k: v for k, v in opt.state_dict().items()}})
        with open(path, "wb") as handle:
            np.savez(handle, **arrays)
            handle.flush()
            import os
            os.fsync(handle.fileno())
    print("done", time.perf_counter() - start, flush=True)
    """
).format(rows=ROWS, cols=COLS)


def _spawn(path, value: int, mode: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(value), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        raise AssertionError(f"writer did not start: {line!r} {proc.stderr.read()}")
    return proc


def _save_duration(path, mode: str) -> float:
    proc = _spawn(path, 1, mode)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return float(out.split()[-1])


def _loaded_value(path) -> int | None:
    """The one value the checkpoint holds, or None when it does not load or mixes values."""
    model = nn.Linear(COLS, ROWS)
    opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
    try:
        load_checkpoint(path, model, opt)
    except (CheckpointError, zipfile.BadZipFile, OSError, ValueError, KeyError):
        return None
    values = {float(v) for p in model.parameters() for v in np.unique(p.numpy())}
    values |= {float(v) for s in opt.state for b in s.values() for v in np.unique(b.numpy())}
    if len(values) != 1 or values != {float(opt.steps)}:
        return None
    return opt.steps


def _kill_run(tmp_path, mode: str, kills: int) -> dict:
    path = tmp_path / "ckpt.npz"
    duration = _save_duration(path, mode)
    assert _loaded_value(path) == 1
    outcomes = {"old": 0, "new": 0, "broken": 0, "temp files left": 0}
    current = 1
    started = time.perf_counter()
    for k in range(kills):
        value = current + 1
        delay = duration * 1.2 * k / (kills - 1)  # from the save's start to a bit past its end
        proc = _spawn(path, value, mode)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=120)
        got = _loaded_value(path)
        if got is None:
            outcomes["broken"] += 1
            if mode == "atomic":
                raise AssertionError(f"kill {k} at {delay * 1e3:.1f} ms left a broken checkpoint")
            break
        assert got in (current, value), f"kill {k}: checkpoint holds {got}, expected {current} or {value}"
        outcomes["old" if got == current else "new"] += 1
        current = got
        leftovers = [n for n in os.listdir(tmp_path) if n != "ckpt.npz"]
        assert all(n.startswith(".ckpt.npz.") and n.endswith(".tmp") for n in leftovers), leftovers
        outcomes["temp files left"] = len(leftovers)
    outcomes["save ms"] = round(duration * 1e3, 1)
    outcomes["seconds"] = round(time.perf_counter() - started, 1)
    return outcomes


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_killed_atomic_save_leaves_old_or_new_checkpoint(tmp_path):
    outcomes = _kill_run(tmp_path, "atomic", KILLS)
    print("atomic kill run:", outcomes)
    assert outcomes["broken"] == 0
    assert outcomes["old"] + outcomes["new"] == KILLS
    assert outcomes["old"] >= 1, "a kill right at the start must leave the old checkpoint"
    assert outcomes["temp files left"] >= 1, "no kill landed inside a write: the test proved nothing"


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_control_plain_write_is_broken_by_the_same_kills(tmp_path):
    outcomes = _kill_run(tmp_path, "plain", KILLS)
    print("plain-write kill run:", outcomes)
    assert outcomes["broken"] == 1, "the kills never caught a plain write half-done"
