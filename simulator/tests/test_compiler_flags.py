"""The build's flags follow the compiler: a C++ compiler that rejects ``-mtls-dialect=gnu2``
(clang before release 19) still builds and runs programs, without that flag."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys

import pytest

from simulator import toolchain

from .conftest import REPO

GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="needs g++ to stand behind the wrapper compiler")


@pytest.fixture
def old_clang_like(tmp_path):
    """A compiler that refuses -mtls-dialect=gnu2 as clang 18 does, and is g++ otherwise."""
    wrapper = tmp_path / "cxx-without-gnu2"
    wrapper.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do\n'
        '  if [ "$a" = "-mtls-dialect=gnu2" ]; then\n'
        "    echo \"error: unsupported argument 'gnu2' to option '-mtls-dialect='\" >&2; exit 1\n"
        "  fi\n"
        "done\n"
        f'exec "{GXX}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper)


def test_the_flag_is_used_only_where_the_compiler_takes_it(old_clang_like):
    assert "-mtls-dialect=gnu2" not in toolchain.common_flags(old_clang_like)
    on_x86 = platform.machine() in ("x86_64", "AMD64")
    assert ("-mtls-dialect=gnu2" in toolchain.common_flags(GXX)) == on_x86


def test_a_program_builds_and_runs_with_such_a_compiler(old_clang_like, tmp_path):
    src = tmp_path / "square.cu"
    src.write_text(
        "#include <cstdio>\n#include <cuda_runtime.h>\n"
        "__global__ void sq(int* d) { d[threadIdx.x] = threadIdx.x * threadIdx.x; }\n"
        "int main() {\n    int* d; int h[64]; long s = 0;\n    cudaMalloc(&d, sizeof h);\n"
        "    sq<<<1, 64>>>(d);\n    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);\n"
        '    for (int i = 0; i < 64; ++i) s += h[i];\n    std::printf("sum=%ld\\n", s);\n    return 0;\n}\n'
    )
    env = dict(os.environ, CXX=old_clang_like, PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-m", "simulator", "run", str(src)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == f"sum={sum(i * i for i in range(64))}"
