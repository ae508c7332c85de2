// Texture fetches and surface accesses in device code (included by sim_textures.h): how a
// resource is sampled, and the tex*/surf* functions, which run inline in the kernel around three
// out-of-line cores (tex_texel, tex_sample, surf_addr; see tex_texel for why). The
// SIM_TEX_SITE and SIM_TEX_OBJ macros stay defined for sim_textures.h's texture references,
// which undefines them.
//
// A fetch follows the CUDA Programming Guide's "Texture Fetching" appendix: normalized
// coordinates are scaled by the size, wrap and mirror act on normalized coordinates (without
// them they clamp), linear filtering uses x_B = x - 0.5 with the fraction rounded to 1.8 fixed
// point, and every texel index is resolved by the address mode before memory is read, so a
// fetch never reads outside its resource.
#ifndef SIM_TEXTURE_FETCH_H
#define SIM_TEXTURE_FETCH_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

namespace __sim {

// A resolved resource: where texel (x, y, z) lives and how its channels decode.
struct TexData {
    const unsigned char* base;
    size_t pitch, slice;  // bytes between rows and between slices (layers, cube faces)
    int w, h, d;          // texels; h and d are 1 when unused
    int layers;           // layered and cubemap arrays: number of layers (faces count for cubemaps)
    int nch, bits, kind;  // channels, bits per channel, cudaChannelFormatKind
    int elem;             // bytes per texel
    int linear;           // a cudaResourceTypeLinear resource (tex1Dfetch: out of range reads 0)
};
// How a fetch samples (from a cudaTextureDesc or a texture reference's fields).
struct TexSampler {
    int addr[3];
    int filter;
    int read;
    int normalized;
    float border[4];
};
// Levels a mipmapped array may have: 1 + log2 of the largest extent CUDA allows (65536).
constexpr int kTexMaxLevels = 17;
// A mipmapped texture's level selection (cudaTextureDesc's mipmap fields).
struct TexMip {
    int levels;  // 0: not mipmapped
    int filter;  // cudaFilterModePoint: the nearest level; linear: a blend of the two around the LOD
    float bias, min_clamp, max_clamp;
    TexData level[kTexMaxLevels];
};
struct TexObj {
    TexData data;
    TexSampler s;
    TexMip mip;
    cudaResourceDesc res;
    cudaTextureDesc desc;
};
struct SurfObj {
    TexData data;
    cudaResourceDesc res;
};

// A fetch through a null or destroyed object, or a surface access out of bounds with
// cudaBoundaryModeTrap: reported, and the kernel stops as on a GPU fault (textures.cpp).
SIM_API __attribute__((noreturn)) void texture_fault(const char* what, const char* file, int line);
// A fetch form the simulator does not sample (sparse textures, some mipmapped forms): reported as
// a fault.
SIM_API __attribute__((noreturn)) void texture_unsupported(const char* op, const char* file, int line);

// The component type and count of each type a fetch may return.
template <class T>
struct tex_vec;
#define SIM_TEX_VEC(T, C, N)              \
    template <>                           \
    struct tex_vec<T> {                   \
        typedef C comp;                   \
        static constexpr int n = N;       \
        typedef float float_type;         \
    };
#define SIM_TEX_VECS(C, V)                \
    SIM_TEX_VEC(V##1, C, 1)               \
    SIM_TEX_VEC(V##2, C, 2)               \
    SIM_TEX_VEC(V##4, C, 4)
SIM_TEX_VEC(char, char, 1)
SIM_TEX_VEC(signed char, signed char, 1)
SIM_TEX_VEC(unsigned char, unsigned char, 1)
SIM_TEX_VEC(short, short, 1)
SIM_TEX_VEC(unsigned short, unsigned short, 1)
SIM_TEX_VEC(int, int, 1)
SIM_TEX_VEC(unsigned int, unsigned int, 1)
SIM_TEX_VEC(float, float, 1)
SIM_TEX_VECS(signed char, char)
SIM_TEX_VECS(unsigned char, uchar)
SIM_TEX_VECS(short, short)
SIM_TEX_VECS(unsigned short, ushort)
SIM_TEX_VECS(int, int)
SIM_TEX_VECS(unsigned int, uint)
SIM_TEX_VECS(float, float)
#undef SIM_TEX_VECS
#undef SIM_TEX_VEC

// What a texture reference of element type T returns in cudaReadModeNormalizedFloat.
template <class T, int N = tex_vec<T>::n>
struct tex_float_of {
    typedef float type;
};
template <class T>
struct tex_float_of<T, 2> {
    typedef float2 type;
};
template <class T>
struct tex_float_of<T, 4> {
    typedef float4 type;
};
template <class T>
struct tex_float_of<T, 1> {
    typedef typename std::conditional<std::is_arithmetic<T>::value, float, float1>::type type;
};

template <class T>
static inline T tex_make(const double* v) {
    typedef typename tex_vec<T>::comp C;
    C c[4];
    for (int i = 0; i < tex_vec<T>::n; i++) c[i] = (C)v[i];
    T out;
    std::memcpy(&out, c, sizeof(T));
    return out;
}

// IEEE binary16 bits to float (16-bit float channels read as float).
static inline float tex_half_to_float(unsigned short h) {
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v;
    if (e == 0) v = std::ldexp((float)m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = std::ldexp((float)(m | 0x400), e - 25);
    return (h & 0x8000) ? -v : v;
}

// One channel of one texel, in the read mode's domain.
static inline double tex_channel(const unsigned char* p, int bits, int kind, int normalized_read) {
    if (kind == cudaChannelFormatKindFloat) {
        if (bits == 16) {
            unsigned short h;
            std::memcpy(&h, p, 2);
            return tex_half_to_float(h);
        }
        float f;
        std::memcpy(&f, p, 4);
        return f;
    }
    double v;
    const bool sgn = kind == cudaChannelFormatKindSigned;
    if (bits == 8) {
        v = sgn ? (double)*(const signed char*)p : (double)*p;
    } else if (bits == 16) {
        short s;
        std::memcpy(&s, p, 2);
        v = sgn ? (double)s : (double)(unsigned short)s;
    } else {
        int s;
        std::memcpy(&s, p, 4);
        v = sgn ? (double)s : (double)(unsigned int)s;
    }
    if (!normalized_read) return v;
    const double top = sgn ? (double)((1 << (bits - 1)) - 1) : (double)((1 << bits) - 1);
    const double r = v / top;
    return r < -1.0 ? -1.0 : r;  // the most negative signed value reads as -1, like its neighbour
}

// The cores of a fetch (this, tex_sample, surf_addr) are kept out of line: a barrier-free kernel
// is inlined whole into its block loop (launch.h's run_plain is flatten), and inlined there the
// sampling code was copied into every fetch of every kernel, twice, which made a program with a
// few dozen fetches take minutes to compile (memcheck). Static, so each program still compiles
// them itself, in its own mode: the sanitizers check the texel reads as before.
__attribute__((noinline)) static inline void tex_texel(const TexData& t, int x, int y, int z, int normalized_read,
                                                       double* out) {
    const unsigned char* p = t.base + (size_t)z * t.slice + (size_t)y * t.pitch + (size_t)x * t.elem;
    const int step = t.bits / 8;
    for (int c = 0; c < 4; c++) out[c] = c < t.nch ? tex_channel(p + c * step, t.bits, t.kind, normalized_read) : 0.0;
}

// floor(x) as an int that stays far from overflow (NaN reads as 0).
static inline int tex_floor(float x) {
    if (!(x == x)) return 0;
    if (x < -1.0e9f) return -1000000000;
    if (x > 1.0e9f) return 1000000000;
    return (int)std::floor(x);
}

// The address mode that applies: wrap and mirror need normalized coordinates, else they clamp.
static inline int tex_mode(const TexSampler& s, int k) {
    const int m = s.addr[k];
    if (!s.normalized && (m == cudaAddressModeWrap || m == cudaAddressModeMirror)) return cudaAddressModeClamp;
    return m;
}

// Texel-space coordinate: normalized coordinates are wrapped or mirrored, then scaled.
static inline float tex_coord(float x, int n, int mode, int normalized) {
    if (!normalized) return x;
    if (mode == cudaAddressModeWrap) {
        x = x - std::floor(x);
    } else if (mode == cudaAddressModeMirror) {
        const float f = std::floor(x);
        const float fr = x - f;
        x = (std::fmod(f, 2.0f) == 0.0f) ? fr : 1.0f - fr;
    }
    return x * (float)n;
}

// A texel index inside [0, n) by the address mode; false when it falls on the border.
static inline bool tex_index(int i, int n, int mode, int* out) {
    if (i >= 0 && i < n) {
        *out = i;
        return true;
    }
    switch (mode) {
        case cudaAddressModeBorder: return false;
        case cudaAddressModeWrap: *out = ((i % n) + n) % n; return true;
        case cudaAddressModeMirror: {
            int m = ((i % (2 * n)) + 2 * n) % (2 * n);
            *out = m < n ? m : 2 * n - 1 - m;
            return true;
        }
        default: *out = i < 0 ? 0 : n - 1; return true;
    }
}

static inline int tex_layer(const TexData& t, int layer) {
    return layer < 0 ? 0 : (layer >= t.layers ? t.layers - 1 : layer);
}

// Samples `dims` coordinates (1..3); `layer` selects the row (1-D layered) or slice (2-D
// layered, cubemap face), -1 when the texture is not layered.
__attribute__((noinline)) static inline void tex_sample(const TexData& t, const TexSampler& s, int dims,
                                                        const float* coord, int layer, double* out) {
    const int n[3] = {t.w, t.h, t.d};
    float x[3] = {0, 0, 0};
    int mode[3];
    for (int k = 0; k < dims; k++) {
        mode[k] = tex_mode(s, k);
        x[k] = tex_coord(coord[k], n[k], mode[k], s.normalized);
    }
    const int nread = s.read == cudaReadModeNormalizedFloat;
    auto fetch = [&](const int* i, double* v) {
        int r[3] = {0, 0, 0};
        for (int k = 0; k < dims; k++) {
            if (!tex_index(i[k], n[k], mode[k], &r[k])) {
                for (int c = 0; c < 4; c++) v[c] = s.border[c];
                return;
            }
        }
        if (layer >= 0) r[dims] = tex_layer(t, layer);
        tex_texel(t, r[0], r[1], r[2], nread, v);
    };
    if (s.filter != cudaFilterModeLinear) {
        int i[3];
        for (int k = 0; k < 3; k++) i[k] = tex_floor(x[k]);
        fetch(i, out);
        return;
    }
    // Linear: the weights are the fractions of x - 0.5, rounded to 8 fractional bits.
    int i0[3];
    float a[3];
    for (int k = 0; k < dims; k++) {
        const float xb = x[k] - 0.5f;
        i0[k] = tex_floor(xb);
        const float fr = xb - std::floor(xb);
        a[k] = (fr == fr) ? std::nearbyint(fr * 256.0f) / 256.0f : 0.0f;
    }
    // Corner `corner` of the 2^dims texels around x: its indices in `i`, its weight returned.
    auto corner_of = [&](int corner, int* i) {
        float wgt = 1.0f;
        for (int k = 0; k < dims; k++) {
            const int hi = (corner >> k) & 1;
            i[k] = i0[k] + hi;
            wgt *= hi ? a[k] : 1.0f - a[k];
        }
        return wgt;
    };
    float acc[4] = {0, 0, 0, 0};
    if (t.nch == 1 && t.bits == 32 && t.kind == cudaChannelFormatKindFloat) {
        // A float texture's texel is one load: read here, not through tex_texel's channel loop,
        // whose doubles the caller read back as one vector (a store-forwarding stall at each of
        // the corners). The same products in the same order, so the same sums; a texel's missing
        // channels add wgt * 0, which leaves a sum that starts at +0 as it was.
        for (int corner = 0; corner < (1 << dims); corner++) {
            int i[3] = {0, 0, 0};
            const float wgt = corner_of(corner, i);
            int r[3] = {0, 0, 0};
            bool border = false;
            for (int k = 0; k < dims && !border; k++) border = !tex_index(i[k], n[k], mode[k], &r[k]);
            if (border) {
                for (int c = 0; c < 4; c++) acc[c] += wgt * (float)(double)s.border[c];
                continue;
            }
            if (layer >= 0) r[dims] = tex_layer(t, layer);
            float f;
            std::memcpy(&f, t.base + (size_t)r[2] * t.slice + (size_t)r[1] * t.pitch + (size_t)r[0] * t.elem, 4);
            acc[0] += wgt * f;
        }
        for (int c = 0; c < 4; c++) out[c] = acc[c];
        return;
    }
    for (int corner = 0; corner < (1 << dims); corner++) {
        int i[3] = {0, 0, 0};
        const float wgt = corner_of(corner, i);
        double v[4];
        fetch(i, v);
        for (int c = 0; c < 4; c++) acc[c] += wgt * (float)v[c];
    }
    for (int c = 0; c < 4; c++) out[c] = acc[c];
}

static inline const TexObj* tex_obj(cudaTextureObject_t t, const char* file, int line) {
    if (t == 0) texture_fault("texture fetch through a null cudaTextureObject_t", file, line);
    return reinterpret_cast<const TexObj*>((uintptr_t)t);
}

// Cubemap direction (x, y, z) to a face and normalized face coordinates (Programming Guide,
// "Cubemap Textures").
static inline int tex_cube_face(float x, float y, float z, float* u, float* v) {
    const float ax = std::fabs(x), ay = std::fabs(y), az = std::fabs(z);
    int face;
    float m, s, t;
    if (ax >= ay && ax >= az) {
        m = ax;
        face = x >= 0 ? 0 : 1;
        s = x >= 0 ? -z : z;
        t = -y;
    } else if (ay >= az) {
        m = ay;
        face = y >= 0 ? 2 : 3;
        s = x;
        t = y >= 0 ? z : -z;
    } else {
        m = az;
        face = z >= 0 ? 4 : 5;
        s = z >= 0 ? x : -x;
        t = -y;
    }
    if (m == 0.0f) m = 1.0f;
    *u = (s / m + 1.0f) * 0.5f;
    *v = (t / m + 1.0f) * 0.5f;
    return face;
}

// The texel values of a fetch at (x, y, z); tex_fetch converts them to the element type.
__attribute__((noinline)) static inline void tex_values(const TexData& t, const TexSampler& s, int dims, float x,
                                                        float y, float z, int layer, double* v) {
    const float c[3] = {x, y, z};
    tex_sample(t, s, dims, c, layer, v);
}

template <class T>
static inline T tex_fetch(const TexData& t, const TexSampler& s, int dims, float x, float y, float z, int layer) {
    double v[4];
    tex_values(t, s, dims, x, y, z, layer, v);
    return tex_make<T>(v);
}

// A mipmapped texture's fetch at level of detail `lod` (the Lod forms; 0 for the plain forms,
// which have no derivatives to take one from in a kernel): the LOD plus the bias, clamped to the
// descriptor's range and to the levels there are; point mipmap filtering samples the nearest
// level, linear blends the two levels around it by the LOD's fraction. Kept out of line: every
// fetch form of every element type calls it, and inlining it into each multiplies compile time.
__attribute__((noinline)) static void tex_sample_mip(const TexObj& o, int dims, const float* c, int layer, float lod,
                                                     double* v) {
    float l = lod + o.mip.bias;
    l = l < o.mip.min_clamp ? o.mip.min_clamp : (l > o.mip.max_clamp ? o.mip.max_clamp : l);
    const float top = (float)(o.mip.levels - 1);
    l = !(l > 0.0f) ? 0.0f : (l > top ? top : l);
    if (o.mip.filter != cudaFilterModeLinear) {
        tex_sample(o.mip.level[(int)std::floor(l + 0.5f)], o.s, dims, c, layer, v);
        return;
    }
    const int l0 = (int)std::floor(l);
    const float f = l - (float)l0;
    tex_sample(o.mip.level[l0], o.s, dims, c, layer, v);
    if (f > 0.0f && l0 + 1 < o.mip.levels) {
        double w[4];
        tex_sample(o.mip.level[l0 + 1], o.s, dims, c, layer, w);
        for (int k = 0; k < 4; k++) v[k] = (float)((1.0f - f) * (float)v[k] + f * (float)w[k]);
    }
}

// The texel values of a fetch of a texture that may be mipmapped: one level reads it whatever
// the LOD.
__attribute__((noinline)) static inline void tex_values_lod(const TexObj& o, int dims, float x, float y, float z,
                                                            int layer, float lod, double* v) {
    const float c[3] = {x, y, z};
    if (o.mip.levels == 0)
        tex_sample(o.data, o.s, dims, c, layer, v);
    else
        tex_sample_mip(o, dims, c, layer, lod, v);
}

// The texel values of a cubemap fetch in direction (x, y, z).
__attribute__((noinline)) static inline void tex_cube_values(const TexData& t, const TexSampler& s, float x, float y,
                                                             float z, int layer, double* v) {
    float fu, fv;
    const int face = tex_cube_face(x, y, z, &fu, &fv);
    TexSampler cs = s;
    cs.normalized = 1;
    cs.addr[0] = cs.addr[1] = cudaAddressModeClamp;
    tex_values(t, cs, 2, fu, fv, 0, layer * 6 + face, v);
}

// The texel values of tex1Dfetch of linear memory: out of range reads 0.
static inline void tex_linear_values(const TexData& t, int read, int i, double* v) {
    for (int c = 0; c < 4; c++) v[c] = 0;
    if (i >= 0 && i < t.w) tex_texel(t, i, 0, 0, read == cudaReadModeNormalizedFloat, v);
}

template <class T>
static inline T tex_linear_fetch(const TexData& t, int read, int i) {
    double v[4];
    tex_linear_values(t, read, i, v);
    return tex_make<T>(v);
}

// A surface access: the address of sizeof(T) bytes at byte x of row y of slice z, after the
// boundary mode; null for cudaBoundaryModeZero out of bounds.
__attribute__((noinline)) static inline unsigned char* surf_addr(cudaSurfaceObject_t so, int xb, int y, int z,
                                                                 int dims, size_t size, int mode, const char* what,
                                                                 const char* file, int line) {
    if (so == 0) texture_fault("surface access through a null cudaSurfaceObject_t", file, line);
    const TexData& t = reinterpret_cast<const SurfObj*>((uintptr_t)so)->data;
    const long row = (long)t.w * t.elem;
    const long n[3] = {row - (long)size, (long)t.h - 1, (long)(t.layers > 0 ? t.layers : t.d) - 1};
    long c[3] = {xb, y, z};
    for (int k = 0; k < dims; k++) {
        if (c[k] >= 0 && c[k] <= n[k]) continue;
        if (mode == cudaBoundaryModeZero) return nullptr;
        if (mode == cudaBoundaryModeClamp && n[k] >= 0) {
            c[k] = c[k] < 0 ? 0 : (k == 0 ? n[k] / t.elem * t.elem : n[k]);
            continue;
        }
        char msg[160];
        std::snprintf(msg, sizeof msg, "%s out of bounds with cudaBoundaryModeTrap (x=%d bytes, y=%d, z=%d)", what, xb,
                      y, z);
        texture_fault(msg, file, line);
    }
    return const_cast<unsigned char*>(t.base) + (size_t)c[2] * t.slice + (size_t)c[1] * t.pitch + (size_t)c[0];
}

template <class T>
static inline T surf_read(cudaSurfaceObject_t so, int x, int y, int z, int dims, int mode, const char* what,
                          const char* file, int line) {
    T out;
    std::memset(&out, 0, sizeof(T));
    if (const unsigned char* p = surf_addr(so, x, y, z, dims, sizeof(T), mode, what, file, line))
        std::memcpy(&out, p, sizeof(T));
    return out;
}
template <class T>
static inline void surf_write(const T& v, cudaSurfaceObject_t so, int x, int y, int z, int dims, int mode,
                              const char* what, const char* file, int line) {
    if (unsigned char* p = surf_addr(so, x, y, z, dims, sizeof(T), mode, what, file, line))
        std::memcpy(p, &v, sizeof(T));
}

}  // namespace __sim

#include "sim_texture_gather.h"

// ---- device fetches and surface accesses through objects ------------------------------------
// NVIDIA's <texture_indirect_functions.h> and <surface_indirect_functions.h> define every tex*
// and surf* function of an object as a call of __nv_tex_surf_handler("__itex2D", &result, obj,
// coordinates...), a builtin of nvcc's front end; here it is this template. The operation's name
// is a string literal, so each comparison below folds away once the call is inlined.
namespace __sim {
// g++ folds the builtin for two literals at -O1 too (the checkers' builds), where it did not fold
// a loop over the characters.
constexpr bool op_is(const char* a, const char* b) { return __builtin_strcmp(a, b) == 0; }
// A coordinate as a float; the gradients some forms pass by address are not used.
template <class T>
static inline float coord(T x) {
    if constexpr (std::is_arithmetic<T>::value) {
        return (float)x;
    } else {
        return 0.0f;
    }
}
// Texture fetches. The Lod forms of 1-D, 2-D and 3-D textures choose a mipmapped texture's level
// (tex_values_lod); a Grad form of a mipmapped texture is not modelled (its gradients would pick
// the level); other textures have one level, which every form reads. Each branch is one call
// and the values are converted once: at -O1 (the checkers' builds) the comparisons do not fold,
// and every branch is compiled at every fetch.
template <class R, class... A>
static inline void tex_op(const char* op, R* r, cudaTextureObject_t t, A... a) {
    const Site site = take_site();
    const TexObj& o = *tex_obj(t, site.file, site.line);
    const float c[sizeof...(A) + 1] = {coord(a)...};
    const bool grad = op_is(op, "__itex1DGrad") || op_is(op, "__itex2DGrad_v2") || op_is(op, "__itex3DGrad_v2");
    if (o.mip.levels != 0 && grad) texture_unsupported(op, site.file, site.line);
    double v[4];
    if (op_is(op, "__itex1Dfetch")) {
        tex_linear_values(o.data, o.s.read, (int)c[0], v);
    } else if (op_is(op, "__itex1D") || op_is(op, "__itex1DGrad")) {
        tex_values_lod(o, 1, c[0], 0, 0, -1, 0.0f, v);
    } else if (op_is(op, "__itex1DLod")) {
        tex_values_lod(o, 1, c[0], 0, 0, -1, c[1], v);
    } else if (op_is(op, "__itex2D") || op_is(op, "__itex2DGrad_v2")) {
        tex_values_lod(o, 2, c[0], c[1], 0, -1, 0.0f, v);
    } else if (op_is(op, "__itex2DLod")) {
        tex_values_lod(o, 2, c[0], c[1], 0, -1, c[2], v);
    } else if (op_is(op, "__itex3D") || op_is(op, "__itex3DGrad_v2")) {
        tex_values_lod(o, 3, c[0], c[1], c[2], -1, 0.0f, v);
    } else if (op_is(op, "__itex3DLod")) {
        tex_values_lod(o, 3, c[0], c[1], c[2], -1, c[3], v);
    } else if (op_is(op, "__itex2Dgather")) {
        tex_gather_checked(o.data, o.s, o.mip.levels, c[0], c[1], (int)c[2], v, site.file, site.line);
    } else if (o.mip.levels != 0) {
        texture_unsupported(op, site.file, site.line);  // layered and cubemap mipmaps: not modelled
    } else if (op_is(op, "__itex1DLayered") || op_is(op, "__itex1DLayeredLod") ||
               op_is(op, "__itex1DLayeredGrad")) {
        tex_values(o.data, o.s, 1, c[0], 0, 0, (int)c[1], v);
    } else if (op_is(op, "__itex2DLayered") || op_is(op, "__itex2DLayeredLod") ||
               op_is(op, "__itex2DLayeredGrad_v2")) {
        tex_values(o.data, o.s, 2, c[0], c[1], 0, (int)c[2], v);
    } else if (op_is(op, "__itexCubemap") || op_is(op, "__itexCubemapLod") || op_is(op, "__itexCubemapGrad_v2")) {
        tex_cube_values(o.data, o.s, c[0], c[1], c[2], 0, v);
    } else if (op_is(op, "__itexCubemapLayered") || op_is(op, "__itexCubemapLayeredLod") ||
               op_is(op, "__itexCubemapLayeredGrad_v2")) {
        tex_cube_values(o.data, o.s, c[0], c[1], c[2], (int)c[3], v);
    } else {
        texture_unsupported(op, site.file, site.line);
    }
    *r = tex_make<R>(v);
}
// Surface reads and writes (x in bytes); the last argument is the boundary mode.
template <class R, class... A>
static inline void surf_op(const char* op, R* r, cudaSurfaceObject_t so, A... a) {
    const Site site = take_site();
    const int c[sizeof...(A)] = {(int)a...};
    const int mode = c[sizeof...(A) - 1];
    const char* what = op + 3;  // "surf2Dread" of "__isurf2Dread"
    if (op_is(op, "__isurf1Dread")) {
        *r = surf_read<R>(so, c[0], 0, 0, 1, mode, what, site.file, site.line);
    } else if (op_is(op, "__isurf2Dread") || op_is(op, "__isurf1DLayeredread")) {
        *r = surf_read<R>(so, c[0], c[1], 0, 2, mode, what, site.file, site.line);
    } else if (op_is(op, "__isurf3Dread") || op_is(op, "__isurf2DLayeredread") ||
               op_is(op, "__isurfCubemapread") || op_is(op, "__isurfCubemapLayeredread")) {
        *r = surf_read<R>(so, c[0], c[1], c[2], 3, mode, what, site.file, site.line);
    } else if (op_is(op, "__isurf1Dwrite_v2")) {
        surf_write<R>(*r, so, c[0], 0, 0, 1, mode, what, site.file, site.line);
    } else if (op_is(op, "__isurf2Dwrite_v2") || op_is(op, "__isurf1DLayeredwrite_v2")) {
        surf_write<R>(*r, so, c[0], c[1], 0, 2, mode, what, site.file, site.line);
    } else if (op_is(op, "__isurf3Dwrite_v2") || op_is(op, "__isurf2DLayeredwrite_v2") ||
               op_is(op, "__isurfCubemapwrite_v2") || op_is(op, "__isurfCubemapLayeredwrite_v2")) {
        surf_write<R>(*r, so, c[0], c[1], c[2], 3, mode, what, site.file, site.line);
    } else {
        texture_unsupported(op, site.file, site.line);
    }
}
}  // namespace __sim

template <class R, class... A>
static inline void __nv_tex_surf_handler(const char* op, R* r, unsigned long long obj, A... a) {
    if (op[3] == 's') {
        ::__sim::surf_op(op, r, obj, a...);
    } else {
        ::__sim::tex_op(op, r, obj, a...);
    }
}

#endif  // SIM_TEXTURE_FETCH_H
