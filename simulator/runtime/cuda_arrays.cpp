// CUDA arrays and mipmapped arrays: their allocation, levels and queries, and the sets of live
// arrays and objects the texture calls check handles against (textures_internal.h). An array is
// host memory with packed rows.
#include "textures_internal.h"

#include <cstdio>

namespace __sim {

std::mutex g_tex_mu;
std::set<const void*> g_arrays, g_mipmaps, g_texobjs, g_surfobjs;

bool live(const std::set<const void*>& s, const void* p) {
    std::lock_guard<std::mutex> lock(g_tex_mu);
    return p != nullptr && s.count(p) != 0;
}

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
    std::lock_guard<std::mutex> lock(g_state_mu);
    return find_alloc(p, n, nullptr);
}

cudaError_t fail(cudaError_t e, const char* why, const char* api) {
    (void)why;
    (void)api;
    return set_error(e);
}

}  // namespace __sim

namespace {

using __sim::channel_info;
using __sim::fail;
using __sim::g_arrays;
using __sim::g_mipmaps;
using __sim::g_tex_mu;
using __sim::live;

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

}  // namespace

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

}  // extern "C"
// sim-runtime: cold
