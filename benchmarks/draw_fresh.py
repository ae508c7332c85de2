"""Draw seeded samples of whole CUDA programs from sources the broad sample did not use, libraries
allowed, and write them as manifests.

Usage: ``python benchmarks/draw_fresh.py --root DIR [--seed 3917] [--sample programs|builds]
[--exclude MANIFEST ...] [--out MANIFEST]``

``programs`` (default ``benchmarks/manifests/fresh_sample.json``) is a sample for
``benchmarks/real_programs.py``: HeCBench folders, NVIDIA's cuda-samples (``4_CUDA_Libraries``
drawn on its own) and The CUDA Handbook's examples, each with its sources, flags and arguments
as its own build files give them. ``builds`` (default ``benchmarks/manifests/build_sample.json``)
is a sample for ``benchmarks/build_programs.py``, which builds each program with its own build
files: HeCBench folders (none of the ``programs`` sample's), Rodinia's CUDA programs (all of them)
and cuda-samples CMake projects; its entries also carry the sources and flags, so
``real_programs.py`` runs it by hand too.

``--root`` holds one checkout per source under its folder name (``SOURCES``). The draw repeats:
candidates are found by the rules of ``program_finder.py``, sorted by name, and
``random.Random(seed)`` shuffles each source's pool; the first ``count`` that are in scope, not
tried before (``TRIED``, and every program named in an ``--exclude`` manifest) and reviewed as
self-checking (``CHECKS``) are taken; a source with fewer leaves the rest to the next one. A
drawn program nobody has reviewed stops the draw with a proposed check to read and enter.

A later draw takes a new seed and excludes the earlier manifests; ``fresh_sample2.json`` was drawn
with ``--seed 41207 --exclude`` the fresh, broad, build, limit and llmc_dev_cuda manifests
(``benchmarks/results/fresh_sample2.md`` gives the command).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from draw_sample import EXIT, pick_reviewed
from program_finder import (
    Candidate,
    cmake_programs,
    listed_make_programs,
    make_programs,
    needs,
    program_text,
    unfetched_data,
)

MANIFESTS = Path(__file__).resolve().parent / "manifests"
HECBENCH_MAKE = {"CC": "nvcc", "ARCH": "sm_80"}  # as HeCBench's README builds a folder
# What build_programs.py puts on make's command line: "{nvcc}" and "{toolkit}" stand for its
# --nvcc and --toolkit.
HECBENCH_BUILD_VARS = {"CC": "{nvcc}", "ARCH": "sm_80"}
RODINIA_BUILD_VARS = {"CUDA_DIR": "{toolkit}"}


@dataclass(frozen=True)
class Source:
    """A checkout: its folder under the root, repository, commit, and how its programs are found."""

    folder: str
    repo: str
    commit: str
    kind: str  # "make": HeCBench folders (``where`` a glob); "cmake": executables below ``where``
    where: str
    include: tuple[str, ...] = ()
    leave_out: str = ""  # a regular expression on program names this source does not offer


HECBENCH = Source(
    "hecbench", "zjin-lcf/HeCBench", "f27000a5188f8ac79bd43fc95a1b3f890c18823d", "make", "src/*-cuda"
)
CUDA_SAMPLES_COMMIT = "c94ff366aed18c797b8a85dfaac7817b0228b420"
CUDA_SAMPLES = Source(
    "cuda-samples",
    "NVIDIA/cuda-samples",
    CUDA_SAMPLES_COMMIT,
    "cmake",
    "Samples",
    ("cuda-samples/Common",),
    leave_out=r"/4_CUDA_Libraries/",
)
CUDA_LIBRARY_SAMPLES = Source(
    "cuda-samples",
    "NVIDIA/cuda-samples",
    CUDA_SAMPLES_COMMIT,
    "cmake",
    "Samples/4_CUDA_Libraries",
    ("cuda-samples/Common",),
)
CUDA_HANDBOOK = Source(
    "cudahandbook",
    "ArchaeaSoftware/cudahandbook",
    "c56ebf85f3d226545daa1ffff4218fe8b8636f8e",
    "cmake",
    ".",
    ("cudahandbook/chLib",),
)
RODINIA = Source("rodinia", "yuhc/gpu-rodinia", "9c10d3ea16ddba2ba057cc3951a9efc4c2cc18a4", "rodinia", "cuda")

# label -> (source, programs drawn)
PROGRAM_SOURCES = {
    "hecbench": (HECBENCH, 16),
    "cuda-samples": (CUDA_SAMPLES, 12),
    "cuda-samples libraries": (CUDA_LIBRARY_SAMPLES, 4),
    "cudahandbook": (CUDA_HANDBOOK, 8),
}
BUILD_SOURCES = {
    "hecbench": (HECBENCH, 40),
    "cuda-samples cmake": (CUDA_SAMPLES, 6),
}

# In scope: the CUDA runtime and driver APIs, Thrust, CUB, libcu++, cooperative groups, cuBLAS
# (and cublasLt), cuRAND and NVTX annotations, with the C and C++ standard libraries. Out of
# scope by design: graphics interop (OpenGL, EGL, Vulkan, Direct3D), MPI and NCCL, and NVIDIA's
# other libraries (cuDNN, cuFFT, cuSPARSE, cuSOLVER, NPP, nvJPEG; and those the allowed list
# leaves out: NVRTC, nvJitLink, libNVVM, NVML, cuDLA, NvSci), matched in a program's sources and
# the headers they include, or in the libraries its build links. Host OpenMP is in scope.
OUT_OF_SCOPE = re.compile(
    r"(?:^|/)(?:cudnn|cufft|cusparse|cusolver|npp|nvjpeg|nccl|mpi|nvrtc|nvJitLink|nvvm|nvml|cudla|nvsci|"
    r"cudaEGL|cudaGL|cuda_gl|cuda_egl|cuda_d3d|d3d|dxgi|windows|tlhelp32|tchar|conio|helper_gl|FreeImage)[^/]*\.h(?:pp)?$|"
    r"(?:^|/)(?:GL|GLES\d*|EGL|GLFW|vulkan)/"
)
LIBRARIES = {
    "m",
    "pthread",
    "rt",
    "dl",
    "stdc++",
    "cuda",
    "cuda_driver",
    "cudart",
    "cudart_static",
    "cudadevrt",
    "cublas",
    "cublasLt",
    "curand",
    "nvToolsExt",
    "nvtx3",
    "OpenMP::OpenMP_CXX",  # host threads: a compiler flag, not a CUDA library
    "gomp",
}

# Programs measured before from these sources: the cuda-samples that the project's earlier notes
# and its broad sample name (HeCBench folders, Rodinia's suite as a whole and The CUDA Handbook
# are named nowhere before; the Rodinia list is a fixed list, not a draw).
TRIED = {
    "cuda-samples": set(
        "asyncAPI clock matrixMul mergeSort simpleAWBarrier simpleCooperativeGroups simpleHyperQ simpleP2P "
        "simpleTemplates systemWideAtomics template vectorAdd convolutionSeparable convolutionTexture dct8x8 "
        "eigenvalues histogram inlinePTX interval radixSortThrust reduction reductionMultiBlockCG scalarProd "
        "scan segmentationTreeThrust shfl_scan sortingNetworks threadFenceReduction bf16TensorCoreGemm "
        "cdpAdvancedQuicksort cdpBezierTessellation cdpQuadtree cdpSimplePrint cdpSimpleQuicksort "
        "cudaTensorCoreGemm dmmaTensorCoreGemm globalToShmemAsyncCopy graphMemoryFootprint graphMemoryNodes "
        "immaTensorCoreGemm newdelete simpleCudaGraphs tf32TensorCoreGemm warpAggregatedAtomicsCG "
        "conjugateGradientMultiBlockCG binomialOptions dxtc fastWalshTransform p2pBandwidthLatencyTest "
        "stereoDisparity alignedTypes cudaGraphsPerfScaling transpose".split()
    ),
}

# Each drawn program's own check, read in its source (the fields of real_programs.py): ``passes``,
# the text it prints when its check succeeds; EXIT when it says so by its exit status alone, with
# ``fails``, the text it prints (still exiting 0) when its check fails; None when it checks
# nothing: it is passed over and the next in the shuffled order is drawn.
PASS_LINE = {"passes": "^PASS"}  # HeCBench's usual ``printf("%s\\n", ok ? "PASS" : "FAIL")`` at the end
CHECKS: dict[str, dict | None] = {
    # HeCBench (with its Makefiles' defaults: DEBUG=no, so code under #ifdef DEBUG is left out)
    "hecbench/src/binomial-cuda": {"passes": "^Test passed"},
    "hecbench/src/dct8x8-cuda": {**EXIT, "fails": "^FAIL"},  # PASS or FAIL once per direction
    "hecbench/src/eikonal-cuda": None,  # writes the solution to a file, checks nothing
    "hecbench/src/bgmv-cuda": {**EXIT, "fails": "FAIL"},  # PASS or FAIL on each configuration's line
    "hecbench/src/logprob-cuda": PASS_LINE,
    "hecbench/src/jaccard-cuda": None,  # its check is under #ifdef DEBUG
    "hecbench/src/reaction-cuda": None,  # prints the lowest and highest values
    "hecbench/src/mixbench-cuda": PASS_LINE,
    "hecbench/src/jenkins-hash-cuda": PASS_LINE,
    "hecbench/src/pointwise-cuda": PASS_LINE,
    "hecbench/src/softmax-online-cuda": {"passes": "All results match"},  # exits 1 on a mismatch before it
    "hecbench/src/cross-cuda": PASS_LINE,
    "hecbench/src/wordcount-cuda": PASS_LINE,  # in ../wordcount-sycl/main.cpp, which its Makefile builds
    "hecbench/src/entropy-cuda": PASS_LINE,
    "hecbench/src/bitpacking-cuda": PASS_LINE,
    "hecbench/src/p2p-cuda": {**PASS_LINE, "devices": 2},  # copies between two GPUs (waives on one)
    "hecbench/src/bilateral-cuda": PASS_LINE,
    "hecbench/src/bwt-cuda": PASS_LINE,
    "hecbench/src/chi2-cuda": PASS_LINE,
    "hecbench/src/chemv-cuda": PASS_LINE,
    "hecbench/src/pool-cuda": PASS_LINE,
    "hecbench/src/silu-cuda": PASS_LINE,
    "hecbench/src/keccaktreehash-cuda": PASS_LINE,
    "hecbench/src/wyllie-cuda": PASS_LINE,
    "hecbench/src/scatter-cuda": PASS_LINE,
    "hecbench/src/gd-cuda": PASS_LINE,
    "hecbench/src/radixsort2-cuda": PASS_LINE,
    "hecbench/src/moe-align-cuda": PASS_LINE,
    "hecbench/src/secp256k1-cuda": PASS_LINE,
    "hecbench/src/stddev-cuda": PASS_LINE,
    "hecbench/src/compute-score-cuda": {"passes": "Verification: PASS"},
    "hecbench/src/xsbench-cuda": {"passes": r"Verification checksum: \d+ \(Valid\)"},  # host against device
    "hecbench/src/accuracy-cuda": {**EXIT, "fails": "^FAIL"},  # two checks, a line each
    "hecbench/src/vol2col-cuda": {**EXIT, "fails": "^FAIL"},
    "hecbench/src/qem-cuda": {**EXIT, "fails": "^FAIL"},
    "hecbench/src/quant3MatMul-cuda": {**EXIT, "fails": "^FAIL"},
    "hecbench/src/geam-cuda": {**EXIT, "fails": "^FAIL"},
    "hecbench/src/prefetch-cuda": {**EXIT, "fails": "^FAIL"},
    "hecbench/src/blas-gemm-cuda": {**EXIT, "fails": "^FAIL"},  # half, single and double, a line each
    "hecbench/src/rle-cuda": {**EXIT, "fails": "FAIL"},  # keys, lengths and count, a line each
    "hecbench/src/matern-cuda": {**EXIT, "fails": "check = FAIL"},  # a line per length scale
    "hecbench/src/grep-cuda": None,  # prints times
    "hecbench/src/rayleighBenardConvection-cuda": None,  # prints the field
    "hecbench/src/hypterm-cuda": None,  # prints RMS errors against its reference, decides nothing
    "hecbench/src/fpdc-cuda": None,  # writes the compressed file, checks nothing
    "hecbench/src/wsm5-cuda": None,  # prints a checksum
    "hecbench/src/blas-gemmEx2-cuda": None,  # checks cuBLAS's status only
    "hecbench/src/lr-cuda": None,  # prints the fit
    "hecbench/src/f16sp-cuda": None,  # prints error rates
    "hecbench/src/black-scholes-cuda": None,  # prints the CPU's and the GPU's sums side by side
    "hecbench/src/ddbp-cuda": None,  # prints a checksum
    "hecbench/src/particles-cuda": None,  # prints positions
    "hecbench/src/wlcpow-cuda": None,  # prints a checksum
    "hecbench/src/s3d-cuda": None,  # prints times
    "hecbench/src/reverse2D-cuda": None,  # prints times
    "hecbench/src/quicksort-cuda": None,  # prints times against the CPU's sorts
    "hecbench/src/perlin-cuda": None,  # prints a checksum
    "hecbench/src/bh-cuda": None,  # prints times
    "hecbench/src/dpid-cuda": None,  # prints checksums
    # a MATCHES or MISMATCHES line for each n; the first n's count is 0, which a run that
    # computed nothing matches too, so every line counts
    "hecbench/src/langford-cuda": {**EXIT, "fails": "MISMATCHES"},
    "hecbench/src/mdh-cuda": PASS_LINE,
    "hecbench/src/wedford-cuda": PASS_LINE,
    "hecbench/src/p4-cuda": PASS_LINE,
    "hecbench/src/f8cast-cuda": PASS_LINE,
    "hecbench/src/mt-cuda": PASS_LINE,
    "hecbench/src/bitonic-sort-cuda": PASS_LINE,
    "hecbench/src/unfold-cuda": PASS_LINE,
    "hecbench/src/blas-dot-cuda": PASS_LINE,
    "hecbench/src/tensorT-cuda": PASS_LINE,
    "hecbench/src/reverse-cuda": PASS_LINE,
    "hecbench/src/romberg-cuda": PASS_LINE,
    "hecbench/src/hwt1d-cuda": PASS_LINE,
    "hecbench/src/flip-cuda": PASS_LINE,
    "hecbench/src/fft-cuda": {**EXIT, "fails": "FAIL"},  # "FFT PASS" then "iFFT PASS"
    "hecbench/src/idivide-cuda": EXIT,  # exits 1 on the first wrong quotient
    "hecbench/src/su3-cuda": EXIT,  # asserts every element against the host's product
    "hecbench/src/feynman-kac-cuda": None,  # prints the RMS error, decides nothing
    "hecbench/src/threadcpy-cuda": {**EXIT, "fails": "FAIL"},  # "TYPE: PASS" for each type and width
    "hecbench/src/threadfence-cuda": PASS_LINE,
    "hecbench/src/testSNAP-cuda": None,  # prints the RMS deviation from its reference data, decides nothing
    # cuda-samples
    "cuda-samples/Samples/0_Introduction/simpleAtomicIntrinsics/simpleAtomicIntrinsics": EXIT,
    # exits 0 without a check when the device cannot map host memory, saying so
    "cuda-samples/Samples/0_Introduction/simpleZeroCopy/simpleZeroCopy": {
        **EXIT,
        "fails": "does not support mapping",
    },
    "cuda-samples/Samples/0_Introduction/fp16ScalarProduct/fp16ScalarProduct": {
        "passes": "fp16ScalarProduct PASSED"
    },
    # prints what the graph's kernels did; checks API errors only
    "cuda-samples/Samples/3_CUDA_Features/graphConditionalNodes/graphConditionalNodes": None,
    "cuda-samples/Samples/5_Domain_Specific/quasirandomGenerator/quasirandomGenerator": EXIT,
    "cuda-samples/Samples/2_Concepts_and_Techniques/streamOrderedAllocation/streamOrderedAllocation": EXIT,
    "cuda-samples/Samples/5_Domain_Specific/FDTD3d/FDTD3d": EXIT,
    "cuda-samples/Samples/3_CUDA_Features/jacobiCudaGraphs/jacobiCudaGraphs": {
        "passes": "jacobiCudaGraphs PASSED"
    },
    "cuda-samples/Samples/3_CUDA_Features/ptxjit/ptxjit": EXIT,
    "cuda-samples/Samples/5_Domain_Specific/MonteCarloMultiGPU/MonteCarloMultiGPU": {
        "passes": "^Test passed"
    },
    "cuda-samples/Samples/0_Introduction/simpleIPC/simpleIPC": EXIT,
    "cuda-samples/Samples/0_Introduction/simpleTexture/simpleTexture": EXIT,
    "cuda-samples/Samples/0_Introduction/simpleAssert/simpleAssert": EXIT,  # a device assert fails on purpose
    "cuda-samples/Samples/3_CUDA_Features/StreamPriorities/StreamPriorities": EXIT,
    "cuda-samples/Samples/0_Introduction/simpleMultiGPU/simpleMultiGPU": EXIT,
    "cuda-samples/Samples/0_Introduction/cudaOpenMP/cudaOpenMP": EXIT,
    "cuda-samples/Samples/5_Domain_Specific/HSOpticalFlow/HSOpticalFlow": EXIT,
    "cuda-samples/Samples/0_Introduction/simpleCallback/simpleCallback": {"passes": "^Success"},
    "cuda-samples/Samples/5_Domain_Specific/BlackScholes/BlackScholes": {"passes": "^Test passed"},
    "cuda-samples/Samples/4_CUDA_Libraries/simpleCUBLAS_LU/simpleCUBLAS_LU": EXIT,
    "cuda-samples/Samples/4_CUDA_Libraries/batchCUBLAS/batchCUBLAS": {**EXIT, "fails": "gemm test FAIL"},
    "cuda-samples/Samples/4_CUDA_Libraries/MersenneTwisterGP11213/MersenneTwisterGP11213": EXIT,
    "cuda-samples/Samples/4_CUDA_Libraries/simpleCUBLASXT/simpleCUBLASXT": {
        "passes": "simpleCUBLASXT test passed"
    },
    # The CUDA Handbook: most examples are microbenchmarks that exit 1 on a CUDA error only
    "cudahandbook/texturing/tex1d_9bit": None,  # prints texture values
    "cudahandbook/texturing/surf2Dmemset": None,  # prints the surface
    "cudahandbook/concurrency/eventRecord": None,  # prints a time
    # compares the checksums of its two runs; exits 0 without a check where persisting L2 is missing
    "cudahandbook/microbench/l2Persistence": {**EXIT, "fails": "verification failed|skipping"},
    # the book's demonstration of a missing synchronization: its check is meant to fail
    "cudahandbook/concurrency/pageableMemcpyHtoD16Broken": None,
    "cudahandbook/SMs/divergence": None,  # prints throughputs
    "cudahandbook/streaming/stream4Mapped": None,  # prints times
    "cudahandbook/microbench/reportClocks": None,  # writes clocks to files
    "cudahandbook/concurrency/concurrencyKernelMapped": None,  # prints times
    "cudahandbook/concurrency/nullKernelAsync": None,  # prints a time
    "cudahandbook/microbench/mallocSpeed": None,  # prints times
    "cudahandbook/streaming/stream2Async": None,  # prints times
    "cudahandbook/corr/normalizedCrossCorrelation": EXIT,  # exits 1 when two kernels' results differ
    "cudahandbook/texturing/tex1dfetch_host": None,  # prints texture values
    "cudahandbook/texturing/tex2d_addressing_device": None,  # prints texture values
    "cudahandbook/SMs/float_to_float16": {"passes": "Done: success"},  # every float32 against __float2half
    "cudahandbook/texturing/surf2Dmemset_shmoo": None,  # prints times
    "cudahandbook/concurrency/breakevenHtoDMemcpy": None,  # prints times
    "cudahandbook/texturing/tex2d_mipmap": EXIT,  # exits 1 when a sampled value misses its level of detail
    "cudahandbook/scan/radixSort/radixSort": EXIT,  # exits 1 when a sort differs from the CPU's
    "cudahandbook/streaming/stream1Device": None,  # prints times
    "cudahandbook/texturing/tex2d_addressing": None,  # prints texture values
    "cudahandbook/gemm/sgemm1Naive": None,  # prints the largest error, decides nothing
    "cudahandbook/corr/corrBankTC": None,  # prints mismatch counts, decides nothing
    "cudahandbook/scan/int/testScan": EXIT,  # exits 1 when a scan differs from the CPU's
    "cudahandbook/memory/globalCopy2": {**EXIT, "fails": "Incorrect copy"},
    # marks each implementation's line "ok" or "FAIL" against the CPU's scan, then exits 0
    "cudahandbook/scan/int/timeScanVsCUB": {**EXIT, "fails": "FAIL$"},
    "cudahandbook/texturing/texcubemap": EXIT,  # exits 1 when a direction selects the wrong face
    # counts differences from its emulation, never reports them
    "cudahandbook/texturing/tex1d_addressing": None,
    # prints a line for each wrong result and goes on to the next test, exiting 0
    "cudahandbook/scan/streamCompact/testStreamCompact_odd": {**EXIT, "fails": "failed|Missed|incorrect"},
    "cudahandbook/microbench/scopedAtomicSpeed": EXIT,  # exits 1 when a counter dropped an update
    "cudahandbook/streaming/stream5MappedXfer": None,  # prints times
    "cudahandbook/scan/int/timeScan": None,  # prints times
    "cudahandbook/microbench/devrtMallocSpeed": None,  # prints times
    "cudahandbook/texturing/tex1dfetch_int2float": None,  # prints texture values
    # --- the second fresh sample (seed 41207, fresh_sample2.json) ---
    "hecbench/src/sobol-cuda": PASS_LINE,  # PASS when the L1 error against the CPU's is small
    "hecbench/src/metropolis-cuda": None,  # prints exchange averages, checks nothing
    "hecbench/src/f16max-cuda": {**EXIT, "fails": "FAIL"},  # "fp16_hmax2 PASS", then "fp16_hmax PASS"
    "hecbench/src/groupnorm-cuda": {**EXIT, "fails": "^FAIL"},  # PASS or FAIL for each of 5 checks
    "hecbench/src/bincount-cuda": {**EXIT, "fails": "^FAIL"},  # global, then shared atomics
    "hecbench/src/dp-cuda": {**EXIT, "fails": "^FAIL"},  # kernel, cuBLAS and cublasDotEx, a line each
    "hecbench/src/fdtd3d-cuda": PASS_LINE,
    "hecbench/src/tridiagonal-cuda": None,  # prints the mean error, decides nothing
    "hecbench/src/atomicAggregate-cuda": {**EXIT, "fails": "^FAIL"},  # a line for each array size
    "hecbench/src/tsp-cuda": PASS_LINE,  # PASS when the best tour is in its dataset's known range
    "hecbench/src/myocyte-cuda": None,  # writes the solution to a file, checks nothing
    "hecbench/src/maxFlops-cuda": None,  # prints times
    "hecbench/src/mxfp4-cuda": PASS_LINE,
    "hecbench/src/minisweep-cuda": {"passes": "verify: PASS"},  # on the line with the norm
    "hecbench/src/damage-cuda": PASS_LINE,
    "hecbench/src/resnet-kernels-cuda": None,  # prints checksums
    "cuda-samples/Samples/0_Introduction/vectorAddMMAP/vectorAddMMAP": {"passes": "^Result = PASS"},
    # prints the device's properties; checks API errors only
    "cuda-samples/Samples/1_Utilities/deviceQuery/deviceQuery": None,
    "cuda-samples/Samples/1_Utilities/deviceQueryDrv/deviceQueryDrv": None,
    "cuda-samples/Samples/0_Introduction/simpleMultiCopy/simpleMultiCopy": EXIT,
    # prints times
    "cuda-samples/Samples/3_CUDA_Features/cudaCompressibleMemory/cudaCompressibleMemory": None,
    # exits 0 either way; says so when the estimate is off by more than its tolerance
    "cuda-samples/Samples/2_Concepts_and_Techniques/MC_EstimatePiInlineP/MC_EstimatePiInlineP": {
        **EXIT,
        "fails": "does not match expected result",
    },
    "cuda-samples/Samples/5_Domain_Specific/dwtHaar1D/dwtHaar1D": {"passes": "^Test success"},
    "cuda-samples/Samples/0_Introduction/simpleSurfaceWrite/simpleSurfaceWrite": EXIT,
    "cuda-samples/Samples/3_CUDA_Features/binaryPartitionCG/binaryPartitionCG": None,  # prints its sums
    # Its verdict follows "Checking computed result for correctness: " on the same line.
    "cuda-samples/Samples/0_Introduction/matrixMulDrv/matrixMulDrv": {"passes": "correctness: Result = PASS"},
    "cuda-samples/Samples/0_Introduction/simpleStreams/simpleStreams": EXIT,
    "cuda-samples/Samples/2_Concepts_and_Techniques/threadMigration/threadMigration": EXIT,
    "cuda-samples/Samples/4_CUDA_Libraries/lineOfSight/lineOfSight": {"passes": "^Test passed"},
    "cuda-samples/Samples/4_CUDA_Libraries/simpleCUBLAS/simpleCUBLAS": {"passes": "simpleCUBLAS test passed"},
    "cuda-samples/Samples/4_CUDA_Libraries/matrixMulCUBLAS/matrixMulCUBLAS": {
        "passes": "with CPU results: PASS"
    },
    "cudahandbook/streaming/stream3Streams": None,  # prints times
    # each checks random copies against the source and exits 1 on a mismatch
    "cudahandbook/concurrency/pageableMemcpyHtoD": EXIT,
    "cudahandbook/concurrency/pageableMemcpyHtoD16Synchronous": EXIT,
    "cudahandbook/concurrency/pageableMemcpyHtoD16": EXIT,
    "cudahandbook/microbench/mallocAsyncSpeed": None,  # prints times
    "cudahandbook/concurrency/nullHtoDMemcpyAsync": None,  # prints a time
    # prints the relative error against the CPU and decides nothing (by default)
    "cudahandbook/nbody/nbody": None,
    "hecbench/src/gelu-cuda": {**EXIT, "fails": "^FAIL"},  # two kernels, a line each
    "hecbench/src/tissue-cuda": PASS_LINE,
    "hecbench/src/qkv-cuda": {"passes": "All results match"},  # exits 1 on a mismatch before it
    "hecbench/src/interleave-cuda": EXIT,  # asserts every element of both layouts agree
    "hecbench/src/scatterThrust-cuda": {**EXIT, "fails": "^FAIL"},  # a line for each of six types
    "cuda-samples/Samples/0_Introduction/simplePrintf/simplePrintf": None,  # prints from the device
    "cuda-samples/Samples/0_Introduction/simpleOccupancy/simpleOccupancy": {"passes": "^Test PASSED"},
    # prints times; its check is compiled out (VERIFY_GPU_CORRECTNESS 0)
    "cuda-samples/Samples/6_Performance/UnifiedMemoryPerf/UnifiedMemoryPerf": None,
    "cuda-samples/Samples/0_Introduction/simpleVoteIntrinsics/simpleVoteIntrinsics": EXIT,
    "cudahandbook/SMs/testFunnelShift": None,  # asks for its inputs on stdin and prints the result
    "cudahandbook/gemm/sgemm4RegBlock": None,  # prints the largest error, decides nothing
    "cudahandbook/concurrency/concurrencyMemcpyKernelMapped": None,  # prints times
    "cudahandbook/concurrency/breakevenDtoHMemcpy": None,  # prints times
    # exits 0 either way; says so when the price is off by more than its tolerance
    "cuda-samples/Samples/2_Concepts_and_Techniques/MC_SingleAsianOptionP/MC_SingleAsianOptionP": {
        **EXIT,
        "fails": "does not match expected result",
    },
    "cuda-samples/Samples/0_Introduction/simpleDrvRuntime/simpleDrvRuntime": {"passes": "^Result = PASS"},
    "cudahandbook/scan/streamCompact/timeStreamCompact_odd": None,  # prints times
    "cudahandbook/texturing/tex1dfetch_big": None,  # without the size argument it prints its usage
    "cudahandbook/SMs/solveQuadratic": None,  # launches on no data, prints nothing
    "cudahandbook/memory/globalCopy": {**EXIT, "fails": "Incorrect copy"},  # goes on after a bad copy
    "cudahandbook/memory/pinnedBandwidth": None,  # prints bandwidths
    "cudahandbook/scan/warp/testScanWarp": {"passes": "^All policies PASS"},  # exits 1 otherwise
    # checks copies from one device to another and exits 1 on a mismatch; needs two devices
    "cudahandbook/memory/peer2peerMemcpy": {**EXIT, "devices": 2},
    "cudahandbook/concurrency/nullDtoHMemcpyAsync": None,  # prints a time
    "cudahandbook/gemm/sgemm3Tiled": None,  # prints the largest error, decides nothing
    # "ok" or "FAIL" at the end of each implementation's line against the CPU's sum; exits 0 either way
    "cudahandbook/reduction/timeReductionVsCUB": {**EXIT, "fails": "FAIL$"},
}

# Arguments smaller than the run target's, where a run with the run target's went past 90 s under
# the simulator on two cores (its check comes after its timing loop): name -> (args, reason).
SLOW = "the run target's ran past 90 s here"
LOADED = (
    "at load 17 on the two shared cores, the four run first with the run target's had not reached their "
    "checks after 145 s"
)
# Where a run on the sample's arguments still went past its 240 s limit: only what the program's
# command line sets is made smaller; what it checks stays the same.
OVER_LIMIT = "with the arguments before, it ran past the 240 s limit on the two shared cores"
SMALLER_ARGS: dict[str, tuple[list[str], str]] = {
    "hecbench/src/bilateral-cuda": ("256 128 0.5 0.5 2".split(), f"a 256x128 image, 2 repeats; {SLOW}"),
    "hecbench/src/bwt-cuda": (["100000"], f"a sequence of 100,000; {SLOW}"),
    "hecbench/src/chi2-cuda": ("4000 4000 2000 2000 256 2".split(), f"4,000 SNPs, 2 repeats; {SLOW}"),
    "hecbench/src/dct8x8-cuda": ("512 512 2".split(), f"a 512x512 image, 2 repeats; {SLOW}"),
    "hecbench/src/entropy-cuda": ("1024 1024 2".split(), f"a 1024x1024 image, 2 repeats; {SLOW}"),
    "hecbench/src/jenkins-hash-cuda": ("256 262144 2".split(), f"262,144 strings, 2 repeats; {SLOW}"),
    "hecbench/src/logprob-cuda": ("128 8 50257 2".split(), f"sequences of 128, 2 repeats; {SLOW}"),
    "hecbench/src/mixbench-cuda": ("256 2".split(), f"256 compute iterations, 2 repeats; {SLOW}"),
    "hecbench/src/p2p-cuda": (["2"], "2 repeats; the run target's passed at 87 s of the 90 here"),
    "hecbench/src/pointwise-cuda": ("20 2 512 64 1".split(), f"20 steps of 2 layers, 1 repeat; {SLOW}"),
    # the builds sample
    "hecbench/src/bitonic-sort-cuda": (["20", "2"], f"2^20 keys, not 2^25; {SLOW}"),
    "hecbench/src/compute-score-cuda": (["-p=2"], f"2 repeats; {SLOW}"),
    "hecbench/src/fft-cuda": (["3", "2"], f"2 passes; {SLOW}"),
    "hecbench/src/flip-cuda": ("3 128 2".split(), f"a 128^3 tensor, 2 repeats; {SLOW}"),
    "hecbench/src/hwt1d-cuda": (["262144", "2"], f"a signal of 262,144, 2 repeats; {SLOW}"),
    "hecbench/src/idivide-cuda": (["1"], f"1 repeat; {SLOW}"),
    "hecbench/src/matern-cuda": (["20", "1"], f"20^3 targets, 1 repeat; {SLOW}"),
    "hecbench/src/threadfence-cuda": (["2", "1000000"], f"2 repeats on a million elements; {SLOW}"),
    "hecbench/src/mdh-cuda": (["-itmax", "2"], f"2 loops; {SLOW}"),
    "hecbench/src/p4-cuda": (["2"], f"2 repeats; {SLOW}"),
    "hecbench/src/pool-cuda": ("8 48 224 224 54 54 2".split(), f"a batch of 8, 2 repeats; {SLOW}"),
    "hecbench/src/qem-cuda": (["2"], f"2 repeats; {SLOW}"),
    "hecbench/src/quant3MatMul-cuda": (["2"], f"2 repeats; {SLOW}"),
    "hecbench/src/radixsort2-cuda": (["-float", "-keysonly", "-n=1048576"], f"2^20 keys, not 2^29; {SLOW}"),
    "hecbench/src/reverse-cuda": (["2"], f"2 iterations; {SLOW}"),
    "hecbench/src/romberg-cuda": ("128 64 2".split(), f"2 repeats; {SLOW}"),
    "hecbench/src/stddev-cuda": ("4096 1024 2".split(), f"4096x1024, 2 repeats; {SLOW}"),
    "hecbench/src/su3-cuda": (
        "-i 2 -l 8 -t 128 -v 3 -w 1".split(),
        f"2 iterations on an 8^4 lattice; {SLOW}",
    ),
    "hecbench/src/tensorT-cuda": (["2"], f"2 repeats; {SLOW}"),
    "hecbench/src/threadcpy-cuda": (["2"], f"2 repeats; {SLOW}"),
    "hecbench/src/unfold-cuda": (["1000000", "2"], f"a million elements, 2 repeats; {SLOW}"),
    "hecbench/src/vol2col-cuda": (["2"], f"2 repeats; {SLOW}"),
    "hecbench/src/wedford-cuda": ("64 64 1024 2".split(), f"64x64x1024, 2 repeats; {SLOW}"),
    "hecbench/src/wyllie-cuda": ("500000 1 2".split(), f"a list of 500,000, 2 repeats; {SLOW}"),
    "cuda-samples/Samples/5_Domain_Specific/FDTD3d/FDTD3d": (
        "--dimx=96 --dimy=96 --dimz=96 --timesteps=1".split(),
        f"the smallest volume and time steps it accepts, not 376^3 and 5; {SLOW}",
    ),
    # the second fresh sample: its check follows the run target's timing loop
    "hecbench/src/atomicAggregate-cuda": (
        ["1"],
        f"1 repeat (each location's count is checked against the repeats' increments); {OVER_LIMIT}",
    ),
    "hecbench/src/bincount-cuda": ("1000000 2".split(), f"a million elements, 2 repeats; {LOADED}"),
    "hecbench/src/damage-cuda": ("1000000 2".split(), f"a million points, 2 repeats; {LOADED}"),
    "hecbench/src/dp-cuda": ("1048576 2".split(), f"2^20 elements, 2 repeats; {LOADED}"),
    "hecbench/src/f16max-cuda": (
        ["1"],
        f"1 repeat (its 2^28 half2 elements are fixed in its source); {OVER_LIMIT}",
    ),
    "hecbench/src/fdtd3d-cuda": (
        "--dimx=96 --dimy=96 --dimz=96 --timesteps=1".split(),
        f"the smallest volume and time steps it accepts; {LOADED}",
    ),
    "hecbench/src/gelu-cuda": ("8 1024 512 2".split(), f"sequences of 1024, 2 repeats; {LOADED}"),
    "hecbench/src/groupnorm-cuda": ("32 32 16 16 32 2".split(), f"2 repeats; {LOADED}"),
    "hecbench/src/interleave-cuda": (["2"], f"2 repeats; {LOADED}"),
    "hecbench/src/minisweep-cuda": (["--niterations", "1"], f"1 iteration; {LOADED}"),
    "hecbench/src/mxfp4-cuda": ("1048576 2".split(), f"2^20 elements, 2 repeats; {LOADED}"),
    "hecbench/src/scatterThrust-cuda": ("1000000 2".split(), f"a million elements, 2 repeats; {LOADED}"),
    "hecbench/src/sobol-cuda": (
        "100000 100 2".split(),
        f"100,000 vectors of 100 dimensions, 2 repeats; {LOADED}",
    ),
    "hecbench/src/tissue-cuda": ("32 2".split(), f"2 repeats; {LOADED}"),
    "hecbench/src/tsp-cuda": ("d493.tsp 24 2".split(), f"2 repeats of its 24 restarts; {LOADED}"),
    "cudahandbook/memory/globalCopy": (
        ["--size", "2"],
        "2M operands, not its default 16M (the least whole M above its largest grid stride, 16 x 512 x 150 = "
        f"1,228,800, below which its loop bound N - stride wraps around); {OVER_LIMIT}",
    ),
    "cudahandbook/reduction/timeReductionVsCUB": (
        ["1048576"],
        f"2^20 ints, not its default 2^26 (its 100 timed runs of each are fixed in its source); {OVER_LIMIT}",
    ),
    "cudahandbook/scan/int/timeScanVsCUB": (
        ["262144"],
        "2^18 ints, not its default 2^26 (its 50 timed runs of each are fixed in its source; 2^20 was over "
        f"the limit too); {OVER_LIMIT}",
    ),
}

# Rodinia 3.1's CUDA programs, all of them: name -> (folder, the executable its Makefile builds,
# the arguments of the folder's run script, its first line where it has several). Their data
# files are not in the checkout (the earlier measurement took them from JuliaParallel/rodinia).
R = "rodinia/cuda"
RODINIA_PROGRAMS: dict[str, tuple[str, str, list[str]]] = {
    "rodinia/b+tree": (
        f"{R}/b+tree",
        "b+tree.out",
        "file ../../data/b+tree/mil.txt command ../../data/b+tree/command.txt".split(),
    ),
    "rodinia/backprop": (f"{R}/backprop", "backprop", ["2097152"]),
    "rodinia/bfs": (f"{R}/bfs", "bfs.out", ["../../data/bfs/graph65536.txt"]),
    "rodinia/cfd": (f"{R}/cfd", "euler3d", ["../../data/cfd/fvcorr.domn.097K"]),
    "rodinia/dwt2d": (f"{R}/dwt2d", "dwt2d", "192.bmp -d 192x192 -f -5 -l 3".split()),
    "rodinia/gaussian": (f"{R}/gaussian", "gaussian", ["-f", "../../data/gaussian/matrix4.txt"]),
    "rodinia/heartwall": (f"{R}/heartwall", "heartwall", ["../../data/heartwall/test.avi", "20"]),
    "rodinia/hotspot": (
        f"{R}/hotspot",
        "hotspot",
        "512 2 2 ../../data/hotspot/temp_512 ../../data/hotspot/power_512 output.out".split(),
    ),
    "rodinia/hotspot3D": (
        f"{R}/hotspot3D",
        "3D",
        "512 8 100 ../../data/hotspot3D/power_512x8 ../../data/hotspot3D/temp_512x8 output.out".split(),
    ),
    "rodinia/huffman": (f"{R}/huffman", "pavle", ["../../data/huffman/test1024_H2.206587175259.in"]),
    "rodinia/hybridsort": (f"{R}/hybridsort", "hybridsort", ["r"]),
    "rodinia/kmeans": (f"{R}/kmeans", "kmeans", ["-o", "-i", "../../data/kmeans/kdd_cup"]),
    "rodinia/lavaMD": (f"{R}/lavaMD", "lavaMD", ["-boxes1d", "10"]),
    "rodinia/leukocyte": (f"{R}/leukocyte", "CUDA/leukocyte", ["../../data/leukocyte/testfile.avi", "5"]),
    "rodinia/lud": (f"{R}/lud", "cuda/lud_cuda", ["-s", "256", "-v"]),
    "rodinia/mummergpu": (
        f"{R}/mummergpu",
        "bin/mummergpu",
        ["../../data/mummergpu/NC_003997.fna", "../../data/mummergpu/NC_003997_q100bp.fna"],
    ),
    "rodinia/myocyte": (f"{R}/myocyte", "myocyte.out", ["100", "1", "0"]),
    "rodinia/nn": (f"{R}/nn", "nn", "filelist_4 -r 5 -lat 30 -lng 90".split()),
    "rodinia/nw": (f"{R}/nw", "needle", ["2048", "10"]),
    "rodinia/particlefilter": (
        f"{R}/particlefilter",
        "particlefilter_naive",
        "-x 128 -y 128 -z 10 -np 1000".split(),
    ),
    "rodinia/pathfinder": (f"{R}/pathfinder", "pathfinder", ["100000", "100", "20"]),
    "rodinia/srad_v1": (f"{R}/srad/srad_v1", "srad", ["100", "0.5", "502", "458"]),
    "rodinia/srad_v2": (f"{R}/srad/srad_v2", "srad", "2048 2048 0 127 0 127 0.5 2".split()),
    "rodinia/streamcluster": (
        f"{R}/streamcluster",
        "sc_gpu",
        "10 20 256 65536 65536 1000 none output.txt 1".split(),
    ),
}


# How the about text counts the programs left out before a draw, by the first word of the reason.
LEFT_OUT = {
    "includes": "with an out-of-scope header",
    "links": "linking an out-of-scope library",
    "reads": "reading a data file the checkout lacks",
    "Makefile:": "whose Makefile make cannot read or whose run target runs no program",
}


def find(root: Path, source: Source) -> tuple[list[Candidate], dict[str, str]]:
    """A source's candidates (sorted by name) and those left out, each with why."""
    left_out: dict[str, str] = {}
    if source.kind == "make":
        found, refused = make_programs(root / source.folder, source.where, HECBENCH_MAKE)
        left_out = {f"{source.folder}/{name}": why for name, why in refused.items()}
        for c in found:  # make_programs names them under the source's folder
            c.name, c.cwd = f"{source.folder}/{c.name}", f"{source.folder}/{c.cwd}"
            c.sources = [f"{source.folder}/{s}" for s in c.sources]
            c.include = [f"{source.folder}/{i}" for i in c.include]
            c.build["dir"] = f"{source.folder}/{c.build['dir']}"
            c.build["vars"] = dict(HECBENCH_BUILD_VARS)
    else:
        found = cmake_programs(root, f"{source.folder}/{source.where}".removesuffix("/."), source.include)
    keep = []
    for c in found:
        if source.leave_out and re.search(source.leave_out, c.name):
            continue
        why = needs(root, c, OUT_OF_SCOPE, LIBRARIES)
        if why:
            left_out[c.name] = why
        elif {c.name.rsplit("/", 2)[-2], c.build.get("program")} & TRIED.get(source.folder, set()):
            left_out[c.name] = "tried before"  # by its folder's name or its program's
        else:
            keep.append(c)
    return sorted(keep, key=lambda c: c.name), left_out


