// The driver API's CUDA arrays, 2-D copies and texture objects, each one of the runtime's calls on
// the runtime's cudaArray (a CUarray is a cudaArray_t, a CUtexObject a cudaTextureObject_t): the
// driver's descriptors are translated field by field, as the CUDA documentation pairs them.
#include "sim_internal.h"
#include "driver_internal.h"

#include <cuda.h>

namespace {

using __sim::driver_status;

cudaArray_t array_of(CUarray a) { return reinterpret_cast<cudaArray_t>(a); }

// A driver array format and channel count as the runtime's channel description; false for a
// format or count the runtime's arrays do not hold.
bool driver_channels(CUarray_format format, unsigned int channels, cudaChannelFormatDesc* desc) {
    struct Format {
        CUarray_format driver;
        int bits;
        cudaChannelFormatKind kind;
    };
    static const Format formats[] = {
        {CU_AD_FORMAT_UNSIGNED_INT8, 8, cudaChannelFormatKindUnsigned},
        {CU_AD_FORMAT_UNSIGNED_INT16, 16, cudaChannelFormatKindUnsigned},
        {CU_AD_FORMAT_UNSIGNED_INT32, 32, cudaChannelFormatKindUnsigned},
        {CU_AD_FORMAT_SIGNED_INT8, 8, cudaChannelFormatKindSigned},
        {CU_AD_FORMAT_SIGNED_INT16, 16, cudaChannelFormatKindSigned},
        {CU_AD_FORMAT_SIGNED_INT32, 32, cudaChannelFormatKindSigned},
        {CU_AD_FORMAT_HALF, 16, cudaChannelFormatKindFloat},
        {CU_AD_FORMAT_FLOAT, 32, cudaChannelFormatKindFloat},
    };
    if (channels != 1 && channels != 2 && channels != 4) return false;
    for (const Format& f : formats) {
        if (f.driver != format) continue;
        const int b = f.bits;
        *desc = cudaChannelFormatDesc{b, channels > 1 ? b : 0, channels > 2 ? b : 0, channels > 2 ? b : 0, f.kind};
        return true;
    }
    return false;
}

// The driver format of a runtime channel description (the inverse of driver_channels).
CUarray_format format_of(const cudaChannelFormatDesc& d) {
    if (d.f == cudaChannelFormatKindFloat) return d.x == 16 ? CU_AD_FORMAT_HALF : CU_AD_FORMAT_FLOAT;
    const bool sign = d.f == cudaChannelFormatKindSigned;
    switch (d.x) {
        case 8: return sign ? CU_AD_FORMAT_SIGNED_INT8 : CU_AD_FORMAT_UNSIGNED_INT8;
        case 16: return sign ? CU_AD_FORMAT_SIGNED_INT16 : CU_AD_FORMAT_UNSIGNED_INT16;
        default: return sign ? CU_AD_FORMAT_SIGNED_INT32 : CU_AD_FORMAT_UNSIGNED_INT32;
    }
}

unsigned int channels_of(const cudaChannelFormatDesc& d) { return d.w ? 4 : d.y ? 2 : 1; }

// One side of a 2-D copy: an array, or the address of its first byte (host, device or unified).
struct CopySide {
    cudaArray_t array;
    char* ptr;
    bool device;
};

bool pointer_side(CUmemorytype type, const void* host, CUdeviceptr dev, CUarray array, size_t x, size_t y, size_t pitch,
             CopySide* s) {
    switch (type) {
        case CU_MEMORYTYPE_ARRAY: *s = CopySide{array_of(array), nullptr, true}; return array != nullptr;
        case CU_MEMORYTYPE_HOST:
            *s = CopySide{nullptr, (char*)host + y * pitch + x, false};
            return host != nullptr;
        case CU_MEMORYTYPE_DEVICE:
        case CU_MEMORYTYPE_UNIFIED:
            *s = CopySide{nullptr, reinterpret_cast<char*>(dev) + y * pitch + x, true};
            return dev != 0;
    }
    return false;
}

// cuMemcpy2D and its asynchronous form: the runtime's 2-D copy for the pair of sides, with the
// direction the memory types name (a unified side lets the runtime tell).
CUresult driver_copy_2d(const CUDA_MEMCPY2D* p, bool async, CUstream stream) {
    SIM_DRIVER_READY();
    if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
    CopySide src, dst;
    const bool sides =
        pointer_side(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes, p->srcY, p->srcPitch,
                     &src) &&
        pointer_side(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes, p->dstY, p->dstPitch,
                     &dst);
    if (!sides) return CUDA_ERROR_INVALID_VALUE;
    const bool unified = p->srcMemoryType == CU_MEMORYTYPE_UNIFIED || p->dstMemoryType == CU_MEMORYTYPE_UNIFIED;
    const cudaMemcpyKind kinds[2][2] = {{cudaMemcpyHostToHost, cudaMemcpyHostToDevice},
                                        {cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice}};
    const cudaMemcpyKind kind = unified ? cudaMemcpyDefault : kinds[src.device][dst.device];
    const cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
    const size_t w = p->WidthInBytes, h = p->Height;
    cudaError_t e;
    if (src.array && dst.array)
        e = cudaMemcpy2DArrayToArray(dst.array, p->dstXInBytes, p->dstY, src.array, p->srcXInBytes, p->srcY, w, h,
                                     kind);
    else if (dst.array)
        e = async ? cudaMemcpy2DToArrayAsync(dst.array, p->dstXInBytes, p->dstY, src.ptr, p->srcPitch, w, h, kind, s)
                  : cudaMemcpy2DToArray(dst.array, p->dstXInBytes, p->dstY, src.ptr, p->srcPitch, w, h, kind);
    else if (src.array)
        e = async ? cudaMemcpy2DFromArrayAsync(dst.ptr, p->dstPitch, src.array, p->srcXInBytes, p->srcY, w, h, kind, s)
                  : cudaMemcpy2DFromArray(dst.ptr, p->dstPitch, src.array, p->srcXInBytes, p->srcY, w, h, kind);
    else
        e = async ? cudaMemcpy2DAsync(dst.ptr, p->dstPitch, src.ptr, p->srcPitch, w, h, kind, s)
                  : cudaMemcpy2D(dst.ptr, p->dstPitch, src.ptr, p->srcPitch, w, h, kind);
    return driver_status(e);
}

// The runtime's resource description for the driver's.
bool runtime_resource(const CUDA_RESOURCE_DESC& d, cudaResourceDesc* r) {
    *r = cudaResourceDesc{};
    switch (d.resType) {
        case CU_RESOURCE_TYPE_ARRAY:
            r->resType = cudaResourceTypeArray;
            r->res.array.array = array_of(d.res.array.hArray);
            return true;
        case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
            r->resType = cudaResourceTypeMipmappedArray;
            r->res.mipmap.mipmap = reinterpret_cast<cudaMipmappedArray_t>(d.res.mipmap.hMipmappedArray);
            return true;
        case CU_RESOURCE_TYPE_LINEAR:
            r->resType = cudaResourceTypeLinear;
            r->res.linear.devPtr = reinterpret_cast<void*>(d.res.linear.devPtr);
            r->res.linear.sizeInBytes = d.res.linear.sizeInBytes;
            return driver_channels(d.res.linear.format, d.res.linear.numChannels, &r->res.linear.desc);
        case CU_RESOURCE_TYPE_PITCH2D:
            r->resType = cudaResourceTypePitch2D;
            r->res.pitch2D.devPtr = reinterpret_cast<void*>(d.res.pitch2D.devPtr);
            r->res.pitch2D.width = d.res.pitch2D.width;
            r->res.pitch2D.height = d.res.pitch2D.height;
            r->res.pitch2D.pitchInBytes = d.res.pitch2D.pitchInBytes;
            return driver_channels(d.res.pitch2D.format, d.res.pitch2D.numChannels, &r->res.pitch2D.desc);
    }
    return false;
}

// The channel description a resource's texels have (for the read mode the driver implies).
cudaChannelFormatDesc texel_format(const cudaResourceDesc& r) {
    cudaChannelFormatDesc d{};
    switch (r.resType) {
        case cudaResourceTypeLinear: return r.res.linear.desc;
        case cudaResourceTypePitch2D: return r.res.pitch2D.desc;
        case cudaResourceTypeArray: cudaGetChannelDesc(&d, r.res.array.array); return d;
        default: {
            cudaArray_t level = nullptr;
            if (cudaGetMipmappedArrayLevel(&level, r.res.mipmap.mipmap, 0) == cudaSuccess)
                cudaGetChannelDesc(&d, level);
            return d;
        }
    }
}

// The runtime's texture description for the driver's: the flags become fields. The driver reads
// 8- and 16-bit integers as normalized floats unless CU_TRSF_READ_AS_INTEGER is set, and 32-bit
// integers and floats as they are.
cudaTextureDesc runtime_texture(const CUDA_TEXTURE_DESC& d, const cudaChannelFormatDesc& texel) {
    cudaTextureDesc t{};
    for (int k = 0; k < 3; k++) t.addressMode[k] = (cudaTextureAddressMode)d.addressMode[k];
    t.filterMode = (cudaTextureFilterMode)d.filterMode;
    const bool narrow_int = texel.f != cudaChannelFormatKindFloat && texel.x < 32;
    t.readMode = narrow_int && !(d.flags & CU_TRSF_READ_AS_INTEGER) ? cudaReadModeNormalizedFloat
                                                                     : cudaReadModeElementType;
    t.normalizedCoords = (d.flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
    t.sRGB = (d.flags & CU_TRSF_SRGB) != 0;
    t.seamlessCubemap = (d.flags & CU_TRSF_SEAMLESS_CUBEMAP) != 0;
    t.disableTrilinearOptimization = (d.flags & CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION) != 0;
    t.maxAnisotropy = d.maxAnisotropy;
    t.mipmapFilterMode = (cudaTextureFilterMode)d.mipmapFilterMode;
    t.mipmapLevelBias = d.mipmapLevelBias;
    t.minMipmapLevelClamp = d.minMipmapLevelClamp;
    t.maxMipmapLevelClamp = d.maxMipmapLevelClamp;
    for (int k = 0; k < 4; k++) t.borderColor[k] = d.borderColor[k];
    return t;
}

}  // namespace

extern "C" {

CUresult cuArray3DCreate(CUarray* array, const CUDA_ARRAY3D_DESCRIPTOR* desc) {
    SIM_DRIVER_READY();
    if (array == nullptr || desc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    cudaChannelFormatDesc c;
    if (!driver_channels(desc->Format, desc->NumChannels, &c)) return CUDA_ERROR_INVALID_VALUE;
    cudaArray_t a = nullptr;
    // CUDA_ARRAY3D_LAYERED, _SURFACE_LDST, _CUBEMAP and _TEXTURE_GATHER are the runtime's flags' values.
    const cudaExtent e{desc->Width, desc->Height, desc->Depth};
    const CUresult r = driver_status(cudaMalloc3DArray(&a, &c, e, desc->Flags));
    *array = reinterpret_cast<CUarray>(a);
    return r;
}

// A 2D (or 1D) array is the 3D call's with depth 0 and no flags, as the runtime's cudaMallocArray is.
CUresult cuArrayCreate(CUarray* array, const CUDA_ARRAY_DESCRIPTOR* desc) {
    if (desc == nullptr) return cuArray3DCreate(array, nullptr);
    const CUDA_ARRAY3D_DESCRIPTOR d3{desc->Width, desc->Height, 0, desc->Format, desc->NumChannels, 0};
    return cuArray3DCreate(array, &d3);
}

CUresult cuArrayDestroy(CUarray array) {
    SIM_DRIVER_READY();
    if (array == nullptr) return CUDA_ERROR_INVALID_HANDLE;
    return driver_status(cudaFreeArray(array_of(array)));
}

namespace {

// What the runtime knows of a driver array, for the two descriptor queries.
struct ArrayInfo {
    cudaChannelFormatDesc channels;
    cudaExtent extent;
    unsigned int flags;
};

CUresult array_info(CUarray array, ArrayInfo* info) {
    if (array == nullptr ||
        cudaArrayGetInfo(&info->channels, &info->extent, &info->flags, array_of(array)) != cudaSuccess)
        return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

}  // namespace

CUresult cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR* desc, CUarray array) {
    SIM_DRIVER_READY();
    if (desc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    ArrayInfo a;
    if (CUresult status = array_info(array, &a); status != CUDA_SUCCESS) return status;
    *desc = CUDA_ARRAY_DESCRIPTOR{a.extent.width, a.extent.height, format_of(a.channels), channels_of(a.channels)};
    return CUDA_SUCCESS;
}

CUresult cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR* desc, CUarray array) {
    SIM_DRIVER_READY();
    if (desc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    ArrayInfo a;
    if (CUresult status = array_info(array, &a); status != CUDA_SUCCESS) return status;
    *desc = CUDA_ARRAY3D_DESCRIPTOR{a.extent.width,         a.extent.height,          a.extent.depth,
                                    format_of(a.channels), channels_of(a.channels), a.flags};
    return CUDA_SUCCESS;
}

CUresult cuMemcpy2D(const CUDA_MEMCPY2D* p) { return driver_copy_2d(p, false, nullptr); }

CUresult cuMemcpy2DUnaligned(const CUDA_MEMCPY2D* p) { return driver_copy_2d(p, false, nullptr); }

CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D* p, CUstream stream) { return driver_copy_2d(p, true, stream); }

CUresult cuTexObjectCreate(CUtexObject* tex, const CUDA_RESOURCE_DESC* res, const CUDA_TEXTURE_DESC* desc,
                           const CUDA_RESOURCE_VIEW_DESC* view) {
    SIM_DRIVER_READY();
    if (tex == nullptr || res == nullptr || desc == nullptr) return CUDA_ERROR_INVALID_VALUE;
    cudaResourceDesc r;
    if (!runtime_resource(*res, &r)) return CUDA_ERROR_INVALID_VALUE;
    const cudaTextureDesc t = runtime_texture(*desc, texel_format(r));
    cudaTextureObject_t o = 0;
    cudaResourceViewDesc v{};  // the runtime refuses a view with a line naming it
    const CUresult status = driver_status(cudaCreateTextureObject(&o, &r, &t, view ? &v : nullptr));
    *tex = o;
    return status;
}

CUresult cuTexObjectDestroy(CUtexObject tex) {
    SIM_DRIVER_READY();
    return driver_status(cudaDestroyTextureObject(tex));
}

}  // extern "C"
// sim-runtime: cold
