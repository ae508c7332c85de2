// cuda::ptx's special-register reads (CCCL's generated get_sreg.h), seen as the device pass of
// the modelled architecture sees them.
//
// Most of them guard their asm with `__CUDA_ARCH__ >= 350` (or 500, 900), and without it call an
// undefined `__cuda_ptx_*_is_not_supported_before_SM_*__` so that the link fails. The simulator
// compiles NVIDIA's headers in its host pass, where __CUDA_ARCH__ is undefined, so CUB's uses of
// them (get_sreg_lanemask_ge in DeviceScan's look-back, for one) did not link. Here the header is
// read with __CUDA_ARCH__ set to the modelled architecture (__CUDA_ARCH_LIST__, which the build
// defines in every pass), so each function takes the branch nvcc's device pass takes for that
// architecture: its asm, which the front end translates like a program's own, or, for a register
// the architecture lacks (the cluster registers before sm_90), the same link error as with nvcc.
#ifndef SIM_CUDA_PTX_GET_SREG_H
#define SIM_CUDA_PTX_GET_SREG_H

#if !defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_LIST__)
#define __CUDA_ARCH__ __CUDA_ARCH_LIST__
#define SIM_GET_SREG_SET_ARCH
#endif

#include_next <cuda/__ptx/instructions/generated/get_sreg.h>

#ifdef SIM_GET_SREG_SET_ARCH
#undef __CUDA_ARCH__
#undef SIM_GET_SREG_SET_ARCH
#endif

#endif  // SIM_CUDA_PTX_GET_SREG_H
