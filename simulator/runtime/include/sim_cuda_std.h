// cuda::std for the stand-in <cuda/std/...> headers: libcu++'s names are the host C++ library's.
#ifndef CUDA_SIM_CUDA_STD_H
#define CUDA_SIM_CUDA_STD_H

namespace cuda {
namespace std {
using namespace ::std;
}  // namespace std
}  // namespace cuda

#endif  // CUDA_SIM_CUDA_STD_H