def entry(c: Candidate, check: dict, with_build: bool) -> dict:
    """A drawn program's manifest entry (``with_build``: also how its own build files build it)."""
    e: dict = {"name": c.name, "sources": c.sources, "cwd": c.cwd}
    if c.include:
        e["include"] = c.include
    if c.defines:
        e["defines"] = c.defines
    args = c.args
    if c.name in SMALLER_ARGS:
        args, reason = SMALLER_ARGS[c.name]
        given = " ".join(c.args) or "none"
        e["note"] = f"arguments of its run target or its own defaults: {given}; smaller here: {reason}"
    if args:
        e["args"] = list(args)
    e.update(check)
    if with_build:
        e["build"] = c.build
    return e


def draw_sources(
    root: Path, seed: int, sources: dict, avoid: set[str], with_build: bool
) -> tuple[list[dict], list[str], list[str]]:
    """The entries drawn from each of ``sources`` (none named in ``avoid``), one line of ``about``
    per source, and the drawn programs not yet in ``CHECKS``."""
    rng = random.Random(seed)
    programs, about, unreviewed = [], [], []
    short = 0  # what the sources before this one could not fill, for lack of candidates
    for label, (source, count) in sources.items():
        count += short
        pool, left_out = find(root, source)
        pool = [c for c in pool if c.name not in avoid]
        rng.shuffle(pool)
        # Data kept with DVC (HeCBench's data folders) is not in a plain checkout: such a program is
        # passed over in the shuffled order, which leaves the order of the others as it was.
        unfetched = [c for c in pool if unfetched_data(root, c)]
        pool = [c for c in pool if c not in unfetched]
        picked, skipped, waiting = pick_reviewed(
            pool, count, CHECKS, lambda c: c.name, lambda c: program_text(root, c)
        )
        unreviewed += waiting
        short = count - len(picked) - len(waiting)
        programs += sorted((entry(c, check, with_build) for c, check in picked), key=lambda e: e["name"])
        reasons: dict[str, int] = {}
        for why in left_out.values():
            kind = LEFT_OUT.get(why.split(" ", 1)[0], why)
            reasons[kind] = reasons.get(kind, 0) + 1
        about.append(
            f"{label}: github.com/{source.repo} at {source.commit[:12]} ({len(picked)} drawn from "
            f"{len(pool) + len(unfetched)} candidates; {skipped} passed over as not self-checking, "
            f"{len(unfetched)} as needing data kept with DVC; left out before the "
            f"draw: {'; '.join(f'{n} {k}' for k, n in sorted(reasons.items())) or 'none'})"
        )
    return programs, about, unreviewed


