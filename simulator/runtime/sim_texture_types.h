// CUDA's texture, surface and CUDA array types (included by sim_textures.h): those of
// driver_types.h, texture_types.h and surface_types.h. Names and fields are CUDA's.
#ifndef SIM_TEXTURE_TYPES_H
#define SIM_TEXTURE_TYPES_H

// ---- channel descriptors and CUDA arrays -----------------------------------------------------
enum cudaChannelFormatKind {
    cudaChannelFormatKindSigned = 0,
    cudaChannelFormatKindUnsigned = 1,
    cudaChannelFormatKindFloat = 2,
    cudaChannelFormatKindNone = 3,
};

struct cudaChannelFormatDesc {
    int x, y, z, w;  // bits per channel
    enum cudaChannelFormatKind f;
};

struct cudaExtent {
    size_t width;  // elements for an array, bytes for linear memory
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

#define cudaArrayDefault 0x00
#define cudaArrayLayered 0x01
#define cudaArraySurfaceLoadStore 0x02
#define cudaArrayCubemap 0x04
#define cudaArrayTextureGather 0x08

// A CUDA array: host memory, packed rows (pitch = width * element size), slices after slices.
// `extent` is as allocated (0 for an unused dimension); w/h/d are at least 1.
struct cudaArray {
    cudaChannelFormatDesc desc;
    cudaExtent extent;
    unsigned int flags;
    size_t elem;  // bytes per element
    size_t w, h, d;
    size_t pitch, slice;
    unsigned char* data;
};
typedef struct cudaArray* cudaArray_t;
typedef const struct cudaArray* cudaArray_const_t;
struct cudaMipmappedArray;
typedef struct cudaMipmappedArray* cudaMipmappedArray_t;
typedef const struct cudaMipmappedArray* cudaMipmappedArray_const_t;

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

// ---- resources, texture and surface descriptors ------------------------------------------------
enum cudaResourceType {
    cudaResourceTypeArray = 0x00,
    cudaResourceTypeMipmappedArray = 0x01,
    cudaResourceTypeLinear = 0x02,
    cudaResourceTypePitch2D = 0x03,
};
struct cudaResourceDesc {
    enum cudaResourceType resType;
    union {
        struct {
            cudaArray_t array;
        } array;
        struct {
            cudaMipmappedArray_t mipmap;
        } mipmap;
        struct {
            void* devPtr;
            struct cudaChannelFormatDesc desc;
            size_t sizeInBytes;
        } linear;
        struct {
            void* devPtr;
            struct cudaChannelFormatDesc desc;
            size_t width;
            size_t height;
            size_t pitchInBytes;
        } pitch2D;
        struct {
            int reserved[32];
        } reserved;
    } res;
    unsigned int flags;
};
enum cudaResourceViewFormat { cudaResViewFormatNone = 0x00 };
struct cudaResourceViewDesc {
    enum cudaResourceViewFormat format;
    size_t width, height, depth;
    unsigned int firstMipmapLevel, lastMipmapLevel, firstLayer, lastLayer;
    unsigned int reserved[16];
};

#define cudaTextureType1D 0x01
#define cudaTextureType2D 0x02
#define cudaTextureType3D 0x03
#define cudaTextureTypeCubemap 0x0C
#define cudaTextureType1DLayered 0xF1
#define cudaTextureType2DLayered 0xF2
#define cudaTextureTypeCubemapLayered 0xFC

enum cudaTextureAddressMode {
    cudaAddressModeWrap = 0,
    cudaAddressModeClamp = 1,
    cudaAddressModeMirror = 2,
    cudaAddressModeBorder = 3,
};
enum cudaTextureFilterMode { cudaFilterModePoint = 0, cudaFilterModeLinear = 1 };
enum cudaTextureReadMode { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };

struct cudaTextureDesc {
    enum cudaTextureAddressMode addressMode[3];
    enum cudaTextureFilterMode filterMode;
    enum cudaTextureReadMode readMode;
    int sRGB;
    float borderColor[4];
    int normalizedCoords;
    unsigned int maxAnisotropy;
    enum cudaTextureFilterMode mipmapFilterMode;
    float mipmapLevelBias;
    float minMipmapLevelClamp;
    float maxMipmapLevelClamp;
    int disableTrilinearOptimization;
    int seamlessCubemap;
};
typedef unsigned long long cudaTextureObject_t;

enum cudaSurfaceBoundaryMode { cudaBoundaryModeZero = 0, cudaBoundaryModeClamp = 1, cudaBoundaryModeTrap = 2 };
enum cudaSurfaceFormatMode { cudaFormatModeForced = 0, cudaFormatModeAuto = 1 };
typedef unsigned long long cudaSurfaceObject_t;

#endif  // SIM_TEXTURE_TYPES_H
