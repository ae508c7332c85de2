// sim-runtime: per mode
// The driver API's virtual memory management (cuMemAddressReserve, cuMemCreate, cuMemMap,
// cuMemSetAccess and their partners), built from the host's own virtual memory: a reservation is
// an inaccessible anonymous mapping, physical memory is a memfd, cuMemMap maps it over part of a
// reservation (MAP_FIXED) and cuMemSetAccess sets the pages' protection. A mapped range that some
// device may read and write is registered with the runtime's device-allocation table (memory.cpp),
// adjacent mappings of one reservation as one range, so that copies and memsets into it are
// accepted and copies into an unmapped or inaccessible part are refused like any bad pointer.
// A kernel's access there faults: in fast and synccheck builds the page protection raises the
// fault the runtime reports as cudaErrorIllegalAddress; under memcheck every byte of a
// reservation that is not accessible is poisoned (and backed by placeholder memory, so the
// program goes on after the report), and AddressSanitizer reports the access.
//
// All modelled devices share the host's one address space: a range is accessible when any device
// was given access to it, and each device's flags are kept for cuMemGetAccess.
#include "sim_internal.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <vector>

#include <cuda.h>

#if defined(SIM_MEMCHECK)
#include <sanitizer/asan_interface.h>  // the runtime is not instrumented, but links with ASan
#endif

