// CUDA arrays, their copies, texture and surface objects and the legacy texture references
// (sim_textures.h has the types and the device fetches). An array is host memory with packed
// rows; an object is a heap record whose address is its handle.
#include "sim_internal.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace {

using __sim::TexData;

std::mutex g_tex_mu;  // guards the live sets below
std::set<const void*> g_arrays, g_mipmaps, g_texobjs, g_surfobjs;

bool live(const std::set<const void*>& s, const void* p) {
    std::lock_guard<std::mutex> lock(g_tex_mu);
    return p != nullptr && s.count(p) != 0;
}

// Channels and bits of a descriptor CUDA accepts for arrays and textures: 1, 2 or 4 channels of
// 8, 16 or 32 bits each (16 or 32 for float); false otherwise.
bool channel_info(const cudaChannelFormatDesc& d, int* nch, int* bits) {
    const int b[4] = {d.x, d.y, d.z, d.w};
    int n = 0;
    while (n < 4 && b[n] > 0) n++;
    for (int i = n; i < 4; i++)
        if (b[i] != 0) return false;
    if (n != 1 && n != 2 && n != 4) return false;
    for (int i = 1; i < n; i++)
        if (b[i] != b[0]) return false;
    if (b[0] != 8 && b[0] != 16 && b[0] != 32) return false;
    if (d.f == cudaChannelFormatKindFloat) {
        if (b[0] == 8) return false;
    } else if (d.f != cudaChannelFormatKindSigned && d.f != cudaChannelFormatKindUnsigned) {
        return false;
    }
    *nch = n;
    *bits = b[0];
    return true;
}

bool device_range(const void* p, size_t n) {
    std::lock_guard<std::mutex> lock(__sim::g_state_mu);
    return __sim::find_alloc(p, n, nullptr);
}

// Bytes from p to the end of the device allocation holding it (0 when none does).
size_t alloc_remaining(const void* p) {
    std::lock_guard<std::mutex> lock(__sim::g_state_mu);
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = __sim::g_allocs.upper_bound(a);
    if (it == __sim::g_allocs.begin()) return 0;
    --it;
    return a - it->first < it->second ? it->second - (a - it->first) : 0;
}

// An argument CUDA refuses: the call returns the error, as on a GPU, and says nothing (a report
// would be a checker finding). `why` documents the rule at the call site.
cudaError_t fail(cudaError_t e, const char* why, const char* api) {
    (void)why;
    (void)api;
    return __sim::set_error(e);
}

// A feature outside the simulator's subset: one line naming it, and cudaErrorNotSupported.
cudaError_t unsupported(const char* api, const char* what) {
    __sim::report("%s: %s is not supported by the simulator (see simulator/docs/textures.md)", api, what);
    return __sim::set_error(cudaErrorNotSupported);
}

// A range outside device memory: a memory error, reported like cudaMemcpy's.
cudaError_t outside_device(const char* api, const char* what) {
    __sim::report("%s: %s: %s is not inside one live device allocation", __sim::mode_name(), api, what);
    return __sim::set_error(cudaErrorInvalidValue);
}

void set_channels(TexData* t, const cudaChannelFormatDesc& d, int nch, int bits) {
    t->nch = nch;
    t->bits = bits;
    t->kind = d.f;
    t->elem = nch * bits / 8;
}

TexData array_data(const cudaArray* a) {
    TexData t{};
    t.base = a->data;
    t.pitch = a->pitch;
    t.slice = a->slice;
    t.w = (int)a->w;
    t.h = (int)a->h;
    const bool layered = (a->flags & (cudaArrayLayered | cudaArrayCubemap)) != 0;
    t.d = layered ? 1 : (int)a->d;
    t.layers = layered ? (int)a->d : 0;
    int nch = 0, bits = 0;
    channel_info(a->desc, &nch, &bits);
    set_channels(&t, a->desc, nch, bits);
    return t;
}

