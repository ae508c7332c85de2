// The 3-D copy descriptors of CUDA's driver_types.h that a graph's memcpy node takes (names and
// fields are CUDA's). The textures/CUDA-array work defines the same types in sim_textures.h:
// when both are present, that header's definitions are the ones to keep and this one goes.
#ifndef CUDA_CPU_SIMULATOR_MEMCPY3D_TYPES_H
#define CUDA_CPU_SIMULATOR_MEMCPY3D_TYPES_H

struct cudaArray;
typedef struct cudaArray* cudaArray_t;

struct cudaExtent {
    size_t width;  // bytes for linear memory
    size_t height;
    size_t depth;
};
struct cudaPos {
    size_t x, y, z;
};
struct cudaPitchedPtr {
    void* ptr;
    size_t pitch;
    size_t xsize;
    size_t ysize;
};
static inline cudaExtent make_cudaExtent(size_t w, size_t h, size_t d) { return cudaExtent{w, h, d}; }
static inline cudaPos make_cudaPos(size_t x, size_t y, size_t z) { return cudaPos{x, y, z}; }
static inline cudaPitchedPtr make_cudaPitchedPtr(void* d, size_t p, size_t xsz, size_t ysz) {
    return cudaPitchedPtr{d, p, xsz, ysz};
}

struct cudaMemcpy3DParms {
    cudaArray_t srcArray;
    struct cudaPos srcPos;
    struct cudaPitchedPtr srcPtr;
    cudaArray_t dstArray;
    struct cudaPos dstPos;
    struct cudaPitchedPtr dstPtr;
    struct cudaExtent extent;
    enum cudaMemcpyKind kind;
};

#endif  // CUDA_CPU_SIMULATOR_MEMCPY3D_TYPES_H