namespace {

// What cuMemGetAllocationGranularity reports, minimum and recommended alike: a GPU's large page.
constexpr size_t kGranularity = size_t(2) << 20;

// Physical memory made by cuMemCreate or cuMemImportFromShareableHandle.
struct Physical {
    int fd;
    size_t size;
    CUmemAllocationProp prop;
    int refs;  // the handle's unreleased references (cuMemCreate, import, retain)
    int maps;  // live mappings of it; the memory goes when both are zero
};

using Access = std::array<unsigned char, __sim::kMaxDevices>;  // CU_MEM_ACCESS_FLAGS_* per device

struct Mapping {
    size_t size;
    CUmemGenericAllocationHandle handle;
    std::vector<Access> access;  // one per granule of the mapping
};

struct VmmBooks {
    std::mutex mu;
    std::map<CUmemGenericAllocationHandle, Physical> physical;
    CUmemGenericAllocationHandle next_handle = 1;
    std::map<uintptr_t, size_t> reservations;  // start -> size
    std::map<uintptr_t, Mapping> mappings;     // start -> mapping
    std::map<uintptr_t, size_t> registered;    // the ranges this file put in the allocation table
};

VmmBooks& vmm_books() {
    static VmmBooks* b = new VmmBooks;  // outlives static destructors that may still unmap
    return *b;
}

bool aligned(uintptr_t v, size_t unit) { return v % unit == 0; }

// The protection the host pages of a granule get from its per-device flags: the union of them.
int protection(const Access& a) {
    unsigned char flags = 0;
    for (unsigned char f : a) flags |= f;
    if ((flags & CU_MEM_ACCESS_FLAGS_PROT_READWRITE) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
        return PROT_READ | PROT_WRITE;
    }
    return (flags & CU_MEM_ACCESS_FLAGS_PROT_READ) ? PROT_READ : PROT_NONE;
}

#if defined(SIM_MEMCHECK)
// Under memcheck an inaccessible byte is a poisoned one on readable placeholder memory: the
// sanitizer reports a kernel's access and the program goes on, as after any other device fault.
constexpr int kInaccessible = PROT_READ | PROT_WRITE;
#else
constexpr int kInaccessible = PROT_NONE;
#endif

// Host pages that hold no physical memory: part of a reservation, or a range just unmapped.
bool place_holder(uintptr_t start, size_t size) {
    const int fixed = start != 0 ? MAP_FIXED : 0;
    void* p = mmap(reinterpret_cast<void*>(start), size, kInaccessible,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | fixed, -1, 0);
    return p != MAP_FAILED;
}

// The reservation holding [start, start + size), or end().
std::map<uintptr_t, size_t>::iterator reservation_of(VmmBooks& b, uintptr_t start, size_t size) {
    auto it = b.reservations.upper_bound(start);
    if (it == b.reservations.begin()) return b.reservations.end();
    --it;
    if (start - it->first <= it->second && size <= it->second - (start - it->first)) return it;
    return b.reservations.end();
}

// The mapping holding address ``a``, or end().
std::map<uintptr_t, Mapping>::iterator mapping_at(VmmBooks& b, uintptr_t a) {
    auto it = b.mappings.upper_bound(a);
    if (it == b.mappings.begin()) return b.mappings.end();
    --it;
    return a - it->first < it->second.size ? it : b.mappings.end();
}

// Applies the mappings' flags inside reservation [start, start + size) to the host pages, the
// sanitizer's shadow and the runtime's allocation table (b.mu held). Adjacent read-write
// granules form one registered range, as vectorAddMMAP's chunks on several devices form one array.
void sync_reservation(VmmBooks& b, uintptr_t start, size_t size) {
    struct Run {
        uintptr_t start;
        size_t size;
        int device;
    };
    std::vector<Run> runs;
#if defined(SIM_MEMCHECK)
    __asan_poison_memory_region(reinterpret_cast<void*>(start), size);
#endif
    for (auto it = b.mappings.lower_bound(start); it != b.mappings.end() && it->first < start + size; ++it) {
        const Mapping& m = it->second;
        const int device = b.physical.at(m.handle).prop.location.id;
        for (size_t g = 0; g < m.access.size(); ++g) {
            const uintptr_t at = it->first + g * kGranularity;
            const int prot = protection(m.access[g]);
            mprotect(reinterpret_cast<void*>(at), kGranularity, prot == PROT_NONE ? kInaccessible : prot);
#if defined(SIM_MEMCHECK)
            if (prot != PROT_NONE) __asan_unpoison_memory_region(reinterpret_cast<void*>(at), kGranularity);
#endif
            if (prot != (PROT_READ | PROT_WRITE)) continue;
            if (!runs.empty() && runs.back().start + runs.back().size == at) {
                runs.back().size += kGranularity;
            } else {
                runs.push_back({at, kGranularity, device});
            }
        }
    }
    std::lock_guard<std::mutex> lock(__sim::g_state_mu);
    for (auto it = b.registered.lower_bound(start); it != b.registered.end() && it->first < start + size;) {
        auto alloc = __sim::g_allocs.find(it->first);
        if (alloc != __sim::g_allocs.end() && alloc->second == it->second) {  // not dropped by a reset
            __sim::g_allocs.erase(alloc);
            __sim::forget_alloc(it->first);
        }
        it = b.registered.erase(it);
    }
    for (const Run& r : runs) {
        __sim::g_allocs[r.start] = r.size;
        __sim::record_alloc(r.start, r.device, false);
        b.registered[r.start] = r.size;
    }
}

// Frees a handle's memory once it has neither references nor mappings (b.mu held).
void drop_if_unused(VmmBooks& b, CUmemGenericAllocationHandle h) {
    auto it = b.physical.find(h);
    if (it == b.physical.end() || it->second.refs > 0 || it->second.maps > 0) return;
    close(it->second.fd);
    b.physical.erase(it);
}

// cudaSuccess's counterpart, or why ``prop`` cannot describe memory here.
CUresult check_prop(const CUmemAllocationProp* prop) {
    if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED) {
        return prop->type == CU_MEM_ALLOCATION_TYPE_MANAGED ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
    }
    switch (prop->location.type) {
        case CU_MEM_LOCATION_TYPE_DEVICE:
            return __sim::valid_device(prop->location.id) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
        case CU_MEM_LOCATION_TYPE_HOST:
        case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
            return CUDA_ERROR_NOT_SUPPORTED;  // host VMM: CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_... answers 0
        default:
            return CUDA_ERROR_INVALID_VALUE;
    }
}

}  // namespace

