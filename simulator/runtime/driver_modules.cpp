// The driver API's modules, functions and launches. A module is what the simulator's nvcc makes
// with -fatbin or -cubin (simulator/modules.py): a header, then a shared library of the unit's
// kernels and device variables built against this program's runtime, which the program exports.
// Loading it dlopens that library, whose static initialisers register its kernels here; a function
// is a kernel the library defines under the name asked for, launched by address as
// cudaLaunchKernel launches it.
#include "sim_internal.h"
#include "graphs_internal.h"
#include "driver_internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <cuda.h>

// A loaded module. Unloaded modules keep their library mapped and their record: a kernel the
// registry knows by address must never point at unmapped code, and a stale handle is refused.
struct CUmod_st {
    void* library;
    uintptr_t base;
};

struct CUfunc_st {
    const void* kernel;
    CUmod_st* module;
    std::string name;
};

namespace {

// The module file's header (modules.py writes it, little-endian): magic, format version, the
// build mode, the library's size; the library follows.
constexpr char kModuleMagic[8] = {'T', 'L', 'S', 'I', 'M', 'M', 'O', 'D'};
constexpr uint32_t kModuleVersion = 1;
constexpr size_t kModuleHeader = 40;
constexpr uint64_t kModuleMaxBytes = uint64_t(1) << 34;

std::mutex g_mod_mu;
std::set<const CUmod_st*> g_live_modules;    // guarded by g_mod_mu
std::set<const CUfunc_st*> g_live_functions;  // guarded by g_mod_mu
std::map<uintptr_t, size_t> g_module_globals;  // address -> size, guarded by g_mod_mu

void mod_note(const char* call, const char* what) {
    std::fprintf(stderr, "note (simulator): %s: %s\n", call, what);
    std::fflush(stderr);
}

// Whether ``image`` starts with ``prefix``, read byte by byte so that a short image is never
// read past its first mismatching byte.
bool starts_with(const unsigned char* image, const char* prefix, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (image[i] != (unsigned char)prefix[i]) return false;
    return true;
}

// PTX is text whose first token is a comment or a directive (.version, .target).
bool looks_like_ptx(const unsigned char* image) {
    const unsigned char* p = image;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return (p[0] == '/' && (p[1] == '/' || p[1] == '*')) || (p[0] == '.' && p[1] >= 'a' && p[1] <= 'z');
}

// Refuses what is not a module of the simulator's nvcc, saying what it is; CUDA_SUCCESS and the
// library's bytes otherwise.
CUresult check_image(const char* call, const unsigned char* image, const unsigned char** library, uint64_t* size) {
    if (starts_with(image, kModuleMagic, sizeof kModuleMagic)) {
        uint32_t version;
        std::memcpy(&version, image + 8, sizeof version);
        std::memcpy(size, image + 32, sizeof *size);
        *library = image + kModuleHeader;
        if (version != kModuleVersion || *size < 64 || *size > kModuleMaxBytes ||
            !starts_with(*library, "\177ELF", 4)) {
            mod_note(call, "the module image is damaged (its header or library is not as the simulator's "
                           "nvcc writes them); rebuild it with nvcc -fatbin");
            return CUDA_ERROR_INVALID_IMAGE;
        }
        return CUDA_SUCCESS;
    }
    if (looks_like_ptx(image)) {
        mod_note(call, "PTX is compiled by the GPU driver's JIT, which the simulator does not have; "
                       "build the module with the simulator's nvcc -fatbin or -cubin instead");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    static const char kFatbinMagic[4] = {'\x50', '\xed', '\x55', '\xba'};
    static const char kWrapperMagic[4] = {'\xb1', '\x43', '\x62', '\x46'};
    if (starts_with(image, kFatbinMagic, 4) || starts_with(image, kWrapperMagic, 4) ||
        starts_with(image, "\177ELF", 4)) {
        mod_note(call, "the image holds GPU machine code (NVIDIA's nvcc's fatbin or cubin), which a CPU "
                       "cannot run; build the module with the simulator's nvcc -fatbin or -cubin");
        return CUDA_ERROR_INVALID_IMAGE;
    }
    mod_note(call, "the image is not a module (neither the simulator's nvcc -fatbin/-cubin output nor PTX)");
    return CUDA_ERROR_INVALID_IMAGE;
}

// dlopens the library's bytes through an anonymous file: each load is its own copy, with its own
// kernels and device variables, as each driver module is.
CUresult load_image(const char* call, CUmodule* module, const void* image) {
    SIM_DRIVER_READY();
    if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
    const unsigned char* library = nullptr;
    uint64_t size = 0;
    CUresult r = check_image(call, static_cast<const unsigned char*>(image), &library, &size);
    if (r != CUDA_SUCCESS) return r;
    int fd = memfd_create("cuda-module", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    for (uint64_t done = 0; done < size;) {
        ssize_t n = write(fd, library + done, size - done);
        if (n <= 0) {
            close(fd);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        done += (uint64_t)n;
    }
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    // The file stays open with the module: dlopen takes a path it has loaded before for the same
    // library, and a closed descriptor's number (so its path) comes back with the next load.
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        close(fd);
        char built[17] = {};
        std::memcpy(built, static_cast<const unsigned char*>(image) + 16, 16);
        std::string why = std::string("the module's library does not load (") + dlerror() + "); it was built for " +
                          built + " and the program runs " + __sim::mode_name() +
                          ": build both in one mode (SIMULATOR_MODE), the program by the simulator's run or "
                          "nvcc, which export the runtime the module's kernels call";
        mod_note(call, why.c_str());
        return CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
    }
    struct link_map* map = nullptr;
    dlinfo(handle, RTLD_DI_LINKMAP, &map);
    auto* mod = new CUmod_st{handle, map != nullptr ? (uintptr_t)map->l_addr : 0};
    std::lock_guard<std::mutex> lock(g_mod_mu);
    g_live_modules.insert(mod);
    *module = mod;
    return CUDA_SUCCESS;
}

bool module_live(const CUmod_st* mod) {
    std::lock_guard<std::mutex> lock(g_mod_mu);
    return mod != nullptr && g_live_modules.count(mod) != 0;
}

bool function_live(const CUfunc_st* f) {
    std::lock_guard<std::mutex> lock(g_mod_mu);
    return f != nullptr && g_live_functions.count(f) != 0 && g_live_modules.count(f->module) != 0;
}

// The address of ``name`` when the module's own library defines it (dlsym would also answer
// from the libraries it depends on), with its symbol's size.
void* module_symbol(const CUmod_st* mod, const char* name, size_t* bytes) {
    void* addr = dlsym(mod->library, name);
    if (addr == nullptr) return nullptr;
    Dl_info info;
    const ElfW(Sym)* sym = nullptr;
    if (dladdr1(addr, &info, (void**)&sym, RTLD_DL_SYMENT) == 0 || (uintptr_t)info.dli_fbase != mod->base)
        return nullptr;
    if (bytes != nullptr) *bytes = sym != nullptr ? (size_t)sym->st_size : 0;
    return addr;
}

// The argument pointers of a launch whose arguments come packed in one buffer (``extra``),
// laid out as the kernel's parameters are: each at the next multiple of its alignment.
CUresult unpack_extra(const CUfunc_st* f, void** extra, std::vector<void*>* args) {
    char* buffer = nullptr;
    size_t* size = nullptr;
    for (void** p = extra; *p != CU_LAUNCH_PARAM_END; p += 2) {
        if (p[0] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
            buffer = static_cast<char*>(p[1]);
        } else if (p[0] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
            size = static_cast<size_t*>(p[1]);
        } else {
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    int n = 0;
    const size_t* sizes = nullptr;
    const size_t* aligns = nullptr;
    if (buffer == nullptr || size == nullptr || !__sim::kernel_params(f->kernel, &n, &sizes, &aligns))
        return CUDA_ERROR_INVALID_VALUE;
    size_t offset = 0;
    for (int i = 0; i < n; i++) {
        offset = (offset + aligns[i] - 1) / aligns[i] * aligns[i];
        args->push_back(buffer + offset);
        offset += sizes[i];
    }
    return offset <= *size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

}  // namespace

bool __sim::module_global(const void* p, size_t n) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    std::lock_guard<std::mutex> lock(g_mod_mu);
    auto it = g_module_globals.upper_bound(a);
    if (it == g_module_globals.begin()) return false;
    --it;
    return a - it->first < it->second && n <= it->second - (a - it->first);
}

extern "C" {

CUresult cuModuleLoadData(CUmodule* module, const void* image) { return load_image("cuModuleLoadData", module, image); }

CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions, CUjit_option* options,
                            void** optionValues) {
    // The JIT's options change nothing for a module that needs no JIT.
    if (numOptions != 0 && (options == nullptr || optionValues == nullptr)) return CUDA_ERROR_INVALID_VALUE;
    return load_image("cuModuleLoadDataEx", module, image);
}

CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
    return load_image("cuModuleLoadFatBinary", module, fatCubin);
}

CUresult cuModuleLoad(CUmodule* module, const char* fname) {
    SIM_DRIVER_READY();
    if (module == nullptr || fname == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::ifstream in(fname, std::ios::binary);
    if (!in) return CUDA_ERROR_FILE_NOT_FOUND;
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() < kModuleHeader + 64) bytes.resize(kModuleHeader + 64, '\0');  // checks read no further
    bytes.push_back('\0');
    return load_image("cuModuleLoad", module, bytes.data());
}

CUresult cuModuleUnload(CUmodule module) {
    SIM_DRIVER_READY();
    std::lock_guard<std::mutex> lock(g_mod_mu);
    if (module == nullptr || g_live_modules.erase(module) == 0) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule module, const char* name) {
    SIM_DRIVER_READY();
    if (hfunc == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!module_live(module)) return CUDA_ERROR_INVALID_HANDLE;
    const void* kernel = module_symbol(module, name, nullptr);
    __sim::KernelEntry entry;
    if (kernel == nullptr || !__sim::find_kernel(kernel, &entry)) return CUDA_ERROR_NOT_FOUND;
    auto* f = new CUfunc_st{kernel, module, name};
    std::lock_guard<std::mutex> lock(g_mod_mu);
    g_live_functions.insert(f);
    *hfunc = f;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUmodule module, const char* name) {
    SIM_DRIVER_READY();
    if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!module_live(module)) return CUDA_ERROR_INVALID_HANDLE;
    size_t size = 0;
    void* addr = module_symbol(module, name, &size);
    __sim::KernelEntry entry;
    if (addr == nullptr || size == 0 || __sim::find_kernel(addr, &entry)) return CUDA_ERROR_NOT_FOUND;
    {
        std::lock_guard<std::mutex> lock(g_mod_mu);
        g_module_globals[reinterpret_cast<uintptr_t>(addr)] = size;
    }
    if (dptr != nullptr) *dptr = reinterpret_cast<uintptr_t>(addr);
    if (bytes != nullptr) *bytes = size;
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra) {
    SIM_DRIVER_READY();
    if (!function_live(f)) return CUDA_ERROR_INVALID_HANDLE;
    if (kernelParams != nullptr && extra != nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::vector<void*> packed;
    void** args = kernelParams;
    if (extra != nullptr) {
        CUresult r = unpack_extra(f, extra, &packed);
        if (r != CUDA_SUCCESS) return r;
        args = packed.data();
    } else if (args == nullptr) {
        int n = 0;
        const size_t* sizes = nullptr;
        const size_t* aligns = nullptr;
        if (__sim::kernel_params(f->kernel, &n, &sizes, &aligns) && n != 0) return CUDA_ERROR_INVALID_VALUE;
    }
    // The runtime checks the configuration as it checks any launch (block size, shared memory).
    return __sim::driver_status(cudaLaunchKernel(f->kernel, dim3(gridDimX, gridDimY, gridDimZ),
                                                 dim3(blockDimX, blockDimY, blockDimZ), args, sharedMemBytes,
                                                 hStream));
}

static_assert((int)CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ==
              (int)cudaFuncAttributeMaxDynamicSharedMemorySize);
static_assert((int)CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT ==
              (int)cudaFuncAttributePreferredSharedMemoryCarveout);

CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attrib, CUfunction f) {
    SIM_DRIVER_READY();
    if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!function_live(f)) return CUDA_ERROR_INVALID_HANDLE;
    cudaFuncAttributes a;
    CUresult r = __sim::driver_status(cudaFuncGetAttributes(&a, f->kernel));
    if (r != CUDA_SUCCESS) return r;
    switch (attrib) {
        case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = a.maxThreadsPerBlock; break;
        case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = (int)a.sharedSizeBytes; break;
        case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *value = (int)a.constSizeBytes; break;
        case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *value = (int)a.localSizeBytes; break;
        case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = a.numRegs; break;
        case CU_FUNC_ATTRIBUTE_PTX_VERSION: *value = a.ptxVersion; break;
        case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *value = a.binaryVersion; break;
        case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *value = a.cacheModeCA; break;
        case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = a.maxDynamicSharedSizeBytes; break;
        case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *value = a.preferredShmemCarveout; break;
        default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attrib, int value) {
    SIM_DRIVER_READY();
    if (!function_live(f)) return CUDA_ERROR_INVALID_HANDLE;
    return __sim::driver_status(cudaFuncSetAttribute(f->kernel, (cudaFuncAttribute)attrib, value));
}

// The block size (a whole number of warps, at most the kernel's and ``limit``) that keeps the most
// threads resident per multiprocessor, as the runtime's occupancy calculator counts them.
CUresult cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction f,
                                          CUoccupancyB2DSize smemForBlock, size_t dynamicSMemSize, int limit) {
    SIM_DRIVER_READY();
    if (minGridSize == nullptr || blockSize == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!function_live(f)) return CUDA_ERROR_INVALID_HANDLE;
    cudaFuncAttributes a;
    cudaDeviceProp prop;
    int device = 0;
    CUresult r = __sim::driver_status(cudaFuncGetAttributes(&a, f->kernel));
    if (r == CUDA_SUCCESS) r = __sim::driver_status(cudaGetDevice(&device));
    if (r == CUDA_SUCCESS) r = __sim::driver_status(cudaGetDeviceProperties(&prop, device));
    if (r != CUDA_SUCCESS) return r;
    int most = a.maxThreadsPerBlock;
    if (limit > 0 && limit < most) most = limit;
    int best_size = 0, best_blocks = 0, best_threads = 0;
    for (int size = most / prop.warpSize * prop.warpSize; size > 0; size -= prop.warpSize) {
        size_t smem = smemForBlock != nullptr ? smemForBlock(size) : dynamicSMemSize;
        int blocks = 0;
        r = __sim::driver_status(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f->kernel, size, smem));
        if (r != CUDA_SUCCESS) return r;
        if (blocks * size > best_threads) {
            best_threads = blocks * size;
            best_size = size;
            best_blocks = blocks;
        }
    }
    *blockSize = best_size;
    *minGridSize = best_blocks * prop.multiProcessorCount;
    return CUDA_SUCCESS;
}

}  // extern "C"
// sim-runtime: cold