// A resource descriptor as the sampled data; cudaErrorSuccess or the error to return.
cudaError_t resource_data(const cudaResourceDesc& r, TexData* t, const char* api) {
    *t = TexData{};
    int nch = 0, bits = 0;
    switch (r.resType) {
        case cudaResourceTypeArray:
            if (!live(g_arrays, r.res.array.array))
                return fail(cudaErrorInvalidValue, "%s: the resource's array is not a live cudaArray_t", api);
            *t = array_data(r.res.array.array);
            return cudaSuccess;
        case cudaResourceTypeLinear:
            if (!channel_info(r.res.linear.desc, &nch, &bits)) return __sim::set_error(cudaErrorInvalidChannelDescriptor);
            set_channels(t, r.res.linear.desc, nch, bits);
            if (!device_range(r.res.linear.devPtr, r.res.linear.sizeInBytes))
                return outside_device(api, "res.linear");
            t->base = static_cast<const unsigned char*>(r.res.linear.devPtr);
            t->w = (int)(r.res.linear.sizeInBytes / t->elem);
            t->h = t->d = 1;
            t->pitch = t->slice = r.res.linear.sizeInBytes;
            t->linear = 1;
            return cudaSuccess;
        case cudaResourceTypePitch2D: {
            const auto& p = r.res.pitch2D;
            if (!channel_info(p.desc, &nch, &bits)) return __sim::set_error(cudaErrorInvalidChannelDescriptor);
            set_channels(t, p.desc, nch, bits);
            if (p.width == 0 || p.height == 0 || p.pitchInBytes < p.width * t->elem || p.pitchInBytes % 32 != 0)
                return fail(cudaErrorInvalidValue,
                            "%s: res.pitch2D needs a width and height, and a pitch at least width * element size "
                            "and a multiple of 32 (texturePitchAlignment)",
                            api);
            if (!device_range(p.devPtr, p.pitchInBytes * (p.height - 1) + p.width * t->elem))
                return outside_device(api, "res.pitch2D");
            t->base = static_cast<const unsigned char*>(p.devPtr);
            t->w = (int)p.width;
            t->h = (int)p.height;
            t->d = 1;
            t->pitch = p.pitchInBytes;
            t->slice = p.pitchInBytes * p.height;
            return cudaSuccess;
        }
        case cudaResourceTypeMipmappedArray:
            if (!live(g_mipmaps, r.res.mipmap.mipmap))
                return fail(cudaErrorInvalidValue, "%s: the resource's array is not a live cudaMipmappedArray_t", api);
            *t = array_data(r.res.mipmap.mipmap->level[0]);
            return cudaSuccess;
        default:
            return __sim::set_error(cudaErrorInvalidValue);
    }
}

// One side of a copy: an array (positions in its elements) or pitched memory (positions in bytes).
struct Side {
    unsigned char* base;
    size_t pitch, slice;
    const cudaArray* arr;
};

Side array_side(const cudaArray* a) { return Side{a->data, a->pitch, a->slice, a}; }

bool array_fits(const cudaArray* a, size_t xb, size_t y, size_t z, size_t wb, size_t h, size_t d) {
    return xb + wb <= a->w * a->elem && y + h <= a->h && z + d <= a->d;
}

// Copies wb bytes x h rows x d slices; an array side needs the direction to name device memory.
cudaError_t copy_region(Side dst, Side src, size_t wb, size_t h, size_t d, cudaMemcpyKind kind) {
    if (cudaError_t e = __sim::sticky_error()) return e;
    if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) return __sim::set_error(cudaErrorInvalidMemcpyDirection);
    const bool to_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDefault;
    const bool from_dev =
        kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice || kind == cudaMemcpyDefault;
    if ((dst.arr && !to_dev) || (src.arr && !from_dev)) return __sim::set_error(cudaErrorInvalidMemcpyDirection);
    if (wb == 0 || h == 0 || d == 0) return cudaSuccess;
    if (dst.base == nullptr || src.base == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    for (size_t z = 0; z < d; z++) {
        for (size_t y = 0; y < h; y++) {
            unsigned char* to = dst.base + z * dst.slice + y * dst.pitch;
            const unsigned char* from = src.base + z * src.slice + y * src.pitch;
            if (!dst.arr && !src.arr) {
                if (cudaError_t e = cudaMemcpy(to, from, wb, kind)) return e;
                continue;
            }
            // The pointer side of an array copy is device memory when the direction says so.
            const bool ptr_dev = kind == cudaMemcpyDeviceToDevice;
            const unsigned char* p = dst.arr ? from : to;
            if (!(dst.arr && src.arr) && ptr_dev && !device_range(p, wb)) {
                __sim::report("%s: array copy: the device range %p (+%zu bytes) is not inside one live device allocation",
                            __sim::mode_name(), (const void*)p, wb);
                return __sim::set_error(cudaErrorInvalidValue);
            }
            std::memmove(to, from, wb);
        }
    }
    return cudaSuccess;
}