namespace __sim {

// The registered ranges change only with g_state_mu held (sync_reservation), so it guards this read.
bool vmm_range(uintptr_t start) { return vmm_books().registered.count(start) != 0; }

}  // namespace __sim

extern "C" {

CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                       CUmemAllocationGranularity_flags option) {
    if (granularity == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (CUresult e = check_prop(prop)) return e;
    *granularity = kGranularity;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags) {
    if (ptr == nullptr || size == 0 || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (!aligned(size, page) || !aligned(addr, page)) return CUDA_ERROR_INVALID_VALUE;
    if (alignment != 0 && (alignment & (alignment - 1)) != 0) return CUDA_ERROR_INVALID_VALUE;
    // A reservation starts on a granule, as a GPU's does, so that the first map at its start is legal.
    const size_t align = alignment > kGranularity ? alignment : kGranularity;
    uintptr_t start = 0;
    if (addr != 0 && aligned(addr, align)) {
        // The hint, where nothing is mapped yet.
        void* p = mmap(reinterpret_cast<void*>(addr), size, kInaccessible,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (p != MAP_FAILED && reinterpret_cast<uintptr_t>(p) == addr) {
            start = addr;
        } else if (p != MAP_FAILED) {
            munmap(p, size);  // an old kernel that took the flag for a hint and chose another place
        }
    }
    if (start == 0) {
        if (size > SIZE_MAX - align) return CUDA_ERROR_OUT_OF_MEMORY;
        void* p = mmap(nullptr, size + align, kInaccessible, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
        const uintptr_t raw = reinterpret_cast<uintptr_t>(p);
        start = (raw + align - 1) / align * align;
        if (start > raw) munmap(p, start - raw);
        if (const size_t tail = raw + size + align - (start + size); tail > 0) {
            munmap(reinterpret_cast<void*>(start + size), tail);
        }
    }
    VmmBooks& b = vmm_books();
    std::lock_guard<std::mutex> lock(b.mu);
    b.reservations[start] = size;
    sync_reservation(b, start, size);  // under memcheck: poisoned until mapped and made accessible
    *ptr = (CUdeviceptr)start;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
    VmmBooks& b = vmm_books();
    std::lock_guard<std::mutex> lock(b.mu);
    auto it = b.reservations.find((uintptr_t)ptr);
    if (it == b.reservations.end() || it->second != size) return CUDA_ERROR_INVALID_VALUE;
    auto m = b.mappings.lower_bound((uintptr_t)ptr);
    if (m != b.mappings.end() && m->first < (uintptr_t)ptr + size) {
        __sim::report("%s: cuMemAddressFree(0x%llx, %zu): the range still holds a mapping at 0x%lx; "
                      "cuMemUnmap it first",
                      __sim::mode_name(), (unsigned long long)ptr, size, (unsigned long)m->first);
        return CUDA_ERROR_INVALID_VALUE;
    }
#if defined(SIM_MEMCHECK)
    __asan_unpoison_memory_region(reinterpret_cast<void*>(ptr), size);  // the host may reuse the pages
#endif
    munmap(reinterpret_cast<void*>(ptr), size);
    b.reservations.erase(it);
    return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                     unsigned long long flags) {
    if (handle == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult e = check_prop(prop)) return e;
    if (size == 0 || !aligned(size, kGranularity)) return CUDA_ERROR_INVALID_VALUE;
    const unsigned known = CU_MEM_HANDLE_TYPE_NONE | CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    if ((prop->requestedHandleTypes & ~known) != 0) return CUDA_ERROR_NOT_SUPPORTED;  // Win32, fabric
    const int device = prop->location.id;
    if (size > __sim::device_memory_total() - __sim::device_memory_used(device)) return CUDA_ERROR_OUT_OF_MEMORY;
    const int fd = memfd_create("cuMemCreate", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    if (ftruncate(fd, (off_t)size) != 0) {  // zero-filled, as fresh device memory reads here
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    Physical p{fd, size, *prop, 1, 0};
    p.prop.allocFlags.compressionType = 0;  // CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED is 0
    VmmBooks& b = vmm_books();
    std::lock_guard<std::mutex> lock(b.mu);
    *handle = b.next_handle++;
    b.physical.emplace(*handle, p);
    return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
    VmmBooks& b = vmm_books();
    std::lock_guard<std::mutex> lock(b.mu);
    auto it = b.physical.find(handle);
    if (it == b.physical.end() || it->second.refs == 0) return CUDA_ERROR_INVALID_VALUE;
    it->second.refs--;
    drop_if_unused(b, handle);  // a mapped allocation stays until it is unmapped
    return CUDA_SUCCESS;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags) {
    const uintptr_t start = (uintptr_t)ptr;
    if (flags != 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!aligned(start, kGranularity) || !aligned(size, kGranularity) || !aligned(offset, kGranularity)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    VmmBooks& b = vmm_books();
    std::lock_guard<std::mutex> lock(b.mu);
    auto phys = b.physical.find(handle);
    if (phys == b.physical.end() || phys->second.refs == 0) return CUDA_ERROR_INVALID_VALUE;
    if (offset > phys->second.size || size > phys->second.size - offset) return CUDA_ERROR_INVALID_VALUE;
    auto res = reservation_of(b, start, size);
    if (res == b.reservations.end()) return CUDA_ERROR_INVALID_VALUE;
    // Only an unmapped part of a reservation may be mapped.
    auto next = b.mappings.lower_bound(start);
    if (next != b.mappings.end() && next->first < start + size) return CUDA_ERROR_INVALID_VALUE;
    if (mapping_at(b, start) != b.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
    void* p = mmap(reinterpret_cast<void*>(start), size, kInaccessible, MAP_SHARED | MAP_FIXED, phys->second.fd,
                   (off_t)offset);
    if (p == MAP_FAILED) {
        place_holder(start, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    phys->second.maps++;
    b.mappings[start] = Mapping{size, handle, std::vector<Access>(size / kGranularity, Access{})};
    sync_reservation(b, res->first, res->second);  // mapped, but no device has access yet
    return CUDA_SUCCESS;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
    const uintptr_t start = (uintptr_t)ptr;
    if (size == 0) return CUDA_ERROR_INVALID_VALUE;
    VmmBooks& b = vmm_books();
    std::lock_guard<std::mutex> lock(b.mu);
    // Whole mappings, side by side, from ptr to ptr + size: a part of one cannot be unmapped.
    uintptr_t at = start;
    while (at < start + size) {
        auto m = b.mappings.find(at);
        if (m == b.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
        at += m->second.size;
    }
    if (at != start + size) return CUDA_ERROR_INVALID_VALUE;
    auto res = reservation_of(b, start, size);
    for (at = start; at < start + size;) {
        auto m = b.mappings.find(at);
        const size_t n = m->second.size;
        const CUmemGenericAllocationHandle h = m->second.handle;
        place_holder(at, n);
        b.mappings.erase(m);
        b.physical.at(h).maps--;
        drop_if_unused(b, h);
        at += n;
    }
    if (res != b.reservations.end()) sync_reservation(b, res->first, res->second);
    return CUDA_SUCCESS;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
    const uintptr_t start = (uintptr_t)ptr;
    if (desc == nullptr || count == 0 || size == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!aligned(start, kGranularity) || !aligned(size, kGranularity)) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; ++i) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_NOT_SUPPORTED;
        if (!__sim::valid_device(desc[i].location.id)) return CUDA_ERROR_INVALID_DEVICE;
        const CUmemAccess_flags f = desc[i].flags;
        if (f != CU_MEM_ACCESS_FLAGS_PROT_NONE && f != CU_MEM_ACCESS_FLAGS_PROT_READ &&
            f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    VmmBooks& b = vmm_books();
    std::lock_guard<std::mutex> lock(b.mu);
    // Every granule of the range must be mapped: check all before changing any.
    for (uintptr_t at = start; at < start + size; at += kGranularity) {
        if (mapping_at(b, at) == b.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
    }
    for (uintptr_t at = start; at < start + size; at += kGranularity) {
        auto m = mapping_at(b, at);
        Access& a = m->second.access[(at - m->first) / kGranularity];
        for (size_t i = 0; i < count; ++i) a[desc[i].location.id] = (unsigned char)desc[i].flags;
    }
    auto res = reservation_of(b, start, size);
    sync_reservation(b, res->first, res->second);
    return CUDA_SUCCESS;
}

CUresult cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr) {
    if (flags == nullptr || location == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (location->type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
    if (!__sim::valid_device(location->id)) return CUDA_ERROR_INVALID_DEVICE;
    VmmBooks& b = vmm_books();
    std::lock_guard<std::mutex> lock(b.mu);
    auto m = mapping_at(b, (uintptr_t)ptr);
    if (m == b.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
    *flags = m->second.access[((uintptr_t)ptr - m->first) / kGranularity][location->id];
    return CUDA_SUCCESS;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
    if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    VmmBooks& b = vmm_books();
    std::lock_guard<std::mutex> lock(b.mu);
    auto m = mapping_at(b, reinterpret_cast<uintptr_t>(addr));
    if (m == b.mappings.end()) return CUDA_ERROR_INVALID_VALUE;
    b.physical.at(m->second.handle).refs++;  // to be paired with a cuMemRelease
    *handle = m->second.handle;
    return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) {
    if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
    VmmBooks& b = vmm_books();
    std::lock_guard<std::mutex> lock(b.mu);
    auto it = b.physical.find(handle);
    if (it == b.physical.end() || it->second.refs == 0) return CUDA_ERROR_INVALID_VALUE;
    *prop = it->second.prop;
    return CUDA_SUCCESS;
}

CUresult cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType handleType, unsigned long long flags) {
    if (shareableHandle == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
    VmmBooks& b = vmm_books();
    std::lock_guard<std::mutex> lock(b.mu);
    auto it = b.physical.find(handle);
    if (it == b.physical.end() || it->second.refs == 0) return CUDA_ERROR_INVALID_VALUE;
    // Only a handle type asked for at cuMemCreate can be exported.
    if ((it->second.prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    const int fd = fcntl(it->second.fd, F_DUPFD_CLOEXEC, 0);  // the caller's to close
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    *static_cast<int*>(shareableHandle) = fd;
    return CUDA_SUCCESS;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                        CUmemAllocationHandleType shHandleType) {
    if (handle == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
    // The POSIX handle travels in the pointer's bits, as CUDA's samples pass it.
    const int given = (int)(intptr_t)osHandle;
    struct stat st;
    if (given < 0 || fstat(given, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        !aligned((uintptr_t)st.st_size, kGranularity)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    const int fd = fcntl(given, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    VmmBooks& b = vmm_books();
    std::lock_guard<std::mutex> lock(b.mu);
    // The exporter's properties when it lives in this process; else a device allocation on device 0.
    CUmemAllocationProp prop;
    std::memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    for (const auto& [h, p] : b.physical) {
        struct stat mine;
        if (fstat(p.fd, &mine) == 0 && mine.st_dev == st.st_dev && mine.st_ino == st.st_ino) {
            prop = p.prop;
            break;
        }
    }
    *handle = b.next_handle++;
    b.physical.emplace(*handle, Physical{fd, (size_t)st.st_size, prop, 1, 0});
    return CUDA_SUCCESS;
}

}  // extern "C"
