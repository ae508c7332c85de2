// Texture and surface objects and the legacy texture references (sim_textures.h has the types
// and the device fetches; cuda_arrays.cpp the arrays they read). An object is a heap record whose
// address is its handle.
#include "textures_internal.h"

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace {

using __sim::channel_info;
using __sim::device_range;
using __sim::fail;
using __sim::g_arrays;
using __sim::g_mipmaps;
using __sim::g_surfobjs;
using __sim::g_tex_mu;
using __sim::g_texobjs;
using __sim::live;
using __sim::TexData;

// Bytes from p to the end of the device allocation holding it (0 when none does).
size_t alloc_remaining(const void* p) {
    std::lock_guard<std::mutex> lock(__sim::g_state_mu);
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = __sim::g_allocs.upper_bound(a);
    if (it == __sim::g_allocs.begin()) return 0;
    --it;
    return a - it->first < it->second ? it->second - (a - it->first) : 0;
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

#define SIM_TEXREF_GONE(name, instead) SIM_NOTE_GONE(#name " (texture references)", instead)

textureReference* bindable(const textureReference* r) { return const_cast<textureReference*>(r); }

// Binds a texture reference to memory that a resource descriptor names; cudaSuccess or the error.
cudaError_t bind_resource(const textureReference* texref, const cudaResourceDesc& r, const char* api) {
    TexData t;
    if (cudaError_t e = resource_data(r, &t, api)) return e;
    bindable(texref)->sim_data = t;
    bindable(texref)->sim_bound = 1;
    return cudaSuccess;
}

// Frees a texture or surface object (``Obj``) by its handle, once it is out of ``objects``, the
// live set of its kind; cudaErrorInvalidValue for a handle that is not there.
template <class Obj>
cudaError_t destroy_object(std::set<const void*>& objects, unsigned long long handle) {
    const void* p = reinterpret_cast<const void*>((uintptr_t)handle);
    if (handle == 0) return cudaSuccess;
    {
        std::lock_guard<std::mutex> lock(g_tex_mu);
        if (objects.erase(p) == 0) return __sim::set_error(cudaErrorInvalidValue);
    }
    delete static_cast<const Obj*>(p);
    return cudaSuccess;
}

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
    return destroy_object<__sim::TexObj>(g_texobjs, tex);
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
    return destroy_object<__sim::SurfObj>(g_surfobjs, surf);
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
    return bind_resource(texref, r, "cudaBindTexture");
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
    return bind_resource(texref, r, "cudaBindTexture2D");
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
