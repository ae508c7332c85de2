// Textures, surfaces and CUDA arrays (included by host_api.h): what the simulator's CUDA array
// holds (NVIDIA declares the type without its members), the device fetches
// (sim_texture_fetch.h), and here the texture references of older CUDA, which CUDA 12 removed.
#ifndef SIM_TEXTURES_H
#define SIM_TEXTURES_H


// A CUDA array: its format, extent and flags, and where its elements live.
struct cudaArray {
    cudaChannelFormatDesc desc;
    cudaExtent extent;
    unsigned int flags;
    size_t elem;  // bytes per element
    size_t w, h, d;
    size_t pitch, slice;
    unsigned char* data;
    bool mip_level;  // a level of a mipmapped array: cudaFreeMipmappedArray frees it
};
// After cudaArray: the device fetches read its members.
#include "sim_texture_fetch.h"

// A mipmapped array: its levels, each a CUDA array half the size of the one before.
struct cudaMipmappedArray {
    unsigned int levels;
    cudaArray* level[::__sim::kTexMaxLevels];
};

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
    ::__sim::TexData sim_data;
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

namespace __sim {
template <class T, enum cudaTextureReadMode mode>
struct texref_ret {
    typedef T type;
};
template <class T>
struct texref_ret<T, cudaReadModeNormalizedFloat> {
    typedef typename tex_float_of<T>::type type;
};
// What tex2Dgather of a texture reference returns: four of the element's component type, or
// float4 in cudaReadModeNormalizedFloat.
template <class C>
struct tex_vec4_of;
template <>
struct tex_vec4_of<char> {
    typedef char4 type;
};
template <>
struct tex_vec4_of<signed char> {
    typedef char4 type;
};
template <>
struct tex_vec4_of<unsigned char> {
    typedef uchar4 type;
};
template <>
struct tex_vec4_of<short> {
    typedef short4 type;
};
template <>
struct tex_vec4_of<unsigned short> {
    typedef ushort4 type;
};
template <>
struct tex_vec4_of<int> {
    typedef int4 type;
};
template <>
struct tex_vec4_of<unsigned int> {
    typedef uint4 type;
};
template <>
struct tex_vec4_of<float> {
    typedef float4 type;
};
template <class T, enum cudaTextureReadMode mode>
struct texref_gather_ret {
    typedef typename tex_vec4_of<typename tex_vec<T>::comp>::type type;
};
template <class T>
struct texref_gather_ret<T, cudaReadModeNormalizedFloat> {
    typedef float4 type;
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
}  // namespace __sim

// Fetches through texture references: the return type follows the reference's read mode. Each
// takes the caller's file and line (for the report of a fetch while nothing is bound).
#define SIM_TEX_SITE const char *sim_file = __builtin_FILE(), int sim_line = __builtin_LINE()
#define SIM_TEXREF_RET typename ::__sim::texref_ret<T, mode>::type
template <class T, int dim, enum cudaTextureReadMode mode>
static inline SIM_TEXREF_RET tex1Dfetch(const texture<T, dim, mode>& r, int x, SIM_TEX_SITE) {
    return ::__sim::tex_linear_fetch<SIM_TEXREF_RET>(::__sim::texref_data(r, sim_file, sim_line), mode, x);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline SIM_TEXREF_RET tex1D(const texture<T, dim, mode>& r, float x, SIM_TEX_SITE) {
    return ::__sim::tex_fetch<SIM_TEXREF_RET>(::__sim::texref_data(r, sim_file, sim_line), ::__sim::texref_sampler(r, mode),
                                            1, x, 0, 0, -1);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline SIM_TEXREF_RET tex2D(const texture<T, dim, mode>& r, float x, float y, SIM_TEX_SITE) {
    return ::__sim::tex_fetch<SIM_TEXREF_RET>(::__sim::texref_data(r, sim_file, sim_line), ::__sim::texref_sampler(r, mode),
                                            2, x, y, 0, -1);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline SIM_TEXREF_RET tex3D(const texture<T, dim, mode>& r, float x, float y, float z, SIM_TEX_SITE) {
    return ::__sim::tex_fetch<SIM_TEXREF_RET>(::__sim::texref_data(r, sim_file, sim_line), ::__sim::texref_sampler(r, mode),
                                            3, x, y, z, -1);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline SIM_TEXREF_RET tex1DLayered(const texture<T, dim, mode>& r, float x, int layer, SIM_TEX_SITE) {
    return ::__sim::tex_fetch<SIM_TEXREF_RET>(::__sim::texref_data(r, sim_file, sim_line), ::__sim::texref_sampler(r, mode),
                                            1, x, 0, 0, layer);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline SIM_TEXREF_RET tex2DLayered(const texture<T, dim, mode>& r, float x, float y, int layer,
                                          SIM_TEX_SITE) {
    return ::__sim::tex_fetch<SIM_TEXREF_RET>(::__sim::texref_data(r, sim_file, sim_line), ::__sim::texref_sampler(r, mode),
                                            2, x, y, 0, layer);
}
template <class T, enum cudaTextureReadMode mode>
static inline typename ::__sim::texref_gather_ret<T, mode>::type tex2Dgather(
    const texture<T, cudaTextureType2D, mode>& r, float x, float y, int comp = 0, SIM_TEX_SITE) {
    double v[4];
    ::__sim::tex_gather_checked(::__sim::texref_data(r, sim_file, sim_line), ::__sim::texref_sampler(r, mode), 0, x,
                                y, comp, v, sim_file, sim_line);
    return ::__sim::tex_make<typename ::__sim::texref_gather_ret<T, mode>::type>(v);
}
#undef SIM_TEXREF_RET
#undef SIM_TEX_SITE

#endif  // SIM_TEXTURES_H
