// Textures, surfaces and CUDA arrays (included by host_api.h): CUDA's types
// (sim_texture_types.h), the device fetches (sim_texture_fetch.h), and here the host calls
// (textures.cpp) and the texture references of older CUDA.
#ifndef SIM_TEXTURES_H
#define SIM_TEXTURES_H

#include "sim_texture_types.h"
#include "sim_texture_fetch.h"

// ---- host calls (textures.cpp) -------------------------------------------------------------
extern "C" {
SIM_API struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f);
SIM_API cudaError_t cudaMallocArray(cudaArray_t* array, const struct cudaChannelFormatDesc* desc, size_t width,
                                    size_t height = 0, unsigned int flags = 0);
SIM_API cudaError_t cudaMalloc3DArray(cudaArray_t* array, const struct cudaChannelFormatDesc* desc,
                                      struct cudaExtent extent, unsigned int flags = 0);
SIM_API cudaError_t cudaFreeArray(cudaArray_t array);
SIM_API cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc* desc, struct cudaExtent* extent,
                                     unsigned int* flags, cudaArray_t array);
SIM_API cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc* desc, cudaArray_const_t array);
SIM_API cudaError_t cudaMalloc3D(struct cudaPitchedPtr* pitched, struct cudaExtent extent);
SIM_API cudaError_t cudaMemset3D(struct cudaPitchedPtr pitched, int value, struct cudaExtent extent);
SIM_API cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms* p);
SIM_API cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms* p, cudaStream_t stream = 0);
SIM_API cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,
                                        size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind);
SIM_API cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                          size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind kind);
SIM_API cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,
                                             size_t spitch, size_t width, size_t height, enum cudaMemcpyKind kind,
                                             cudaStream_t stream = 0);
SIM_API cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                               size_t hOffset, size_t width, size_t height,
                                               enum cudaMemcpyKind kind, cudaStream_t stream = 0);
SIM_API cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                             cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc,
                                             size_t width, size_t height,
                                             enum cudaMemcpyKind kind = cudaMemcpyDeviceToDevice);
// Deprecated since CUDA 10.1 and still declared by CUDA 13's runtime header.
SIM_API cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                                      enum cudaMemcpyKind kind);
SIM_API cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                        size_t count, enum cudaMemcpyKind kind);
SIM_API cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                           cudaArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc, size_t count,
                                           enum cudaMemcpyKind kind = cudaMemcpyDeviceToDevice);
SIM_API cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src,
                                           size_t count, enum cudaMemcpyKind kind, cudaStream_t stream = 0);
SIM_API cudaError_t cudaMemcpyFromArrayAsync(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                             size_t count, enum cudaMemcpyKind kind, cudaStream_t stream = 0);

SIM_API cudaError_t cudaCreateTextureObject(cudaTextureObject_t* tex, const struct cudaResourceDesc* res,
                                            const struct cudaTextureDesc* desc,
                                            const struct cudaResourceViewDesc* view);
SIM_API cudaError_t cudaDestroyTextureObject(cudaTextureObject_t tex);
SIM_API cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc* res, cudaTextureObject_t tex);
SIM_API cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc* desc, cudaTextureObject_t tex);
SIM_API cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* surf, const struct cudaResourceDesc* res);
SIM_API cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surf);
SIM_API cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc* res, cudaSurfaceObject_t surf);
}

