// The runtime's error codes: name, value and cudaGetErrorString text, CUDA's values (every name
// of CUDA 13's cudaError list, and older names that code written before CUDA 12 still uses).
// Included by host_api.h, which makes the enum from it; errors.cpp makes the name and text tables.
#pragma once

#define SIM_CUDA_ERRORS(X)                                                                                    \
    X(cudaSuccess, 0, "no error")                                                                             \
    X(cudaErrorInvalidValue, 1, "invalid argument")                                                           \
    X(cudaErrorMemoryAllocation, 2, "out of memory")                                                          \
    X(cudaErrorInitializationError, 3, "initialization error (a SIMULATOR_ variable is not "                  \
                                       "valid: see stderr)")                                                  \
    X(cudaErrorCudartUnloading, 4, "driver shutting down")                                                    \
    X(cudaErrorProfilerDisabled, 5, "profiler disabled while using external profiling tool")                  \
    X(cudaErrorInvalidConfiguration, 9, "invalid configuration argument")                                     \
    X(cudaErrorInvalidPitchValue, 12, "invalid pitch argument")                                               \
    X(cudaErrorInvalidSymbol, 13, "invalid device symbol")                                                    \
    X(cudaErrorInvalidHostPointer, 16, "invalid host pointer")                                                \
    X(cudaErrorInvalidDevicePointer, 17, "invalid device pointer")                                            \
    X(cudaErrorInvalidTexture, 18, "invalid texture reference")                                               \
    X(cudaErrorInvalidTextureBinding, 19, "texture is not bound to a pointer")                                \
    X(cudaErrorInvalidChannelDescriptor, 20, "invalid channel descriptor")                                    \
    X(cudaErrorInvalidMemcpyDirection, 21, "invalid copy direction for memcpy")                               \
    X(cudaErrorAddressOfConstant, 22, "invalid address of constant")                                          \
    X(cudaErrorTextureFetchFailed, 23, "fetch from texture failed")                                           \
    X(cudaErrorTextureNotBound, 24, "cannot fetch from a texture that is not bound")                          \
    X(cudaErrorSynchronizationError, 25, "incorrect use of __syncthreads()")                                  \
    X(cudaErrorInvalidFilterSetting, 26, "linear filtering not supported for non-float type")                 \
    X(cudaErrorInvalidNormSetting, 27, "read as normalized float not supported for 32-bit non float type")    \
    X(cudaErrorMixedDeviceExecution, 28, "device emulation mode and device execution mode cannot be mixed")   \
    X(cudaErrorNotYetImplemented, 31, "function not yet implemented")                                         \
    X(cudaErrorMemoryValueTooLarge, 32, "memory size or pointer value too large")                             \
    X(cudaErrorInsufficientDriver, 35, "CUDA driver version is insufficient for CUDA runtime version")        \
    X(cudaErrorInvalidSurface, 37, "invalid surface reference")                                               \
    X(cudaErrorMissingConfiguration, 52, "__global__ function call is not configured")                        \
    X(cudaErrorPriorLaunchFailure, 53, "unspecified launch failure in prior launch")                          \
    X(cudaErrorInvalidDeviceFunction, 98, "invalid device function")                                          \
    X(cudaErrorNoDevice, 100, "no CUDA-capable device is detected")                                           \
    X(cudaErrorInvalidDevice, 101, "invalid device ordinal")                                                  \
    X(cudaErrorStartupFailure, 127, "startup failure in cuda runtime")                                        \
    X(cudaErrorInvalidKernelImage, 200, "device kernel image is invalid")                                     \
    X(cudaErrorInvalidResourceHandle, 400, "invalid resource handle")                                         \
    X(cudaErrorNotReady, 600, "device not ready")                                                             \
    X(cudaErrorIllegalAddress, 700, "an illegal memory access was encountered")                               \
    X(cudaErrorLaunchOutOfResources, 701, "too many resources requested for launch")                          \
    X(cudaErrorLaunchTimeout, 702, "the launch timed out and was terminated (SIMULATOR_TIMEOUT)")             \
    X(cudaErrorAssert, 710, "device-side assert triggered")                                                   \
    X(cudaErrorLaunchFailure, 719, "unspecified launch failure (the simulator reported the kernel fault on "  \
                                   "stderr)")                                                                 \
    X(cudaErrorCooperativeLaunchTooLarge, 720, "too many blocks in cooperative launch")                       \
    X(cudaErrorIllegalState, 401, "the operation cannot be performed in the present state")                   \
    X(cudaErrorNotSupported, 801, "operation not supported")                                                  \
    X(cudaErrorStreamCaptureUnsupported, 900, "operation not permitted when stream is capturing")             \
    X(cudaErrorStreamCaptureUnmatched, 903, "capture was not initiated in this stream")                       \
    X(cudaErrorStreamCaptureWrongThread, 908, "attempt to terminate a thread-local capture sequence from "     \
                                              "another thread")                                               \
    X(cudaErrorGraphExecUpdateFailure, 910, "the graph update was not performed because it included changes " \
                                            "which violated constraints specific to instantiated graph update")\
    X(cudaErrorProfilerNotInitialized, 6, "profiler not initialized")                                          \
    X(cudaErrorProfilerAlreadyStarted, 7, "profiler already started")                                          \
    X(cudaErrorProfilerAlreadyStopped, 8, "profiler already stopped")                                          \
    X(cudaErrorStubLibrary, 34, "stub library")                                                                \
    X(cudaErrorCallRequiresNewerDriver, 36, "call requires newer driver")                                      \
    X(cudaErrorDuplicateVariableName, 43, "duplicate variable name")                                           \
    X(cudaErrorDuplicateTextureName, 44, "duplicate texture name")                                             \
    X(cudaErrorDuplicateSurfaceName, 45, "duplicate surface name")                                             \
    X(cudaErrorDevicesUnavailable, 46, "devices unavailable")                                                  \
    X(cudaErrorIncompatibleDriverContext, 49, "incompatible driver context")                                   \
    X(cudaErrorLaunchMaxDepthExceeded, 65, "launch max depth exceeded")                                        \
    X(cudaErrorLaunchFileScopedTex, 66, "launch file scoped tex")                                              \
    X(cudaErrorLaunchFileScopedSurf, 67, "launch file scoped surf")                                            \
    X(cudaErrorSyncDepthExceeded, 68, "sync depth exceeded")                                                   \
    X(cudaErrorLaunchPendingCountExceeded, 69, "launch pending count exceeded")                                \
    X(cudaErrorDeviceNotLicensed, 102, "device not licensed")                                                  \
    X(cudaErrorSoftwareValidityNotEstablished, 103, "software validity not established")                       \
    X(cudaErrorDeviceUninitialized, 201, "device uninitialized")                                               \
    X(cudaErrorMapBufferObjectFailed, 205, "map buffer object failed")                                         \
    X(cudaErrorUnmapBufferObjectFailed, 206, "unmap buffer object failed")                                     \
    X(cudaErrorArrayIsMapped, 207, "array is mapped")                                                          \
    X(cudaErrorAlreadyMapped, 208, "already mapped")                                                           \
    X(cudaErrorNoKernelImageForDevice, 209, "no kernel image for device")                                      \
    X(cudaErrorAlreadyAcquired, 210, "already acquired")                                                       \
    X(cudaErrorNotMapped, 211, "not mapped")                                                                   \
    X(cudaErrorNotMappedAsArray, 212, "not mapped as array")                                                   \
    X(cudaErrorNotMappedAsPointer, 213, "not mapped as pointer")                                               \
    X(cudaErrorECCUncorrectable, 214, "ecc uncorrectable")                                                     \
    X(cudaErrorUnsupportedLimit, 215, "unsupported limit")                                                     \
    X(cudaErrorDeviceAlreadyInUse, 216, "device already in use")                                               \
    X(cudaErrorPeerAccessUnsupported, 217, "peer access unsupported")                                          \
    X(cudaErrorInvalidPtx, 218, "invalid ptx")                                                                 \
    X(cudaErrorInvalidGraphicsContext, 219, "invalid graphics context")                                        \
    X(cudaErrorNvlinkUncorrectable, 220, "nvlink uncorrectable")                                               \
    X(cudaErrorJitCompilerNotFound, 221, "jit compiler not found")                                             \
    X(cudaErrorUnsupportedPtxVersion, 222, "unsupported ptx version")                                          \
    X(cudaErrorJitCompilationDisabled, 223, "jit compilation disabled")                                        \
    X(cudaErrorUnsupportedExecAffinity, 224, "unsupported exec affinity")                                      \
    X(cudaErrorUnsupportedDevSideSync, 225, "unsupported dev side sync")                                       \
    X(cudaErrorContained, 226, "contained")                                                                    \
    X(cudaErrorInvalidSource, 300, "invalid source")                                                           \
    X(cudaErrorFileNotFound, 301, "file not found")                                                            \
    X(cudaErrorSharedObjectSymbolNotFound, 302, "shared object symbol not found")                              \
    X(cudaErrorSharedObjectInitFailed, 303, "shared object init failed")                                       \
    X(cudaErrorOperatingSystem, 304, "operating system")                                                       \
    X(cudaErrorLossyQuery, 402, "lossy query")                                                                 \
    X(cudaErrorSymbolNotFound, 500, "symbol not found")                                                        \
    X(cudaErrorLaunchIncompatibleTexturing, 703, "launch incompatible texturing")                              \
    X(cudaErrorPeerAccessAlreadyEnabled, 704, "peer access already enabled")                                   \
    X(cudaErrorPeerAccessNotEnabled, 705, "peer access not enabled")                                           \
    X(cudaErrorSetOnActiveProcess, 708, "set on active process")                                               \
    X(cudaErrorContextIsDestroyed, 709, "context is destroyed")                                                \
    X(cudaErrorTooManyPeers, 711, "too many peers")                                                            \
    X(cudaErrorHostMemoryAlreadyRegistered, 712, "host memory already registered")                             \
    X(cudaErrorHostMemoryNotRegistered, 713, "host memory not registered")                                     \
    X(cudaErrorHardwareStackError, 714, "hardware stack error")                                                \
    X(cudaErrorIllegalInstruction, 715, "illegal instruction")                                                 \
    X(cudaErrorMisalignedAddress, 716, "misaligned address")                                                   \
    X(cudaErrorInvalidAddressSpace, 717, "invalid address space")                                              \
    X(cudaErrorInvalidPc, 718, "invalid pc")                                                                   \
    X(cudaErrorTensorMemoryLeak, 721, "tensor memory leak")                                                    \
    X(cudaErrorNotPermitted, 800, "not permitted")                                                             \
    X(cudaErrorSystemNotReady, 802, "system not ready")                                                        \
    X(cudaErrorSystemDriverMismatch, 803, "system driver mismatch")                                            \
    X(cudaErrorCompatNotSupportedOnDevice, 804, "compat not supported on device")                              \
    X(cudaErrorMpsConnectionFailed, 805, "mps connection failed")                                              \
    X(cudaErrorMpsRpcFailure, 806, "mps rpc failure")                                                          \
    X(cudaErrorMpsServerNotReady, 807, "mps server not ready")                                                 \
    X(cudaErrorMpsMaxClientsReached, 808, "mps max clients reached")                                           \
    X(cudaErrorMpsMaxConnectionsReached, 809, "mps max connections reached")                                   \
    X(cudaErrorMpsClientTerminated, 810, "mps client terminated")                                              \
    X(cudaErrorCdpNotSupported, 811, "cdp not supported")                                                      \
    X(cudaErrorCdpVersionMismatch, 812, "cdp version mismatch")                                                \
    X(cudaErrorStreamCaptureInvalidated, 901, "stream capture invalidated")                                    \
    X(cudaErrorStreamCaptureMerge, 902, "stream capture merge")                                                \
    X(cudaErrorStreamCaptureUnjoined, 904, "stream capture unjoined")                                          \
    X(cudaErrorStreamCaptureIsolation, 905, "stream capture isolation")                                        \
    X(cudaErrorStreamCaptureImplicit, 906, "stream capture implicit")                                          \
    X(cudaErrorCapturedEvent, 907, "captured event")                                                           \
    X(cudaErrorTimeout, 909, "timeout")                                                                        \
    X(cudaErrorExternalDevice, 911, "external device")                                                         \
    X(cudaErrorInvalidClusterSize, 912, "invalid cluster size")                                                \
    X(cudaErrorFunctionNotLoaded, 913, "function not loaded")                                                  \
    X(cudaErrorInvalidResourceType, 914, "invalid resource type")                                              \
    X(cudaErrorInvalidResourceConfiguration, 915, "invalid resource configuration")                            \
    X(cudaErrorApiFailureBase, 10000, "api failure base")                                                      \
    X(cudaErrorUnknown, 999, "unknown error")