def draw_programs(
    root: Path, seed: int, avoid: frozenset[str] = frozenset(), excluded: str = ""
) -> tuple[dict, list[str]]:
    """The ``programs`` sample's manifest (none of ``avoid``, the programs of the manifests named in
    ``excluded``) and the drawn programs not yet in ``CHECKS``."""
    programs, about, unreviewed = draw_sources(root, seed, PROGRAM_SOURCES, set(avoid), with_build=False)
    leaves_out = f"; none of the {len(avoid)} programs of {excluded}" if excluded else ""
    manifest = {
        "about": f"A random draw (seed {seed}) by benchmarks/draw_fresh.py --sample programs, libraries "
        f"allowed (see OUT_OF_SCOPE and LIBRARIES there){leaves_out}; each program with the sources, "
        "flags and arguments its own build files give; --root holds the checkouts: " + "; ".join(about),
        "programs": programs,
    }
    return manifest, unreviewed


def excluded_programs(manifests: list[Path]) -> tuple[frozenset[str], str]:
    """The names of the programs in ``manifests`` (tried before) and the manifests' file names."""
    names: set[str] = set()
    for path in manifests:
        try:
            programs = json.loads(path.read_text())["programs"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"--exclude {path}: not a manifest with a 'programs' list ({e})") from e
        names.update(p["name"] for p in programs)
    return frozenset(names), ", ".join(sorted(p.name for p in manifests))


