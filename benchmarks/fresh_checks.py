"""The reviewed checks of the programs ``draw_fresh.py`` draws, and the smaller arguments of those
whose run target is beyond a CPU."""

from __future__ import annotations

from draw_sample import EXIT

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
    # --- the third fresh sample (seed 52813, fresh_sample3.json) ---
    "hecbench/src/clenergy-cuda": None,  # prints energies and times
    "hecbench/src/goulash-cuda": PASS_LINE,
    "hecbench/src/dispatch-cuda": None,  # prints launch times
    "hecbench/src/mr-cuda": {**EXIT, "fails": "^FAIL"},  # PASS or FAIL for primes, then for odd numbers
    # PASS or FAIL for each method of each pixel type against the host's histogram; exits 0 either way
    "hecbench/src/histogram-cuda": {**EXIT, "fails": "FAIL"},
    "hecbench/src/quantAQLM-cuda": None,  # prints a time (and values under a flag)
    "hecbench/src/clock-cuda": None,  # prints clocks
    "hecbench/src/aop-cuda": None,  # prints its price beside the binomial and European ones, decides nothing
    "hecbench/src/depixel-cuda": None,  # prints a checksum
    # prints "Error: NAME DEVICE HOST" for each result that differs from the host's, exits 0 either way
    "hecbench/src/extend2-cuda": {**EXIT, "fails": "^Error:"},
    "hecbench/src/blockAccess-cuda": PASS_LINE,
    "hecbench/src/debayer-cuda": None,  # prints a checksum
    "cuda-samples/Samples/0_Introduction/simpleCubemapTexture/simpleCubemapTexture": EXIT,
    # exits 0 either way; says so when the estimate is off by more than its tolerance
    "cuda-samples/Samples/2_Concepts_and_Techniques/MC_EstimatePiQ/MC_EstimatePiQ": {
        **EXIT,
        "fails": "does not match expected result",
    },
    "cuda-samples/Samples/2_Concepts_and_Techniques/MC_EstimatePiInlineQ/MC_EstimatePiInlineQ": {
        **EXIT,
        "fails": "does not match expected result",
    },
    "cuda-samples/Samples/5_Domain_Specific/NV12toBGRandResize/NV12toBGRandResize": None,  # prints times
    "cuda-samples/Samples/0_Introduction/vectorAddDrv/vectorAddDrv": {"passes": "^Result = PASS"},
    "cuda-samples/Samples/5_Domain_Specific/SobolQRNG/SobolQRNG": EXIT,  # exits 1 when the L1 error is large
    # goes on after a wrong sum (the configuration's timing is left out), exiting 0
    "cudahandbook/memory/globalRead": {**EXIT, "fails": "Incorrect sum"},
    "cudahandbook/concurrency/breakevenKernelAsync": None,  # prints times
    "cudahandbook/gemm/sgemm5Wmma": None,  # prints the largest error, decides nothing
    "cudahandbook/concurrency/nullKernelAsyncGraph": None,  # prints a time
    "cudahandbook/concurrency/nullKernelSync": None,  # prints a time
    # checks copies from one device to another and exits 1 on a mismatch; needs two devices
    "cudahandbook/memory/peer2peerMemcpyDrv": {**EXIT, "devices": 2},
    "cudahandbook/concurrency/pageableMemcpyHtoD16Blocking": EXIT,  # exits 1 on a wrong copy
    "cudahandbook/texturing/tex2d_gather": EXIT,  # exits 1 when a gather is not its 2x2 footprint
    "cudahandbook/texturing/tex1dfetch": None,  # prints texture values
    "cudahandbook/scan/int/testDecoupledLookback": {"passes": "^Correctness: PASS"},  # goes on to time it
    "hecbench/src/perplexity-cuda": PASS_LINE,
    "hecbench/src/lut-gemm-cuda": None,  # prints the mean error against cuBLAS, decides nothing
    "hecbench/src/memcpy-cuda": None,  # prints bandwidths
    "hecbench/src/amgmk-cuda": None,  # prints times
    "hecbench/src/layernorm-cuda": {"passes": "All results match"},  # exits 1 on a mismatch before it
    "hecbench/src/convolutionSeparable-cuda": PASS_LINE,
    # asserts each duplicate check and prints "Error: ..." (then exits 0) for a wrong mask
    "hecbench/src/collision-cuda": {**EXIT, "fails": "^Error:"},
    # prints where each task ran; checks nothing
    "cuda-samples/Samples/0_Introduction/UnifiedMemoryStreams/UnifiedMemoryStreams": None,
    "cudahandbook/concurrency/managedOverhead": None,  # prints times
    "hecbench/src/particlefilter-cuda": None,  # prints times
    "hecbench/src/filter-cuda": {**EXIT, "fails": "^FAIL"},  # PASS or FAIL for each of its two kernels
    "hecbench/src/tsa-cuda": PASS_LINE,
    # PASS or FAIL for each of its three kernels (a fourth, cuDNN's, only with CUDNN_V8=yes)
    "hecbench/src/convolution3D-cuda": {**EXIT, "fails": "^FAIL"},
    "cuda-samples/Samples/0_Introduction/simpleLayeredTexture/simpleLayeredTexture": EXIT,
    "cudahandbook/texturing/tex1dfetch_htod": None,  # prints bandwidths
    # the book's demonstration of an error reported late; prints what each call returned
    "cudahandbook/concurrency/cudaGetLastErrorIsAsynchronous": None,
    "cudahandbook/texturing/surf1Dmemset": None,  # prints the surface
    # --- the fourth fresh sample (seed 60719, libraries weighted 8, fresh_sample4.json) ---
    "hecbench/src/colorwheel-cuda": PASS_LINE,  # "Verification failed ..." in its place
    "hecbench/src/concat-cuda": PASS_LINE,
    "hecbench/src/pcc-cuda": None,  # prints a checksum
    "hecbench/src/softmax-cuda": PASS_LINE,
    "hecbench/src/mrg32k3a-cuda": PASS_LINE,  # cuRAND's host generator against its device one
    "hecbench/src/attention-cuda": PASS_LINE,
    # checks the double-precision results only; "Mismatch at batch index" and goes on, exiting 0
    "hecbench/src/blas-gemmStridedBatched-cuda": {**EXIT, "fails": "Mismatch"},
    "hecbench/src/qrg-cuda": PASS_LINE,
    # "... does not agree with the reference!" for a wrong segment size, exiting 0
    "hecbench/src/segment-reduce-cuda": {**EXIT, "fails": "does not agree"},
    "hecbench/src/all-pairs-distance-cuda": {**EXIT, "fails": "^FAIL"},  # a line per kernel; exits 1 too
    "hecbench/src/ccsd-trpdrv-cuda": PASS_LINE,
    # "Output items: PASS/FAIL" and "Aggregate: PASS/FAIL" for each of its 18 configurations
    "hecbench/src/blockScan-cuda": {**EXIT, "fails": "FAIL"},
    # exits 0 either way; says so when the estimate is off by more than its tolerance
    "cuda-samples/Samples/2_Concepts_and_Techniques/MC_EstimatePiP/MC_EstimatePiP": {
        **EXIT,
        "fails": "does not match expected result",
    },
    # each child process checks the buffers the others wrote and exits 1 on a mismatch; the parent
    # exits 1 when a child does (2 when it waives)
    "cuda-samples/Samples/2_Concepts_and_Techniques/streamOrderedAllocationIPC/streamOrderedAllocationIPC": {
        **EXIT,
    },
    "cuda-samples/Samples/6_Performance/LargeKernelParameter/LargeKernelParameter": {
        "passes": "^Test passed!"
    },
    "cuda-samples/Samples/0_Introduction/simpleTextureDrv/simpleTextureDrv": EXIT,  # compareData's verdict
    "cudahandbook/gemm/sgemm2Cache": None,  # prints the largest error against cuBLAS, decides nothing
    "cudahandbook/gemm/sgemm6WmmaAsync": None,  # prints the largest error against cuBLAS, decides nothing
    # "exact" or "MISMATCH" at the end of each size's line (box sums against the host's), exits 0
    "cudahandbook/corr/integralImage": {**EXIT, "fails": "MISMATCH"},
    "cudahandbook/concurrency/nullDtoHMemcpySync": None,  # prints times
    "hecbench/src/blas-fp8gemm-cuda": None,  # prints times
    "cudahandbook/texturing/tex1d_unnormalized": None,  # prints the fetched values
    # prints "Mismatch: ..." when the spinlocked sum is off by more than 1e-6, exiting 0
    "cudahandbook/memory/spinlockReduction": {**EXIT, "fails": "^Mismatch"},
    "cudahandbook/reduction/reduction": EXIT,  # "Sum is wrong" and exit 1 for any wrong sum
    "hecbench/src/attentionMultiHead-cuda": PASS_LINE,
    "cudahandbook/SMs/testShuffle": None,  # prints the shuffled values
    "cudahandbook/concurrency/concurrencyMemcpyKernel": None,  # prints times; fails on API errors only
    "cudahandbook/memory/AOStoSOA": EXIT,  # "Mismatch at ..." then exit 1 for a wrong element
    # --- the fifth fresh sample (seed 83341, libraries weighted 8, fresh_sample5.json) ---
    "hecbench/src/multinomial-cuda": PASS_LINE,
    # "********* MISMATCH ************" for a wrong decode of one lambda's data, exiting 0
    "hecbench/src/ans-cuda": {**EXIT, "fails": "MISMATCH"},
    "hecbench/src/hexciton-cuda": None,  # prints each kernel's deviation from its reference, decides nothing
    "hecbench/src/pad-cuda": {"passes": "^Test Passed"},  # "Test failed" in its place
    "hecbench/src/opticalFlow-cuda": EXIT,  # exit 1 when the L1 error against the host's flow is too large
    "hecbench/src/intrinsics-cast-cuda": None,  # prints a checksum
    "hecbench/src/topk-cuda": {**EXIT, "fails": "^FAIL"},  # PASS or FAIL for each configuration
    "hecbench/src/ising-cuda": PASS_LINE,
    "hecbench/src/expdist-cuda": None,  # prints the device's and the host's results, decides nothing
    "hecbench/src/tsne-cuda": None,  # prints times and writes the embedding
    "hecbench/src/scel-cuda": PASS_LINE,
    # "PASS" or "FAIL" at the end of each variant's error line, exiting 0
    "hecbench/src/ssm-cuda": {**EXIT, "fails": "FAIL$"},
    "cuda-samples/Samples/0_Introduction/simplePitchLinearTexture/simplePitchLinearTexture": EXIT,
    "cuda-samples/Samples/1_Utilities/topologyQuery/topologyQuery": None,  # prints the topology
    "cuda-samples/Samples/0_Introduction/simpleAttributes/simpleAttributes": None,  # checks API errors only
    # checks a copy from one device to another, exits 1 on a mismatch; needs two devices (waives on one)
    "cuda-samples/Samples/2_Concepts_and_Techniques/streamOrderedAllocationP2P/streamOrderedAllocationP2P": {
        "passes": "^PASSED",
        "devices": 2,
    },
    "cudahandbook/texturing/tex2d_shmoo": None,  # prints times
    "cudahandbook/concurrency/concurrencyKernelKernel": None,  # prints times
    "cudahandbook/memory/globalWrite": None,  # prints bandwidths
    "hecbench/src/attention-paged-cuda": {**EXIT, "fails": "^FAIL"},  # PASS or FAIL for float and bfloat16
    "hecbench/src/coordinates-cuda": {**EXIT, "fails": "^FAIL"},  # PASS or FAIL for double and float
    "hecbench/src/rotary-cuda": PASS_LINE,
    "hecbench/src/mlp-cuda": PASS_LINE,
    "cuda-samples/Samples/0_Introduction/matrixMulDynlinkJIT/matrixMulDynlinkJIT": {
        "passes": "^Test run success"
    },
    "hecbench/src/zeropoint-cuda": PASS_LINE,
    "hecbench/src/mtf-cuda": PASS_LINE,  # exit 1 after FAIL
    "hecbench/src/minimod-cuda": None,  # prints a checksum
    # validate_result (../layernorm-cuda/common.h) exits 1 after ten mismatches, before this line
    "hecbench/src/permute-cuda": {"passes": "^All results match"},
    "hecbench/src/aidw-cuda": {**EXIT, "fails": "^FAIL"},  # PASS or FAIL for each of its two kernels
    "hecbench/src/adamw-cuda": PASS_LINE,
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
    # the third fresh sample: where the run target's work, counted in its source, is far beyond two CPU
    # cores in the 300 s limit and its check follows the timed loop (no run at those arguments here)
    "hecbench/src/goulash-cuda": (
        "1 0.25".split(),
        "1 timed launch on 0.25 GB of cells (16.7M), not 101 on 5 GB (335M cells, 3.4e10 cell updates); "
        "it checks the cells copied back after the first launch, the same for any iteration count",
    ),
    "hecbench/src/mr-cuda": (
        ["2"],
        "2 repeats, not 100 (a repeat tests 100,000 numbers of each of 4 sizes with each of two kernels, "
        "for primes and then odd numbers: 1.6e8 Miller-Rabin tests at 100)",
    ),
    "hecbench/src/perplexity-cuda": (
        "10000 50 2".split(),
        "2 repeats, not 100, of its search (10,000 points x 200 neighbours x up to 100 steps: up to 4e8 "
        "exponentials a repeat, 4e10 at 100)",
    ),
    "hecbench/src/convolutionSeparable-cuda": (
        "8192 8192 1".split(),
        "1 repeat, not 1000, of its two 17-tap passes over 8192x8192 pixels (2.3e12 FLOP at 1000); the "
        "same image is checked",
    ),
    "hecbench/src/filter-cuda": (
        "100000000 256 1".split(),
        "1 repeat, not 100, of each kernel on its 10^8 elements (2e10 element visits at 100); the same "
        "elements are checked",
    ),
    # the fourth fresh sample: as the third's (counted in the source, no run at the run target's)
    "hecbench/src/all-pairs-distance-cuda": (
        ["1"],
        "1 iteration, not 10,000, of each of its three kernels over 224 x 224 instances of 4,096 "
        "attributes (2e8 terms a kernel: 6e12 at 10,000); each kernel's distances are checked",
    ),
    "hecbench/src/qrg-cuda": (
        ["1"],
        "1 repeat, not 100,000, of each of its two kernels over 3 x 1,048,576 values (6e11 values at "
        "100,000); the output of the last repeat is checked, the same for any count",
    ),
    "hecbench/src/colorwheel-cuda": (
        "10 4096 1".split(),
        "1 launch, not 100, over 4096x4096 pixels (1.7e9 colour computations at 100); the image of the "
        "last launch is checked, the same for any count",
    ),
    "hecbench/src/softmax-cuda": (
        "100000 784 0 1".split(),
        "1 repeat, not 100, of each implementation over 100,000 x 784 values (1.6e10 element visits, "
        "each read three times, at 100); the output of the last repeat is checked",
    ),
    "hecbench/src/attention-cuda": (
        "65536 2048 0 1".split(),
        "1 repeat, not 1000, of its kernels over 65,536 x 2,048 keys and values (2.7e11 element reads at "
        "1000); the output of the last repeat is checked",
    ),
    "hecbench/src/blas-gemmStridedBatched-cuda": (
        "-n 100 -r 1".split(),
        "a batch of 100, not 25,000, and 1 timed repeat, not 10 (sizes 2 to 100 in three precisions: "
        "2.8e11 FLOP at the defaults); every size's double-precision batch is checked as before",
    ),
    "hecbench/src/segment-reduce-cuda": (
        "1024 1".split(),
        "16,777,216 elements (multiplier 1024), not 268M (16384), and 1 repeat, not 100, of reduce_by_key "
        "for each of 11 segment sizes (3e11 element visits at the run target's); each size is checked",
    ),
    "hecbench/src/ccsd-trpdrv-cuda": (
        "160 400 5".split(),
        "5 iterations, not 100 (7.2e8 FLOP of dgemm each on the device and again on the host: 1.4e11 at "
        "100); the energies after the last iteration are compared, the same for any count",
    ),
    "hecbench/src/attentionMultiHead-cuda": (
        ["100"],
        "100 launches, not 100,000, of its 64-block kernel (about 3e5 FLOP a launch: 3e10 at 100,000); "
        "the output of the last launch is checked, the same for any count",
    ),
    "hecbench/src/blockScan-cuda": (
        "16 1".split(),
        "16 blocks, not 2,227,104, and 1 timed repeat, not 100 (each of 18 configurations launches 100 + "
        "repeat times a grid of 1,024-item tiles: 8e12 items at the run target's); each block scans the "
        "same tile, and the first launch of each configuration is checked as before",
    ),
    # the fifth fresh sample: repeat counts cut to 1 before any run (the check is unchanged)
    "hecbench/src/adamw-cuda": (
        "1000000 1".split(),
        "1 time step, not 100, of AdamW over 10^6 parameters; the host reference takes as many",
    ),
    "hecbench/src/aidw-cuda": (
        "100 1 1".split(),
        "1 timed iteration, not 100, of each kernel over 100K points; the check follows each first launch",
    ),
    "hecbench/src/attention-paged-cuda": (
        "8 32 128 4096 128 1".split(),
        "1 repeat, not 100, of each precision's kernel",
    ),
    "hecbench/src/coordinates-cuda": (
        "10000000 1".split(),
        "1 repeat, not 1000, of each precision's transform of 10^7 coordinates",
    ),
    "hecbench/src/mlp-cuda": (
        "3 128 784 512 10 0 0 1".split(),
        "1 timed repeat, not 100, of the forward pass",
    ),
    "hecbench/src/mtf-cuda": (
        "1024 1".split(),
        "1 repeat, not 100",
    ),
    "hecbench/src/multinomial-cuda": (
        "65536 2048 1".split(),
        "1 repeat, not 100, over 65,536 distributions of 2,048 categories",
    ),
    "hecbench/src/permute-cuda": (
        "8 1".split(),
        "1 repeat, not 100, of the timed permutes",
    ),
    "hecbench/src/rotary-cuda": (
        "1".split(),
        "1 repeat, not 1000",
    ),
    "hecbench/src/scel-cuda": (
        "2048 50176 1".split(),
        "1 repeat, not 100, over 2,048 x 50,176 values",
    ),
    "hecbench/src/ssm-cuda": (
        "1".split(),
        "1 repeat, not 1000, of each variant",
    ),
    "hecbench/src/topk-cuda": (
        "3072 1".split(),
        "1 repeat, not 1000, for each configuration",
    ),
    "hecbench/src/zeropoint-cuda": (
        "10000000 1".split(),
        "1 repeat, not 100, over 10^7 min/max pairs",
    ),
    "hecbench/src/ising-cuda": (
        "-x 1024 -y 1024 -w 10 -n 10".split(),
        "a 1,024 x 1,024 lattice and 10 iterations, not 5,120 x 5,120 and 1,000 (2.6e10 spin updates, "
        "and as many in the host's reference); every spin is checked against the host's",
    ),
}