template <class T>
static inline cudaChannelFormatDesc cudaCreateChannelDesc(void) {
    typedef typename ::sim::tex_vec<T>::comp C;
    const int b = (int)sizeof(C) * 8, n = ::sim::tex_vec<T>::n;
    const cudaChannelFormatKind k = std::is_floating_point<C>::value
                                        ? cudaChannelFormatKindFloat
                                        : (std::is_signed<C>::value ? cudaChannelFormatKindSigned
                                                                    : cudaChannelFormatKindUnsigned);
    return cudaChannelFormatDesc{b, n > 1 ? b : 0, n > 2 ? b : 0, n > 3 ? b : 0, k};
}
static inline cudaChannelFormatDesc cudaCreateChannelDescHalf(void) {
    return cudaChannelFormatDesc{16, 0, 0, 0, cudaChannelFormatKindFloat};
}
static inline cudaChannelFormatDesc cudaCreateChannelDescHalf1(void) { return cudaCreateChannelDescHalf(); }
static inline cudaChannelFormatDesc cudaCreateChannelDescHalf2(void) {
    return cudaChannelFormatDesc{16, 16, 0, 0, cudaChannelFormatKindFloat};
}
static inline cudaChannelFormatDesc cudaCreateChannelDescHalf4(void) {
    return cudaChannelFormatDesc{16, 16, 16, 16, cudaChannelFormatKindFloat};
}

// ---- texture references (removed in CUDA 12; textures.cpp notes their use once) -------------
// A `texture<T, dim, readMode>` global: the sampling fields are read at each fetch, the bound
// resource is kept in sim_data by the cudaBindTexture* calls.
struct textureReference {
    int normalized;
    enum cudaTextureFilterMode filterMode;
    enum cudaTextureAddressMode addressMode[3];
    struct cudaChannelFormatDesc channelDesc;
    int sRGB;
    unsigned int maxAnisotropy;
    enum cudaTextureFilterMode mipmapFilterMode;
    float mipmapLevelBias;
    float minMipmapLevelClamp;
    float maxMipmapLevelClamp;
    int disableTrilinearOptimization;
    int __cudaReserved[14];
    ::sim::TexData sim_data;
    int sim_bound;
};

template <class T, int dim = cudaTextureType1D, enum cudaTextureReadMode mode = cudaReadModeElementType>
struct texture : public textureReference {
    texture(int norm = 0, enum cudaTextureFilterMode filter = cudaFilterModePoint,
            enum cudaTextureAddressMode addr = cudaAddressModeClamp)
        : texture(norm, filter, addr, cudaCreateChannelDesc<T>()) {}
    texture(int norm, enum cudaTextureFilterMode filter, enum cudaTextureAddressMode addr,
            struct cudaChannelFormatDesc desc)
        : textureReference() {
        normalized = norm;
        filterMode = filter;
        addressMode[0] = addressMode[1] = addressMode[2] = addr;
        channelDesc = desc;
        mipmapFilterMode = cudaFilterModePoint;
    }
};

extern "C" {
SIM_API cudaError_t cudaBindTexture(size_t* offset, const struct textureReference* texref, const void* devPtr,
                                    const struct cudaChannelFormatDesc* desc, size_t size = UINT_MAX);
SIM_API cudaError_t cudaBindTexture2D(size_t* offset, const struct textureReference* texref, const void* devPtr,
                                      const struct cudaChannelFormatDesc* desc, size_t width, size_t height,
                                      size_t pitch);
SIM_API cudaError_t cudaBindTextureToArray(const struct textureReference* texref, cudaArray_const_t array,
                                           const struct cudaChannelFormatDesc* desc);
SIM_API cudaError_t cudaUnbindTexture(const struct textureReference* texref);
}

