"""Hints and errors a pip user meets: they name commands that exist in an install, never
contradict themselves, and a fallback that cannot happen fails once with the one thing to install."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchlight.backends.cuda_c import loader as cuda_c_loader
from torchlight.backends.cuda_c.loader import KERNEL_DIR_ENV, KernelLibraryError

ROOT = Path(__file__).resolve().parents[2]
BLOCK_NUMBA = "import sys; sys.modules['numba'] = None; sys.modules['numba_cuda'] = None\n"
BLOCK_NUMBA_CUDA = "import sys; sys.modules['numba_cuda'] = None\n"


def run_script(tmp_path: Path, code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``code`` as a user's script file (so warnings can point at its lines)."""
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(code))
    child = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHLIGHT_", "NUMBA_ENABLE"))}
    child["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    child.update(env or {})
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=child, cwd=tmp_path, timeout=300
    )


def test_package_sources_name_no_repository_only_command():
    offenders = []
    for path in (ROOT / "torchlight").rglob("*.py"):
        text = path.read_text()
        for pattern in ("python -m simulator", "bash ci/", "ci/build-kernels.sh --out"):
            if pattern in text:
                offenders.append(f"{path.relative_to(ROOT)}: {pattern}")
    assert offenders == [], "an installed package cannot run these: " + "; ".join(offenders)


def test_fallback_without_numba_fails_once_with_the_one_install_line(tmp_path):
    done = run_script(
        tmp_path,
        BLOCK_NUMBA + "import torchlight as tl\ntl.tensor([1.0], device='cuda')\n",
        env={"TORCHLIGHT_CUDA_FALLBACK": "numba"},
    )
    assert done.returncode == 1
    err = done.stderr
    assert err.count("Traceback") == 1 and "During handling" not in err and "direct cause" not in err
    assert "Warning" not in err, "no warning may promise a fallback that then fails"
    last = err.strip().splitlines()[-1]
    assert last.startswith("ImportError: get_backend('cuda'): CUDA is unavailable")
    assert "TORCHLIGHT_CUDA_FALLBACK=numba needs numba" in last and last.endswith(
        'pip install "torchlight[numba]"'
    )


def test_missing_numba_cuda_without_numba_does_not_suggest_the_numba_twin(tmp_path):
    done = run_script(
        tmp_path,
        BLOCK_NUMBA
        + "from torchlight.backends.cuda import CudaBackend\n"
        + "try:\n    CudaBackend()\nexcept ImportError as err:\n    print('ERR', err)\n",
    )
    assert done.returncode == 0, done.stderr
    assert 'pip install "torchlight[cuda]"' in done.stdout
    assert "numba_backend()" not in done.stdout


def test_fallback_warning_points_at_the_users_line_and_does_not_repeat_the_variable(tmp_path):
    pytest.importorskip("numba", reason="the fallback to the numba twin needs numba")
    done = run_script(
        tmp_path,
        BLOCK_NUMBA_CUDA
        + textwrap.dedent(
            """
            import warnings
            import torchlight as tl
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                t = tl.tensor([1.0], device="cuda")  # line 7
            (w,) = caught
            print("AT", w.filename, w.lineno, w.category.__name__)
            print("MSG", w.message)
            """
        ),
        env={"TORCHLIGHT_CUDA_FALLBACK": "numba"},
    )
    assert done.returncode == 0, done.stderr
    at = next(line for line in done.stdout.splitlines() if line.startswith("AT"))
    assert at == f"AT {tmp_path / 'user_script.py'} 7 RuntimeWarning"
    msg = next(line for line in done.stdout.splitlines() if line.startswith("MSG"))
    assert "numba-cuda is not installed" in msg and "TORCHLIGHT_CUDA_FALLBACK=numba asks" in msg
    assert "to have get_backend('cuda') return it" not in msg


def test_no_gpu_error_suggests_the_fallback_variable_only_when_unset(monkeypatch):
    from torchlight.backends.numba_cuda.kernels import unavailable_error

    monkeypatch.delenv("TORCHLIGHT_CUDA_FALLBACK", raising=False)
    assert "TORCHLIGHT_CUDA_FALLBACK=numba to have" in str(unavailable_error("no driver"))
    monkeypatch.setenv("TORCHLIGHT_CUDA_FALLBACK", "numba")
    assert "TORCHLIGHT_CUDA_FALLBACK" not in str(unavailable_error("no driver"))


def test_kernel_dir_messages_do_not_contradict_themselves(monkeypatch, tmp_path):
    from torchlight.backends.cuda_c.provider import CudaCKernelProvider

    monkeypatch.delenv(KERNEL_DIR_ENV, raising=False)
    monkeypatch.setattr(cuda_c_loader, "DEFAULT_KERNEL_DIR", tmp_path / "empty")
    monkeypatch.setattr("torchlight.backends.cuda_c.provider.find_kernel_dir", lambda: None)
    with pytest.raises(KernelLibraryError) as unset:
        CudaCKernelProvider()
    text = str(unset.value)
    assert f"{KERNEL_DIR_ENV} is unset" in text and f"unset {KERNEL_DIR_ENV}" not in text
    assert "python -m torchlight build-kernels" in text

    monkeypatch.setenv(KERNEL_DIR_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(KernelLibraryError) as bad:
        cuda_c_loader.find_kernel_dir()
    text = str(bad.value)
    assert "is unset" not in text
    assert f"python -m torchlight build-kernels --out {tmp_path / 'nowhere'}" in text
    assert re.search(r"--simulator --out \S*nowhere", text)
