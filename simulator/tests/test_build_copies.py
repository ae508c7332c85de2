"""What a build leaves out of a translated source's object: the copies of a kernel's body that no
launch in that build can run (a kernel with a barrier never runs as a plain loop; the checkers'
builds never run the block loops that only a fast build runs), which g++ would otherwise compile
and, under the checkers, instrument."""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import pytest

from simulator import build
from simulator.errors import SimBuildError

needs_tools = pytest.mark.skipif(
    shutil.which("g++") is None or shutil.which("nm") is None, reason="needs g++ and nm (binutils)"
)

# tile_flip has a barrier; scale has none. Their parameter lists tell their instances apart.
SOURCE = textwrap.dedent(
    """\
    #include <cuda_runtime.h>
    __global__ void tile_flip(const float* in, float* out) {
        __shared__ float t[64];
        t[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x];
        __syncthreads();
        out[blockIdx.x * 64 + threadIdx.x] = t[63 - threadIdx.x];
    }
    __global__ void scale(float* v, float s) { v[blockIdx.x * 64 + threadIdx.x] *= s; }
    #if defined(EXPECT_NO_LOOPS)
    static_assert(::__sim::block_loop() == nullptr, "this build runs no block loops");
    #endif
    #if defined(EXPECT_NO_FAST_LOOPS)
    static_assert(::__sim::block_loop_fast() == nullptr, "this build runs no fast-only block loops");
    #endif
    int main() {
        float *a, *b;
        cudaMalloc(&a, 64 * sizeof(float));
        cudaMalloc(&b, 64 * sizeof(float));
        tile_flip<<<1, 64>>>(a, b);
        scale<<<1, 64>>>(b, 2.0f);
        scale<<<1, 64>>>(b, 0.5f);
        return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
    }
    """
)


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    # One file for the module, in the session's build cache: each build's object is made once.
    src = tmp_path_factory.mktemp("copies") / "copies.cu"
    src.write_text(SOURCE)
    return src


def _plain_loops(obj) -> list[str]:
    """The plain loops (Packed::run_plain) instantiated for a kernel called by name in ``obj``."""
    names = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True, check=True).stdout
    return [n for n in names.splitlines() if "::run_plain(" in n and "Packed<void (*)(" not in n]


@needs_tools
# memcheck's defines are those of its object below, which is then built once.
@pytest.mark.parametrize("mode, defines", [("fast", []), ("memcheck", ["EXPECT_NO_FAST_LOOPS"])])
def test_a_kernel_with_a_barrier_gets_no_plain_loop(source, mode, defines):
    loops = _plain_loops(build.kernel_object(source, mode, defines=defines))
    assert any("std::tuple<float*, float>" in n for n in loops), loops  # scale's: barrier-free
    assert not any("std::tuple<float const*, float*>" in n for n in loops), loops  # tile_flip's


@needs_tools
@pytest.mark.parametrize("mode, defines", [("fast", []), ("memcheck", ["EXPECT_NO_FAST_LOOPS"])])
def test_launch_sites_share_their_kernels_plain_loop(source, mode, defines):
    # scale is launched twice by name: both launches run its definition's registered loop, so the
    # object holds that one copy of the kernel inlined into a loop, not one more per launch site.
    loops = _plain_loops(build.kernel_object(source, mode, defines=defines))
    # A [clone .cold] is a part of a copy that g++ split off.
    copies = [n for n in loops if "std::tuple<float*, float>" in n and "[clone" not in n]
    assert len(copies) == 1, loops


@needs_tools
@pytest.mark.parametrize(
    "mode, defines",
    [
        ("synccheck", ["EXPECT_NO_LOOPS", "EXPECT_NO_FAST_LOOPS"]),
        ("racecheck", ["EXPECT_NO_LOOPS", "EXPECT_NO_FAST_LOOPS"]),
        ("memcheck", ["EXPECT_NO_FAST_LOOPS"]),
        ("racecheck-shared", ["EXPECT_NO_FAST_LOOPS"]),
    ],
)
def test_block_loops_a_build_never_runs_are_null_at_compile_time(source, mode, defines):
    build.kernel_object(source, mode, defines=defines)


@needs_tools
@pytest.mark.parametrize("mode, define", [("fast", "EXPECT_NO_FAST_LOOPS"), ("memcheck", "EXPECT_NO_LOOPS")])
def test_block_loops_a_build_runs_stay(source, mode, define):
    with pytest.raises(SimBuildError):
        build.kernel_object(source, mode, defines=[define])