template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaBindTexture(size_t* offset, const texture<T, dim, mode>& tex, const void* devPtr,
                                          const struct cudaChannelFormatDesc& desc, size_t size = UINT_MAX) {
    return cudaBindTexture(offset, &tex, devPtr, &desc, size);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaBindTexture(size_t* offset, const texture<T, dim, mode>& tex, const void* devPtr,
                                          size_t size = UINT_MAX) {
    return cudaBindTexture(offset, &tex, devPtr, &tex.channelDesc, size);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaBindTexture2D(size_t* offset, const texture<T, dim, mode>& tex, const void* devPtr,
                                            const struct cudaChannelFormatDesc& desc, size_t width, size_t height,
                                            size_t pitch) {
    return cudaBindTexture2D(offset, &tex, devPtr, &desc, width, height, pitch);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaBindTexture2D(size_t* offset, const texture<T, dim, mode>& tex, const void* devPtr,
                                            size_t width, size_t height, size_t pitch) {
    return cudaBindTexture2D(offset, &tex, devPtr, &tex.channelDesc, width, height, pitch);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaBindTextureToArray(const texture<T, dim, mode>& tex, cudaArray_const_t array,
                                                 const struct cudaChannelFormatDesc& desc) {
    return cudaBindTextureToArray(&tex, array, &desc);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaBindTextureToArray(const texture<T, dim, mode>& tex, cudaArray_const_t array) {
    return cudaBindTextureToArray(&tex, array, array != nullptr ? &array->desc : &tex.channelDesc);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaUnbindTexture(const texture<T, dim, mode>& tex) {
    return cudaUnbindTexture(&tex);
}

namespace sim {
template <class T, enum cudaTextureReadMode mode>
struct texref_ret {
    typedef T type;
};
template <class T>
struct texref_ret<T, cudaReadModeNormalizedFloat> {
    typedef typename tex_float_of<T>::type type;
};
static inline TexSampler texref_sampler(const textureReference& r, int read) {
    TexSampler s;
    for (int k = 0; k < 3; k++) s.addr[k] = r.addressMode[k];
    s.filter = r.filterMode;
    s.read = read;
    s.normalized = r.normalized;
    for (int c = 0; c < 4; c++) s.border[c] = 0.0f;
    return s;
}
static inline const TexData& texref_data(const textureReference& r, const char* file, int line) {
    if (!r.sim_bound) texture_fault("texture reference fetched while not bound (cudaBindTexture*)", file, line);
    return r.sim_data;
}
}  // namespace sim

// Fetches through texture references: the return type follows the reference's read mode.
#define SIM_TEXREF_RET typename ::sim::texref_ret<T, mode>::type
template <class T, int dim, enum cudaTextureReadMode mode>
static inline SIM_TEXREF_RET tex1Dfetch(const texture<T, dim, mode>& r, int x, SIM_TEX_SITE) {
    return ::sim::tex_linear_fetch<SIM_TEXREF_RET>(::sim::texref_data(r, sim_file, sim_line), mode, x);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline SIM_TEXREF_RET tex1D(const texture<T, dim, mode>& r, float x, SIM_TEX_SITE) {
    return ::sim::tex_fetch<SIM_TEXREF_RET>(::sim::texref_data(r, sim_file, sim_line), ::sim::texref_sampler(r, mode),
                                            1, x, 0, 0, -1);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline SIM_TEXREF_RET tex2D(const texture<T, dim, mode>& r, float x, float y, SIM_TEX_SITE) {
    return ::sim::tex_fetch<SIM_TEXREF_RET>(::sim::texref_data(r, sim_file, sim_line), ::sim::texref_sampler(r, mode),
                                            2, x, y, 0, -1);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline SIM_TEXREF_RET tex3D(const texture<T, dim, mode>& r, float x, float y, float z, SIM_TEX_SITE) {
    return ::sim::tex_fetch<SIM_TEXREF_RET>(::sim::texref_data(r, sim_file, sim_line), ::sim::texref_sampler(r, mode),
                                            3, x, y, z, -1);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline SIM_TEXREF_RET tex1DLayered(const texture<T, dim, mode>& r, float x, int layer, SIM_TEX_SITE) {
    return ::sim::tex_fetch<SIM_TEXREF_RET>(::sim::texref_data(r, sim_file, sim_line), ::sim::texref_sampler(r, mode),
                                            1, x, 0, 0, layer);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline SIM_TEXREF_RET tex2DLayered(const texture<T, dim, mode>& r, float x, float y, int layer,
                                          SIM_TEX_SITE) {
    return ::sim::tex_fetch<SIM_TEXREF_RET>(::sim::texref_data(r, sim_file, sim_line), ::sim::texref_sampler(r, mode),
                                            2, x, y, 0, layer);
}
#undef SIM_TEXREF_RET
#undef SIM_TEX_OBJ
#undef SIM_TEX_SITE

#endif  // SIM_TEXTURES_H
