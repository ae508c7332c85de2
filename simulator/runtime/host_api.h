// The simulator's host API and its one index. Every cuda* call CUDA 13 declares is NVIDIA's own
// declaration (<cuda_runtime.h>, included before this header by cuda_sim.h); this header adds what
// host code of a translated program uses beyond those: the launch machinery that the build's
// rewrites of `kernel<<<...>>>(args)` call and the kernel registry (launch.h), texture references
// and CUDA's array type (sim_textures.h), the registrations the front end writes for symbols named
// by a string, and the calls that current CUDA no longer declares but older programs still use.
//
// Adding a host call: define it in the .cpp file of its area (below), add its name to that file's
// lines of the index, and test it. A call NVIDIA's headers declare needs nothing else; one they
// do not declare (a legacy call) is declared in this header too (a texture reference call, in
// sim_textures.h). simulator/tests/test_runtime_index.py fails when a cuda*/cu* call the
// runtime's .cpp files define is missing from the index, listed under another file, or defined
// twice.
//
// ---- index: every host call the runtime defines, under the file of its area --------------------
//  memory.cpp: allocation, copies and sets, their async and pitched forms, pinned host memory
//      cudaMalloc cudaMallocManaged cudaMallocHost cudaFreeHost cudaFree cudaMemcpy
//      cudaMemset cudaHostAlloc cudaHostGetDevicePointer cudaHostRegister
//      cudaHostUnregister cudaMallocPitch cudaMemcpy2D cudaMemcpy2DAsync cudaMemset2D
//      cudaMemset2DAsync cudaMemcpyAsync cudaMemsetAsync cudaMemGetInfo
//      cudaMemPrefetchAsync cudaMemAdvise
//  mem_pools.cpp: stream-ordered allocation and memory pools
//      cudaMallocAsync cudaMallocFromPoolAsync cudaFreeAsync
//      cudaDeviceGetDefaultMemPool cudaDeviceGetMemPool cudaDeviceSetMemPool
//      cudaMemPoolCreate cudaMemPoolDestroy cudaMemPoolSetAttribute
//      cudaMemPoolGetAttribute cudaMemPoolTrimTo cudaMemPoolSetAccess
//      cudaMemPoolGetAccess
//  symbols.cpp: copies to and from __device__/__constant__ variables
//      cudaMemcpyToSymbol cudaMemcpyFromSymbol cudaMemcpyToSymbolAsync
//      cudaMemcpyFromSymbolAsync cudaGetSymbolAddress cudaGetSymbolSize
//  cuda_arrays.cpp: CUDA arrays and mipmapped arrays
//      cudaCreateChannelDesc cudaMallocArray cudaMalloc3DArray cudaFreeArray
//      cudaMallocMipmappedArray cudaGetMipmappedArrayLevel cudaFreeMipmappedArray
//      cudaArrayGetInfo cudaGetChannelDesc
//  array_copies.cpp: 3-D memory, copies to, from and between CUDA arrays
//      cudaMalloc3D cudaMemset3D cudaMemcpy3D
//      cudaMemcpy3DAsync cudaMemcpy2DToArray cudaMemcpy2DFromArray
//      cudaMemcpy2DToArrayAsync cudaMemcpy2DFromArrayAsync cudaMemcpy2DArrayToArray
//      cudaMemcpyToArray cudaMemcpyFromArray cudaMemcpyArrayToArray
//      cudaMemcpyToArrayAsync cudaMemcpyFromArrayAsync
//  textures.cpp: texture and surface objects, texture references
//      cudaCreateTextureObject
//      cudaDestroyTextureObject cudaGetTextureObjectResourceDesc
//      cudaGetTextureObjectTextureDesc cudaCreateSurfaceObject cudaDestroySurfaceObject
//      cudaGetSurfaceObjectResourceDesc cudaBindTexture cudaBindTexture2D
//      cudaBindTextureToArray cudaUnbindTexture
//  streams.cpp: streams, their attributes, host functions
//      cudaStreamCreateWithFlags cudaStreamCreate cudaStreamCreateWithPriority
//      cudaStreamDestroy cudaStreamSynchronize cudaStreamQuery cudaStreamAddCallback
//      cudaDeviceGetStreamPriorityRange cudaLaunchHostFunc cudaStreamSetAttribute
//      cudaStreamGetAttribute
//  events.cpp: events, and a stream's wait for one
//      cudaEventCreateWithFlags cudaEventCreate cudaEventRecord
//      cudaEventRecordWithFlags cudaEventQuery cudaEventSynchronize
//      cudaEventElapsedTime cudaEventDestroy cudaStreamWaitEvent
//  launch.cpp: launches by address, a kernel's attributes, occupancy
//      cudaLaunchKernel cudaLaunchCooperativeKernel cudaLaunchKernelExC
//      cudaFuncGetAttributes cudaFuncSetAttribute cudaFuncSetCacheConfig
//      cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags
//      cudaOccupancyMaxActiveBlocksPerMultiprocessor
//      cudaOccupancyAvailableDynamicSMemPerBlock
//  graphs.cpp: graphs, their nodes and executable graphs; stream capture
//      cudaStreamBeginCapture cudaStreamEndCapture cudaStreamIsCapturing
//      cudaStreamGetCaptureInfo cudaThreadExchangeStreamCaptureMode cudaGraphCreate
//      cudaGraphAddKernelNode cudaGraphAddMemcpyNode cudaGraphAddMemcpyNode1D
//      cudaGraphAddMemsetNode cudaGraphAddHostNode cudaGraphAddEmptyNode
//      cudaGraphAddDependencies cudaGraphGetNodes cudaGraphGetRootNodes
//      cudaGraphNodeGetType cudaGraphDestroy cudaGraphInstantiateWithFlags
//      cudaGraphInstantiate cudaGraphUpload cudaGraphLaunch cudaGraphExecUpdate
//      cudaGraphExecKernelNodeSetParams cudaGraphExecDestroy
//  graph_memory.cpp: graph allocation and free nodes, graph memory
//      cudaGraphAddMemAllocNode cudaGraphMemAllocNodeGetParams cudaGraphAddMemFreeNode
//      cudaGraphMemFreeNodeGetParams cudaDeviceGetGraphMemAttribute
//      cudaDeviceSetGraphMemAttribute cudaDeviceGraphMemTrim
//  graph_children.cpp: child graphs, clones
//      cudaGraphAddChildGraphNode cudaGraphChildGraphNodeGetGraph cudaGraphClone
//      cudaGraphNodeFindInClone
//  graph_events.cpp: event record and wait nodes
//      cudaGraphAddEventRecordNode cudaGraphAddEventWaitNode
//      cudaGraphEventRecordNodeGetEvent cudaGraphEventRecordNodeSetEvent
//      cudaGraphEventWaitNodeGetEvent cudaGraphEventWaitNodeSetEvent
//      cudaGraphExecEventRecordNodeSetEvent cudaGraphExecEventWaitNodeSetEvent
//  devices.cpp: devices, peers, pointer attributes; the current device's control, limits, versions
//      cudaGetDeviceCount cudaGetDevice cudaSetDevice cudaDeviceCanAccessPeer
//      cudaDeviceEnablePeerAccess cudaDeviceDisablePeerAccess cudaMemcpyPeer
//      cudaMemcpyPeerAsync cudaDeviceGetP2PAttribute cudaPointerGetAttributes
//      cudaDeviceSynchronize cudaDeviceReset cudaSetDeviceFlags cudaGetDeviceFlags
//      cudaDeviceSetCacheConfig cudaDeviceSetSharedMemConfig cudaDriverGetVersion
//      cudaRuntimeGetVersion cudaDeviceSetLimit cudaDeviceGetLimit cudaProfilerStart
//      cudaProfilerStop cudaDeviceGetCacheConfig cudaCtxResetPersistingL2Cache
//      cudaDeviceResetPersistingL2Cache
//  device_props.cpp: the modelled device's properties and attributes
//      cudaGetDeviceProperties cudaDeviceGetAttribute
//  errors.cpp: the last error and error names (runtime and driver)
//      cudaGetLastError cudaPeekAtLastError cudaGetErrorName cudaGetErrorString
//      cuGetErrorName cuGetErrorString
//  driver_api.cpp: the driver API's device queries
//      cuInit cuDriverGetVersion cuDeviceGetCount cuDeviceGet cuDeviceGetName
//      cuDeviceTotalMem cuDeviceComputeCapability cuDeviceGetAttribute cuMemGetInfo
//  driver_arrays.cpp: the driver API's CUDA arrays, 2-D copies and texture objects
//      cuArrayCreate cuArray3DCreate cuArrayDestroy cuArrayGetDescriptor cuArray3DGetDescriptor
//      cuMemcpy2D cuMemcpy2DUnaligned cuMemcpy2DAsync cuTexObjectCreate cuTexObjectDestroy
//  driver_contexts.cpp: the driver API's contexts, memory, streams and events
//      cuCtxCreate cuCtxDestroy cuCtxPushCurrent cuCtxPopCurrent cuCtxSetCurrent
//      cuCtxGetCurrent cuCtxGetDevice cuCtxSynchronize cuDevicePrimaryCtxRetain
//      cuDevicePrimaryCtxRelease cuMemAlloc cuMemFree cuMemAllocHost cuMemHostAlloc
//      cuMemFreeHost cuMemcpyHtoD cuMemcpyDtoH cuMemcpyDtoD cuMemcpyHtoDAsync
//      cuMemcpyDtoHAsync cuMemcpyDtoDAsync cuMemsetD8 cuMemsetD16 cuMemsetD32
//      cuStreamCreate cuStreamSynchronize cuStreamDestroy cuStreamQuery cuStreamWaitEvent
//      cuEventCreate cuEventRecord cuEventSynchronize cuEventQuery cuEventElapsedTime
//      cuEventDestroy
//  driver_modules.cpp: the driver API's modules, functions and launches
//      cuModuleLoadData cuModuleLoadDataEx cuModuleLoadFatBinary cuModuleLoad
//      cuModuleUnload cuModuleGetFunction cuModuleGetGlobal cuLaunchKernel
//      cuFuncGetAttribute cuFuncSetAttribute cuOccupancyMaxPotentialBlockSize
//  driver_vmm.cpp: the driver API's virtual memory management
//      cuMemGetAllocationGranularity cuMemAddressReserve cuMemAddressFree cuMemCreate
//      cuMemRelease cuMemMap cuMemUnmap cuMemSetAccess cuMemGetAccess
//      cuMemRetainAllocationHandle cuMemGetAllocationPropertiesFromHandle
//      cuMemExportToShareableHandle cuMemImportFromShareableHandle
//  legacy_api.cpp: calls gone from current CUDA, run as their current equivalents
//      cudaThreadSynchronize cudaThreadExit cudaThreadSetLimit cudaThreadGetLimit
//      cudaThreadSetCacheConfig cudaThreadGetCacheConfig
#ifndef CUDA_CPU_SIMULATOR_HOST_API_H
#define CUDA_CPU_SIMULATOR_HOST_API_H

#include <climits>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sim_device.h"
#include "launch.h"
#include "sim_textures.h"

namespace __sim {
// A file-scope __device__/__constant__ variable, registered by the front end under its name and
// address: cudaMemcpyToSymbol and friends check a copy against its size, and a symbol named by
// a string (removed in CUDA 5, still in older code such as Rodinia's kmeans) is found by name.
SIM_API bool register_symbol_name(const char* name, const void* address, size_t size);
}  // namespace __sim

// ---- names gone from current CUDA (legacy_api.cpp) -------------------------------------------
// Removed from the CUDA 12/13 toolkits but common in older code (suites, textbooks).
extern "C" {
SIM_API cudaError_t cudaThreadSynchronize(void);
SIM_API cudaError_t cudaThreadExit(void);
SIM_API cudaError_t cudaThreadSetLimit(enum cudaLimit limit, size_t value);
SIM_API cudaError_t cudaThreadGetLimit(size_t* value, enum cudaLimit limit);
SIM_API cudaError_t cudaThreadSetCacheConfig(enum cudaFuncCache config);
SIM_API cudaError_t cudaThreadGetCacheConfig(enum cudaFuncCache* config);
}

#endif  // CUDA_CPU_SIMULATOR_HOST_API_H
