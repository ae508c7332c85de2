// cudaGetErrorString's texts where they say more than the error code's name does (errors.cpp
// makes the others from the name): CUDA's own wording, and the simulator's where it adds what to
// look at. The codes and their values are NVIDIA's (sim_toolkit_errors.inc is generated from
// <driver_types.h>), so a name here that CUDA does not declare fails the runtime's build.
#pragma once

// clang-format off
#define SIM_ERROR_TEXTS(X) \
    X(cudaSuccess, "no error") \
    X(cudaErrorInvalidValue, "invalid argument") \
    X(cudaErrorMemoryAllocation, "out of memory") \
    X(cudaErrorInitializationError, "initialization error (a SIMULATOR_ variable is not valid: see stderr)") \
    X(cudaErrorCudartUnloading, "driver shutting down") \
    X(cudaErrorProfilerDisabled, "profiler disabled while using external profiling tool") \
    X(cudaErrorInvalidConfiguration, "invalid configuration argument") \
    X(cudaErrorInvalidPitchValue, "invalid pitch argument") \
    X(cudaErrorInvalidSymbol, "invalid device symbol") \
    X(cudaErrorInvalidTexture, "invalid texture reference") \
    X(cudaErrorInvalidTextureBinding, "texture is not bound to a pointer") \
    X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy") \
    X(cudaErrorInvalidFilterSetting, "linear filtering not supported for non-float type") \
    X(cudaErrorInvalidNormSetting, "read as normalized float not supported for 32-bit non float type") \
    X(cudaErrorInsufficientDriver, "CUDA driver version is insufficient for CUDA runtime version") \
    X(cudaErrorInvalidSurface, "invalid surface reference") \
    X(cudaErrorMissingConfiguration, "__global__ function call is not configured") \
    X(cudaErrorNoDevice, "no CUDA-capable device is detected") \
    X(cudaErrorInvalidDevice, "invalid device ordinal") \
    X(cudaErrorStartupFailure, "startup failure in cuda runtime") \
    X(cudaErrorInvalidKernelImage, "device kernel image is invalid") \
    X(cudaErrorNotReady, "device not ready") \
    X(cudaErrorIllegalAddress, "an illegal memory access was encountered") \
    X(cudaErrorLaunchOutOfResources, "too many resources requested for launch") \
    X(cudaErrorLaunchTimeout, "the launch timed out and was terminated (SIMULATOR_TIMEOUT)") \
    X(cudaErrorAssert, "device-side assert triggered") \
    X(cudaErrorLaunchFailure, "unspecified launch failure (the simulator reported the kernel fault on stderr)") \
    X(cudaErrorCooperativeLaunchTooLarge, "too many blocks in cooperative launch") \
    X(cudaErrorIllegalState, "the operation cannot be performed in the present state") \
    X(cudaErrorNotSupported, "operation not supported") \
    X(cudaErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing") \
    X(cudaErrorStreamCaptureUnmatched, "capture was not initiated in this stream") \
    X(cudaErrorStreamCaptureWrongThread, "attempt to terminate a thread-local capture sequence from another thread") \
    X(cudaErrorGraphExecUpdateFailure, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update") \
    X(cudaErrorUnknown, "unknown error")
// clang-format on
