// The runtime header the build force-includes into every .cu source, as nvcc makes
// <cuda_runtime.h> visible to every .cu: NVIDIA's header itself (every declaration, type, enum,
// macro and include guard of the toolkit), then what device code needs on a CPU: the
// simulator's device state and scheduler entry points (sim_device.h), its launch machinery and
// the names current CUDA no longer declares (host_api.h), and the definitions of the device
// functions NVIDIA declares (sim_intrinsics.h).
#ifndef CUDA_CPU_SIMULATOR_H
#define CUDA_CPU_SIMULATOR_H

#define CUDA_CPU_SIMULATOR 1

// The built-in variables are per CUDA thread: thread-local objects here, which the scheduler
// sets for the running thread (device_launch_parameters.h declares them with this storage).
#define __STORAGE__ extern __thread const

// NVIDIA's texture and surface functions call this builtin of nvcc's front end from templates,
// so it is declared before them (sim_texture_fetch.h defines it).
template <class R, class... A>
static inline void __nv_tex_surf_handler(const char* op, R* r, unsigned long long obj, A... a);

// Why the includes come here, below those two declarations, and in this order: NVIDIA's headers
// read __STORAGE__ and call __nv_tex_surf_handler, so both come first; their inline functions
// hold asm statements that the front end translates into calls of sim_ptx.h's helpers, so the
// toolkit's types, the device state and those helpers come before <cuda_runtime.h>; and
// host_api.h and sim_intrinsics.h use and define what <cuda_runtime.h> declares, so they follow it.
#include <builtin_types.h>

#include "sim_device.h"
#include "sim_ptx.h"

#include <cuda_runtime.h>

#include "host_api.h"
#include "sim_intrinsics.h"

#endif  // CUDA_CPU_SIMULATOR_H
