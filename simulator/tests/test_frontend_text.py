"""The front end reads a source as nvcc does, as bytes: text that is not ASCII in string literals,
comments or the source's folder name (UTF-8, or Latin-1 bytes that are not UTF-8) moves none of
its rewrites, and the bytes reach the program unchanged."""

from __future__ import annotations

import os
import subprocess
import sys

from .conftest import REPO

# A launch, a __shared__ array and the built-ins, all after the text under test.
PROGRAM = b"""#include <cstdio>
// TEXT
static const char* greeting = "TEXT";
__global__ void reverse(int* out) {
    __shared__ int tile[32];  /* TEXT */
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}
int main() {
    int* d;
    cudaMalloc(&d, 32 * sizeof(int));
    reverse<<<1, 32>>>(d);  // TEXT
    int h[32];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    std::printf("%s %d %d\\n", greeting, h[0], h[31]);
    return 0;
}
"""


def _run(folder, text: bytes) -> subprocess.CompletedProcess:
    os.makedirs(folder)
    src = os.path.join(folder, "prog.cu")
    with open(src, "wb") as fh:
        fh.write(PROGRAM.replace(b"TEXT", text))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "simulator", "run", src]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, env=env, timeout=280)


def test_utf8_text_and_folder_name(tmp_path):
    text = "café, 東京, 🚀".encode()  # two-, three- and four-byte characters
    proc = _run(tmp_path / "josé", text)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == text + b" 31 0\n"


def test_latin1_text_and_folder_name(tmp_path):
    text = "café, über".encode("latin-1")  # bytes that are not UTF-8, as an editor in Latin-1 saves them
    # The folder's name in Latin-1 bytes, as the file system keeps them.
    folder = tmp_path / os.fsdecode("jos\xe9".encode("latin-1"))
    proc = _run(folder, text)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert proc.stdout == text + b" 31 0\n"