cudaError_t out_of_array(const char* api) {
    return fail(cudaErrorInvalidValue, "%s: the region does not fit inside the CUDA array", api);
}

cudaError_t make_array(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent e, unsigned int flags) {
    if (array == nullptr || desc == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    *array = nullptr;
    int nch = 0, bits = 0;
    if (!channel_info(*desc, &nch, &bits)) return __sim::set_error(cudaErrorInvalidChannelDescriptor);
    const unsigned int known = cudaArrayLayered | cudaArraySurfaceLoadStore | cudaArrayCubemap | cudaArrayTextureGather;
    if ((flags & ~known) != 0 || e.width == 0 || (e.height == 0 && e.depth != 0 && !(flags & cudaArrayLayered)))
        return __sim::set_error(cudaErrorInvalidValue);
    if (flags & cudaArrayCubemap) {
        const bool layered = (flags & cudaArrayLayered) != 0;
        if (e.width != e.height || e.depth == 0 || e.depth % 6 != 0 || (!layered && e.depth != 6))
            return fail(cudaErrorInvalidValue, "%s: a cubemap array has width == height and depth 6 (a multiple of 6 "
                                               "when layered)",
                        "cudaMalloc3DArray");
    }
    if ((flags & cudaArrayLayered) && e.depth == 0) return __sim::set_error(cudaErrorInvalidValue);
    cudaArray* a = new cudaArray{};
    a->desc = *desc;
    a->extent = e;
    a->flags = flags;
    a->elem = (size_t)nch * bits / 8;
    a->w = e.width;
    a->h = e.height ? e.height : 1;
    a->d = e.depth ? e.depth : 1;
    a->pitch = a->w * a->elem;
    a->slice = a->pitch * a->h;
    const size_t bytes = a->slice * a->d;
    if ((a->data = static_cast<unsigned char*>(__sim::device_alloc(bytes))) == nullptr) {
        delete a;
        return __sim::set_error(cudaErrorMemoryAllocation);
    }
    {
        std::lock_guard<std::mutex> lock(g_tex_mu);
        g_arrays.insert(a);
    }
    *array = a;
    return cudaSuccess;
}

#define SIM_TEXREF_GONE(name, instead) SIM_NOTE_GONE(#name " (texture references)", instead)

textureReference* bindable(const textureReference* r) { return const_cast<textureReference*>(r); }

}  // namespace

namespace __sim {

void texture_fault(const char* what, const char* file, int line) {
    Fiber* f = tl_run.fiber;
    Block* b = tl_run.block;
    if (f != nullptr && b != nullptr) {
        tl_run.in_kernel = false;
        report("%s: %s at %s:%d in kernel '%s' block (%u,%u,%u) thread (%u,%u,%u); the launch returns "
               "cudaErrorIllegalAddress, which is sticky",
               mode_name(), what, file, line, b->launch->name, b->idx.x, b->idx.y, b->idx.z, f->thread_idx.x,
               f->thread_idx.y, f->thread_idx.z);
        b->launch->faulted.store(true);
        stop_thread(b, f);
    }
    std::fprintf(stderr, "%s:%d: %s (outside a kernel)\n", file, line, what);
    std::abort();
}

void texture_unsupported(const char* op, const char* file, int line) {
    char what[256];
    std::snprintf(what, sizeof what,
                  "%s at %s:%d is a texture or surface form the simulator does not model (sparse fetches and "
                  "gathers, and of a mipmapped texture the Grad, layered and cubemap forms); see "
                  "simulator/docs/textures.md",
                  op, file, line);
    trap_with(what);
}

}  // namespace __sim

extern "C" {

cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f) {
    return cudaChannelFormatDesc{x, y, z, w, f};
}

cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width, size_t height,
                            unsigned int flags) {
    if (flags & (cudaArrayLayered | cudaArrayCubemap)) return __sim::set_error(cudaErrorInvalidValue);
    return make_array(array, desc, cudaExtent{width, height, 0}, flags);
}

cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent,
                              unsigned int flags) {
    return make_array(array, desc, extent, flags);
}

cudaError_t cudaFreeArray(cudaArray_t array) {
    if (array == nullptr) return cudaSuccess;
    {
        std::lock_guard<std::mutex> lock(g_tex_mu);
        if (g_arrays.count(array) != 0 && array->mip_level) {
            __sim::report("%s: cudaFreeArray(%p): a level of a mipmapped array (cudaFreeMipmappedArray frees it)",
                          __sim::mode_name(), (void*)array);
            return __sim::set_error(cudaErrorInvalidValue);
        }
        if (g_arrays.erase(array) == 0) {
            __sim::report("%s: cudaFreeArray(%p): not a live CUDA array", __sim::mode_name(), (void*)array);
            return __sim::set_error(cudaErrorInvalidValue);
        }
    }
    __sim::device_free(array->data);
    delete array;
    return __sim::sticky_error();
}

// Level l is the array's extent halved l times (at least 1; a height or depth of 0 stays 0, and
// the layers of a layered or cubemap array stay as they are); numLevels is clamped to
// [1, 1 + floor(log2(largest extent))], as CUDA does.
cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t* mip, const cudaChannelFormatDesc* desc, cudaExtent extent,
                                     unsigned int numLevels, unsigned int flags) {
    if (mip == nullptr || desc == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    *mip = nullptr;
    const bool layered = (flags & (cudaArrayLayered | cudaArrayCubemap)) != 0;
    size_t largest = extent.width > extent.height ? extent.width : extent.height;
    if (!layered && extent.depth > largest) largest = extent.depth;
    unsigned int most = 1;
    while (largest >> most) most++;
    const unsigned int levels = numLevels == 0 ? 1 : (numLevels > most ? most : numLevels);
    if (levels > (unsigned int)__sim::kTexMaxLevels) return __sim::set_error(cudaErrorInvalidValue);
    auto* m = new cudaMipmappedArray{};
    auto halve = [](size_t n, unsigned int l) { return n == 0 ? 0 : ((n >> l) > 0 ? (n >> l) : 1); };
    for (unsigned int l = 0; l < levels; l++) {
        const cudaExtent e{halve(extent.width, l), halve(extent.height, l),
                           layered ? extent.depth : halve(extent.depth, l)};
        if (cudaError_t err = make_array(&m->level[l], desc, e, flags)) {
            for (unsigned int k = 0; k < l; k++) cudaFreeArray(m->level[k]);
            delete m;
            return err;
        }
        m->level[l]->mip_level = true;
        m->levels = l + 1;
    }
    {
        std::lock_guard<std::mutex> lock(g_tex_mu);
        g_mipmaps.insert(m);
    }
    *mip = m;
    return cudaSuccess;
}

cudaError_t cudaGetMipmappedArrayLevel(cudaArray_t* levelArray, cudaMipmappedArray_const_t mip, unsigned int level) {
    if (levelArray == nullptr || !live(g_mipmaps, mip) || level >= mip->levels)
        return __sim::set_error(cudaErrorInvalidValue);
    *levelArray = mip->level[level];
    return cudaSuccess;
}

cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mip) {
    if (mip == nullptr) return cudaSuccess;
    {
        std::lock_guard<std::mutex> lock(g_tex_mu);
        if (g_mipmaps.erase(mip) == 0) {
            __sim::report("%s: cudaFreeMipmappedArray(%p): not a live mipmapped array", __sim::mode_name(), (void*)mip);
            return __sim::set_error(cudaErrorInvalidValue);
        }
        for (unsigned int l = 0; l < mip->levels; l++) g_arrays.erase(mip->level[l]);
    }
    for (unsigned int l = 0; l < mip->levels; l++) {
        __sim::device_free(mip->level[l]->data);
        delete mip->level[l];
    }
    delete mip;
    return __sim::sticky_error();
}

cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned int* flags,
                             cudaArray_t array) {
    if (!live(g_arrays, array)) return __sim::set_error(cudaErrorInvalidValue);
    if (desc) *desc = array->desc;
    if (extent) *extent = array->extent;
    if (flags) *flags = array->flags;
    return cudaSuccess;
}

cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array) {
    if (desc == nullptr || !live(g_arrays, array)) return __sim::set_error(cudaErrorInvalidValue);
    *desc = array->desc;
    return cudaSuccess;
}

