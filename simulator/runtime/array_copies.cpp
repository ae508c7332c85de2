// 3-D memory and the copies to, from and between CUDA arrays (cuda_arrays.cpp allocates them).
#include "textures_internal.h"

#include <cstring>

namespace {

using __sim::device_range;
using __sim::fail;
using __sim::g_arrays;
using __sim::live;

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

}  // namespace

extern "C" {

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

// One side of a 3-D copy of ``wb`` bytes by ``h`` rows by ``d`` slices: ``array`` at ``pos`` (x in
// elements of ``elem`` bytes) when there is one, else ``ptr`` at ``pos`` (x in bytes); ``what`` names
// the side in the error of a region outside the array.
static cudaError_t copy_side(cudaArray_const_t array, const cudaPitchedPtr& ptr, const cudaPos& pos, size_t elem,
                             size_t wb, size_t h, size_t d, const char* what, Side& side) {
    if (array != nullptr) {
        if (!array_fits(array, pos.x * elem, pos.y, pos.z, wb, h, d)) return out_of_array(what);
        side = array_side(array);
        side.base += pos.z * side.slice + pos.y * side.pitch + pos.x * elem;
    } else {
        if (ptr.pitch < pos.x + wb) return __sim::set_error(cudaErrorInvalidPitchValue);
        side = Side{static_cast<unsigned char*>(ptr.ptr), ptr.pitch, ptr.pitch * ptr.ysize, nullptr};
        side.base += pos.z * side.slice + pos.y * side.pitch + pos.x;
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
    const cudaError_t from = copy_side(p->srcArray, p->srcPtr, p->srcPos, elem, wb, h, d, "cudaMemcpy3D (source)", src);
    if (from != cudaSuccess) return from;
    const cudaError_t to = copy_side(p->dstArray, p->dstPtr, p->dstPos, elem, wb, h, d, "cudaMemcpy3D (destination)", dst);
    if (to != cudaSuccess) return to;
    return copy_region(dst, src, wb, h, d, p->kind);
}

cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t stream) {
    (void)stream;
    return cudaMemcpy3D(p);
}

// A 2-D copy of ``height`` rows of ``width`` bytes between ``array`` at (``wOffset`` bytes,
// ``hOffset`` rows) and pitched memory ``ptr``, into the array when ``to_array``; ``api`` names the
// call in the error of a region outside the array.
static cudaError_t copy_2d_array(cudaArray_const_t array, size_t wOffset, size_t hOffset, void* ptr, size_t pitch,
                                 size_t width, size_t height, cudaMemcpyKind kind, bool to_array, const char* api) {
    if (!live(g_arrays, array)) return __sim::set_error(cudaErrorInvalidValue);
    if (width > pitch) return __sim::set_error(cudaErrorInvalidPitchValue);
    if (!array_fits(array, wOffset, hOffset, 0, width, height, 1)) return out_of_array(api);
    Side in_array = array_side(array);
    in_array.base += hOffset * in_array.pitch + wOffset;
    const Side pitched{static_cast<unsigned char*>(ptr), pitch, 0, nullptr};
    return to_array ? copy_region(in_array, pitched, width, height, 1, kind)
                    : copy_region(pitched, in_array, width, height, 1, kind);
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind) {
    return copy_2d_array(dst, wOffset, hOffset, const_cast<void*>(src), spitch, width, height, kind, true,
                         "cudaMemcpy2DToArray");
}

cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                  size_t width, size_t height, enum cudaMemcpyKind kind) {
    return copy_2d_array(src, wOffset, hOffset, dst, dpitch, width, height, kind, false, "cudaMemcpy2DFromArray");
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

}  // extern "C"
