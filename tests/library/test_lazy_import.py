"""``tl.nn`` and ``tl.optim`` are reachable from ``import torchlight as tl`` and load on first use,
so ``import torchlight`` stays free of numba and within its import-time budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# CPU seconds of `import torchlight` after numpy is loaded: 31-39 ms here (numpy itself ~75 ms,
# not counted). CPU time, not wall time: on a busy machine the wall time of the same import
# swings from 30 to 800 ms. The budget is 3x the measured cost; importing numba alone costs
# 180-200 ms of CPU here, so an import that pulled it in would exceed it.
IMPORT_BUDGET_S = 0.12

LAZY_PROBE = """
import json, sys
import torchlight as tl
before = sorted(m for m in ("torchlight.nn", "torchlight.optim") if m in sys.modules)
layer = tl.nn.LayerNorm(4)
opt = tl.optim.Adam(layer.parameters(), lr=1e-3)
x = tl.randn(2, 4)
layer(x).sum().backward()
opt.step()
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "numba_cuda", "llvmlite"))
print(json.dumps({"before": before, "dir": [n for n in ("nn", "optim") if n in dir(tl)],
                  "same": tl.nn is sys.modules["torchlight.nn"], "heavy": heavy}))
"""

TIME_PROBE = """
import time
import numpy
start = time.process_time()
import torchlight
print(time.process_time() - start)
"""


def _run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("TORCHLIGHT_DEVICE", None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_nn_and_optim_load_on_first_use_without_numba():
    done = _run(LAZY_PROBE)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["before"] == [], f"import torchlight imported {seen['before']} eagerly"
    assert seen["dir"] == ["nn", "optim"] and seen["same"]
    assert seen["heavy"] == [], f"tl.nn / tl.optim loaded {seen['heavy']}"


def test_unknown_attribute_is_an_attribute_error():
    done = _run("import torchlight as tl\ntry:\n    tl.nnn\nexcept AttributeError as e:\n    print(e)")
    assert done.returncode == 0, done.stderr
    assert "module 'torchlight' has no attribute 'nnn'" in done.stdout


def test_import_torchlight_is_within_its_budget():
    times = []
    for _ in range(5):
        done = _run(TIME_PROBE)
        assert done.returncode == 0, done.stderr
        times.append(float(done.stdout))
    best, budget = min(times) * 1000, IMPORT_BUDGET_S * 1000
    assert best < budget, (
        f"import torchlight took {best:.0f} ms of CPU at best of 5 (budget {budget:.0f} ms); "
        "see python -X importtime -c 'import torchlight'"
    )