cudaError_t cudaMalloc3D(cudaPitchedPtr* pitched, cudaExtent extent) {
    if (pitched == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    size_t pitch = 0;
    void* p = nullptr;
    const size_t rows = (extent.height ? extent.height : 1) * (extent.depth ? extent.depth : 1);
    if (cudaError_t e = cudaMallocPitch(&p, &pitch, extent.width, rows)) return e;
    *pitched = cudaPitchedPtr{p, pitch, extent.width, extent.height};
    return cudaSuccess;
}

cudaError_t cudaMemset3D(cudaPitchedPtr pitched, int value, cudaExtent extent) {
    const size_t slice = pitched.pitch * pitched.ysize;
    for (size_t z = 0; z < extent.depth; z++) {
        if (cudaError_t e = cudaMemset2D(static_cast<char*>(pitched.ptr) + z * slice, pitched.pitch, value,
                                         extent.width, extent.height))
            return e;
    }
    return cudaSuccess;
}

cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p) {
    if (p == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if ((p->srcArray != nullptr) == (p->srcPtr.ptr != nullptr) || (p->dstArray != nullptr) == (p->dstPtr.ptr != nullptr))
        return fail(cudaErrorInvalidValue, "%s: give exactly one of srcArray/srcPtr and one of dstArray/dstPtr",
                    "cudaMemcpy3D");
    if ((p->srcArray && !live(g_arrays, p->srcArray)) || (p->dstArray && !live(g_arrays, p->dstArray)))
        return __sim::set_error(cudaErrorInvalidValue);
    // The extent counts elements of the array taking part, else bytes.
    const size_t elem = p->srcArray ? p->srcArray->elem : (p->dstArray ? p->dstArray->elem : 1);
    if (p->srcArray && p->dstArray && p->srcArray->elem != p->dstArray->elem) return __sim::set_error(cudaErrorInvalidValue);
    const size_t wb = p->extent.width * elem, h = p->extent.height, d = p->extent.depth;
    Side src, dst;
    if (p->srcArray) {
        if (!array_fits(p->srcArray, p->srcPos.x * elem, p->srcPos.y, p->srcPos.z, wb, h, d))
            return out_of_array("cudaMemcpy3D (source)");
        src = array_side(p->srcArray);
        src.base += p->srcPos.z * src.slice + p->srcPos.y * src.pitch + p->srcPos.x * elem;
    } else {
        const cudaPitchedPtr& s = p->srcPtr;
        if (s.pitch < p->srcPos.x + wb) return __sim::set_error(cudaErrorInvalidPitchValue);
        src = Side{static_cast<unsigned char*>(s.ptr), s.pitch, s.pitch * s.ysize, nullptr};
        src.base += p->srcPos.z * src.slice + p->srcPos.y * src.pitch + p->srcPos.x;
    }
    if (p->dstArray) {
        if (!array_fits(p->dstArray, p->dstPos.x * elem, p->dstPos.y, p->dstPos.z, wb, h, d))
            return out_of_array("cudaMemcpy3D (destination)");
        dst = array_side(p->dstArray);
        dst.base += p->dstPos.z * dst.slice + p->dstPos.y * dst.pitch + p->dstPos.x * elem;
    } else {
        const cudaPitchedPtr& s = p->dstPtr;
        if (s.pitch < p->dstPos.x + wb) return __sim::set_error(cudaErrorInvalidPitchValue);
        dst = Side{static_cast<unsigned char*>(s.ptr), s.pitch, s.pitch * s.ysize, nullptr};
        dst.base += p->dstPos.z * dst.slice + p->dstPos.y * dst.pitch + p->dstPos.x;
    }
    return copy_region(dst, src, wb, h, d, p->kind);
}

cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t stream) {
    (void)stream;
    return cudaMemcpy3D(p);
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind) {
    if (!live(g_arrays, dst)) return __sim::set_error(cudaErrorInvalidValue);
    if (width > spitch) return __sim::set_error(cudaErrorInvalidPitchValue);
    if (!array_fits(dst, wOffset, hOffset, 0, width, height, 1)) return out_of_array("cudaMemcpy2DToArray");
    Side d = array_side(dst);
    d.base += hOffset * d.pitch + wOffset;
    return copy_region(d, Side{static_cast<unsigned char*>(const_cast<void*>(src)), spitch, 0, nullptr}, width,
                       height, 1, kind);
}

cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                  size_t width, size_t height, enum cudaMemcpyKind kind) {
    if (!live(g_arrays, src)) return __sim::set_error(cudaErrorInvalidValue);
    if (width > dpitch) return __sim::set_error(cudaErrorInvalidPitchValue);
    if (!array_fits(src, wOffset, hOffset, 0, width, height, 1)) return out_of_array("cudaMemcpy2DFromArray");
    Side s = array_side(src);
    s.base += hOffset * s.pitch + wOffset;
    return copy_region(Side{static_cast<unsigned char*>(dst), dpitch, 0, nullptr}, s, width, height, 1, kind);
}

cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                     size_t width, size_t height, enum cudaMemcpyKind kind, cudaStream_t stream) {
    (void)stream;
    return cudaMemcpy2DToArray(dst, wOffset, hOffset, src, spitch, width, height, kind);
}

cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset,
                                       size_t hOffset, size_t width, size_t height, enum cudaMemcpyKind kind,
                                       cudaStream_t stream) {
    (void)stream;
    return cudaMemcpy2DFromArray(dst, dpitch, src, wOffset, hOffset, width, height, kind);
}

cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src,
                                     size_t wOffsetSrc, size_t hOffsetSrc, size_t width, size_t height,
                                     enum cudaMemcpyKind kind) {
    if (!live(g_arrays, dst) || !live(g_arrays, src)) return __sim::set_error(cudaErrorInvalidValue);
    if (!array_fits(dst, wOffsetDst, hOffsetDst, 0, width, height, 1) ||
        !array_fits(src, wOffsetSrc, hOffsetSrc, 0, width, height, 1))
        return out_of_array("cudaMemcpy2DArrayToArray");
    Side d = array_side(dst), s = array_side(src);
    d.base += hOffsetDst * d.pitch + wOffsetDst;
    s.base += hOffsetSrc * s.pitch + wOffsetSrc;
    return copy_region(d, s, width, height, 1, kind);
}

// The deprecated 1-D forms: count bytes from (wOffset bytes, hOffset rows), running on across rows.
cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                              enum cudaMemcpyKind kind) {
    if (!live(g_arrays, dst)) return __sim::set_error(cudaErrorInvalidValue);
    const size_t off = hOffset * dst->pitch + wOffset;
    if (wOffset > dst->pitch || off + count > dst->slice * dst->d) return out_of_array("cudaMemcpyToArray");
    Side d = array_side(dst);
    d.base += off;
    return copy_region(d, Side{static_cast<unsigned char*>(const_cast<void*>(src)), count, 0, nullptr}, count, 1, 1,
                       kind);
}

cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                enum cudaMemcpyKind kind) {
    if (!live(g_arrays, src)) return __sim::set_error(cudaErrorInvalidValue);
    const size_t off = hOffset * src->pitch + wOffset;
    if (wOffset > src->pitch || off + count > src->slice * src->d) return out_of_array("cudaMemcpyFromArray");
    Side s = array_side(src);
    s.base += off;
    return copy_region(Side{static_cast<unsigned char*>(dst), count, 0, nullptr}, s, count, 1, 1, kind);
}

cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t wOffsetDst, size_t hOffsetDst, cudaArray_const_t src,
                                   size_t wOffsetSrc, size_t hOffsetSrc, size_t count, enum cudaMemcpyKind kind) {
    if (!live(g_arrays, dst) || !live(g_arrays, src)) return __sim::set_error(cudaErrorInvalidValue);
    const size_t od = hOffsetDst * dst->pitch + wOffsetDst, os = hOffsetSrc * src->pitch + wOffsetSrc;
    if (od + count > dst->slice * dst->d || os + count > src->slice * src->d)
        return out_of_array("cudaMemcpyArrayToArray");
    Side d = array_side(dst), s = array_side(src);
    d.base += od;
    s.base += os;
    return copy_region(d, s, count, 1, 1, kind);
}

cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                                   enum cudaMemcpyKind kind, cudaStream_t stream) {
    (void)stream;
    return cudaMemcpyToArray(dst, wOffset, hOffset, src, count, kind);
}

