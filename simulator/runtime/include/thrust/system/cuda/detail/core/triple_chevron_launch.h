// Simulator stand-in for Thrust's <thrust/system/cuda/detail/core/triple_chevron_launch.h>:
// NVIDIA's header, after the CUDA system's execution policy. That header names
// `detail::allocator_aware_execution_policy` from inside thrust::cuda_cub, which means
// thrust::detail only while no thrust::cuda_cub::detail exists yet; with Thrust's CUDA system as
// the device system it is included first, but here the device system is Thrust's C++ one
// (toolchain.py, toolkit_flags) and CUB's headers reach this one, which opens cuda_cub::detail, first.
#ifndef CUDA_SIM_THRUST_CUDA_TRIPLE_CHEVRON_LAUNCH_H
#define CUDA_SIM_THRUST_CUDA_TRIPLE_CHEVRON_LAUNCH_H

#include <thrust/detail/config.h>
#include <thrust/system/cuda/detail/execution_policy.h>

#include_next <thrust/system/cuda/detail/core/triple_chevron_launch.h>

#endif  // CUDA_SIM_THRUST_CUDA_TRIPLE_CHEVRON_LAUNCH_H