def draw_builds(root: Path, seed: int, avoid: set[str]) -> tuple[dict, list[str]]:
    """The ``builds`` sample's manifest (none of ``avoid``) and the drawn programs not yet in ``CHECKS``."""
    programs, about, unreviewed = draw_sources(root, seed, BUILD_SOURCES, avoid, with_build=True)
    for c in listed_make_programs(root, RODINIA_PROGRAMS, RODINIA_BUILD_VARS):
        programs.append(entry(c, {**EXIT}, with_build=True))
    about.append(
        f"rodinia: github.com/{RODINIA.repo} at {RODINIA.commit[:12]} (all {len(RODINIA_PROGRAMS)} CUDA "
        "programs, built by their own Makefiles with CUDA_DIR; judged here by exit status 0 only, their "
        "output is verified against the suite's OpenMP versions by hand; their data files are not in "
        "the checkout: an earlier measurement took them from JuliaParallel/rodinia)"
    )
    manifest = {
        "about": f"A random draw (seed {seed}) by benchmarks/draw_fresh.py --sample builds, for "
        "benchmarks/build_programs.py: HeCBench folders built with `make CC=NVCC ARCH=sm_80`, "
        "cuda-samples with their own CMakeLists.txt, none of the programs sample's; --root holds the "
        "checkouts: " + "; ".join(about),
        "programs": programs,
    }
    return manifest, unreviewed