cudaError_t cudaMemcpyFromArrayAsync(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                     enum cudaMemcpyKind kind, cudaStream_t stream) {
    (void)stream;
    return cudaMemcpyFromArray(dst, src, wOffset, hOffset, count, kind);
}

cudaError_t cudaCreateTextureObject(cudaTextureObject_t* tex, const cudaResourceDesc* res, const cudaTextureDesc* desc,
                                    const cudaResourceViewDesc* view) {
    if (tex == nullptr || res == nullptr || desc == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (view != nullptr)
        return unsupported("cudaCreateTextureObject", "a resource view");
    TexData t;
    if (cudaError_t e = resource_data(*res, &t, "cudaCreateTextureObject")) return e;
    for (int k = 0; k < 3; k++)
        if ((int)desc->addressMode[k] < 0 || (int)desc->addressMode[k] > cudaAddressModeBorder)
            return __sim::set_error(cudaErrorInvalidValue);
    const bool int_channels = t.kind != cudaChannelFormatKindFloat;
    if (desc->readMode == cudaReadModeNormalizedFloat && int_channels && t.bits == 32)
        return __sim::set_error(cudaErrorInvalidNormSetting);
    if (desc->filterMode == cudaFilterModeLinear && int_channels && desc->readMode == cudaReadModeElementType)
        return __sim::set_error(cudaErrorInvalidFilterSetting);
    __sim::TexObj* o = new __sim::TexObj{};
    o->data = t;
    for (int k = 0; k < 3; k++) o->s.addr[k] = desc->addressMode[k];
    o->s.filter = desc->filterMode;
    o->s.read = desc->readMode;
    o->s.normalized = desc->normalizedCoords != 0;
    for (int c = 0; c < 4; c++) o->s.border[c] = desc->borderColor[c];
    o->res = *res;
    o->desc = *desc;
    if (res->resType == cudaResourceTypeMipmappedArray) {
        const cudaMipmappedArray* m = res->res.mipmap.mipmap;
        o->mip.levels = (int)m->levels;
        o->mip.filter = desc->mipmapFilterMode;
        o->mip.bias = desc->mipmapLevelBias;
        o->mip.min_clamp = desc->minMipmapLevelClamp;
        o->mip.max_clamp = desc->maxMipmapLevelClamp;
        for (unsigned int l = 0; l < m->levels; l++) o->mip.level[l] = array_data(m->level[l]);
    }
    {
        std::lock_guard<std::mutex> lock(g_tex_mu);
        g_texobjs.insert(o);
    }
    *tex = (cudaTextureObject_t) reinterpret_cast<uintptr_t>(o);
    return cudaSuccess;
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t tex) {
    const void* p = reinterpret_cast<const void*>((uintptr_t)tex);
    if (tex == 0) return cudaSuccess;
    {
        std::lock_guard<std::mutex> lock(g_tex_mu);
        if (g_texobjs.erase(p) == 0) return __sim::set_error(cudaErrorInvalidValue);
    }
    delete static_cast<const __sim::TexObj*>(p);
    return cudaSuccess;
}

cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* res, cudaTextureObject_t tex) {
    const auto* o = reinterpret_cast<const __sim::TexObj*>((uintptr_t)tex);
    if (res == nullptr || !live(g_texobjs, o)) return __sim::set_error(cudaErrorInvalidValue);
    *res = o->res;
    return cudaSuccess;
}

cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* desc, cudaTextureObject_t tex) {
    const auto* o = reinterpret_cast<const __sim::TexObj*>((uintptr_t)tex);
    if (desc == nullptr || !live(g_texobjs, o)) return __sim::set_error(cudaErrorInvalidValue);
    *desc = o->desc;
    return cudaSuccess;
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t* surf, const cudaResourceDesc* res) {
    if (surf == nullptr || res == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (res->resType != cudaResourceTypeArray)
        return fail(cudaErrorInvalidValue, "%s: a surface object needs a CUDA array resource",
                    "cudaCreateSurfaceObject");
    TexData t;
    if (cudaError_t e = resource_data(*res, &t, "cudaCreateSurfaceObject")) return e;
    const cudaArray* a = res->res.array.array;
    if (!(a->flags & cudaArraySurfaceLoadStore))
        return fail(cudaErrorInvalidValue, "%s: the array was not allocated with cudaArraySurfaceLoadStore",
                    "cudaCreateSurfaceObject");
    // A 1-D layered array is addressed (x, layer) by surf1DLayered*: its layers are rows.
    if (t.layers > 0 && a->extent.height == 0) t.h = t.layers;
    __sim::SurfObj* o = new __sim::SurfObj{};
    o->data = t;
    o->res = *res;
    {
        std::lock_guard<std::mutex> lock(g_tex_mu);
        g_surfobjs.insert(o);
    }
    *surf = (cudaSurfaceObject_t) reinterpret_cast<uintptr_t>(o);
    return cudaSuccess;
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surf) {
    const void* p = reinterpret_cast<const void*>((uintptr_t)surf);
    if (surf == 0) return cudaSuccess;
    {
        std::lock_guard<std::mutex> lock(g_tex_mu);
        if (g_surfobjs.erase(p) == 0) return __sim::set_error(cudaErrorInvalidValue);
    }
    delete static_cast<const __sim::SurfObj*>(p);
    return cudaSuccess;
}

cudaError_t cudaGetSurfaceObjectResourceDesc(cudaResourceDesc* res, cudaSurfaceObject_t surf) {
    const auto* o = reinterpret_cast<const __sim::SurfObj*>((uintptr_t)surf);
    if (res == nullptr || !live(g_surfobjs, o)) return __sim::set_error(cudaErrorInvalidValue);
    *res = o->res;
    return cudaSuccess;
}

// ---- texture references ----------------------------------------------------------------------
cudaError_t cudaBindTexture(size_t* offset, const textureReference* texref, const void* devPtr,
                            const cudaChannelFormatDesc* desc, size_t size) {
    SIM_TEXREF_GONE(cudaBindTexture, "a texture object over the same memory");
    if (texref == nullptr || desc == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (offset) *offset = 0;  // no alignment offset: any device address can be bound here
    if (size == UINT_MAX) size = alloc_remaining(devPtr);
    cudaResourceDesc r{};
    r.resType = cudaResourceTypeLinear;
    r.res.linear.devPtr = const_cast<void*>(devPtr);
    r.res.linear.desc = *desc;
    r.res.linear.sizeInBytes = size;
    TexData t;
    if (cudaError_t e = resource_data(r, &t, "cudaBindTexture")) return e;
    bindable(texref)->sim_data = t;
    bindable(texref)->sim_bound = 1;
    return cudaSuccess;
}

cudaError_t cudaBindTexture2D(size_t* offset, const textureReference* texref, const void* devPtr,
                              const cudaChannelFormatDesc* desc, size_t width, size_t height, size_t pitch) {
    SIM_TEXREF_GONE(cudaBindTexture2D, "a texture object over the same memory");
    if (texref == nullptr || desc == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (offset) *offset = 0;
    cudaResourceDesc r{};
    r.resType = cudaResourceTypePitch2D;
    r.res.pitch2D.devPtr = const_cast<void*>(devPtr);
    r.res.pitch2D.desc = *desc;
    r.res.pitch2D.width = width;
    r.res.pitch2D.height = height;
    r.res.pitch2D.pitchInBytes = pitch;
    TexData t;
    if (cudaError_t e = resource_data(r, &t, "cudaBindTexture2D")) return e;
    bindable(texref)->sim_data = t;
    bindable(texref)->sim_bound = 1;
    return cudaSuccess;
}

cudaError_t cudaBindTextureToArray(const textureReference* texref, cudaArray_const_t array,
                                   const cudaChannelFormatDesc* desc) {
    SIM_TEXREF_GONE(cudaBindTextureToArray, "a texture object over the same memory");
    (void)desc;  // the array's own format decides how texels decode, as on a GPU
    if (texref == nullptr || !live(g_arrays, array)) return __sim::set_error(cudaErrorInvalidValue);
    bindable(texref)->sim_data = array_data(array);
    bindable(texref)->sim_bound = 1;
    return cudaSuccess;
}

cudaError_t cudaUnbindTexture(const textureReference* texref) {
    SIM_TEXREF_GONE(cudaUnbindTexture, "cudaDestroyTextureObject");
    if (texref == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    bindable(texref)->sim_bound = 0;
    return cudaSuccess;
}

}  // extern "C"