def main(argv: list[str] | None = None) -> int:
    """Write the drawn manifest."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, required=True, help="the folder holding one checkout per source")
    p.add_argument("--seed", type=int, default=3917)
    p.add_argument("--sample", choices=("programs", "builds"), default="programs")
    p.add_argument(
        "--exclude",
        type=Path,
        nargs="+",
        default=[],
        metavar="MANIFEST",
        help="manifests whose programs count as tried before and are not drawn",
    )
    p.add_argument("--out", type=Path, help="default: manifests/fresh_sample.json or build_sample.json")
    a = p.parse_args(argv)
    root = a.root.resolve()
    try:
        avoid, excluded = excluded_programs(a.exclude)
    except ValueError as e:
        p.error(str(e))
    needed = [*PROGRAM_SOURCES.values()] + ([(RODINIA, 0)] if a.sample == "builds" else [])
    for source, _ in needed:
        if not (root / source.folder).is_dir():
            p.error(
                f"{root / source.folder} is missing: check out github.com/{source.repo} there "
                f"at {source.commit}"
            )
    programs_out = MANIFESTS / "fresh_sample.json"
    if a.sample == "programs":
        manifest, unreviewed = draw_programs(root, a.seed, avoid, excluded)
        out = a.out or programs_out
    else:
        # The programs sample is drawn again (not read back), so that the two never share a program.
        drawn, unreviewed = draw_programs(root, a.seed, avoid, excluded)
        manifest, more = draw_builds(root, a.seed, {e["name"] for e in drawn["programs"]} | avoid)
        unreviewed += more
        out = a.out or MANIFESTS / "build_sample.json"
    if unreviewed:
        print("read these drawn programs and enter their checks in CHECKS:", *unreviewed, sep="\n  ")
        return 2
    out.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(manifest['programs'])} programs -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
