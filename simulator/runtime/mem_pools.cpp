// Stream-ordered allocation and memory pools. Streams run in order (every
// call completes before it returns), so cudaMallocAsync is cudaMalloc on the pool's books and
// cudaFreeAsync is cudaFree: memcheck sees each allocation as its own block, as it does for
// cudaMalloc. On a capturing stream they become graph memory nodes (graphs.cpp).
#include "graphs_internal.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>

struct CUmemPoolHandle_st {
    cudaMemPoolProps props{};
    unsigned long long release_threshold = 0;
    int reuse_follow_events = 1;
    int reuse_opportunistic = 1;
    int reuse_internal_deps = 1;
    unsigned long long used = 0;
    unsigned long long used_high = 0;
    cudaMemAccessFlags access = cudaMemAccessFlagsProtReadWrite;
};

namespace {

std::mutex g_pool_mu;
// Per device: its default pool (located on it) and its current pool (cudaDeviceSetMemPool).
struct DevicePools {
    CUmemPoolHandle_st defaults[__sim::kMaxDevices];
    cudaMemPool_t current[__sim::kMaxDevices];
    DevicePools() {
        for (int d = 0; d < __sim::kMaxDevices; ++d) start_over(d);
    }
    // Device ``d``'s default pool as a new process finds it, and current.
    void start_over(int d) {
        defaults[d] = CUmemPoolHandle_st{};
        defaults[d].props.allocType = cudaMemAllocationTypePinned;
        defaults[d].props.location = cudaMemLocation{cudaMemLocationTypeDevice, d};
        current[d] = &defaults[d];
    }
} g_pools;
std::set<cudaMemPool_t> g_created_pools;                    // cudaMemPoolCreate'd, not destroyed
std::map<void*, std::pair<cudaMemPool_t, size_t>> g_owner;  // pool allocation -> pool and size

bool default_pool(cudaMemPool_t pool) {
    return pool >= &g_pools.defaults[0] && pool < &g_pools.defaults[__sim::kMaxDevices];
}

bool live_pool(cudaMemPool_t pool) { return default_pool(pool) || g_created_pools.count(pool) != 0; }

cudaError_t pool_alloc(void** ptr, size_t size, cudaMemPool_t pool) {
    if (ptr == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    {
        std::lock_guard<std::mutex> lock(g_pool_mu);
        if (!live_pool(pool)) return __sim::set_error(cudaErrorInvalidValue);
        if (pool->props.maxSize != 0 && pool->used + size > pool->props.maxSize) {
            *ptr = nullptr;
            return __sim::set_error(cudaErrorMemoryAllocation);
        }
    }
    cudaError_t e = cudaMalloc(ptr, size);
    if (e != cudaSuccess || *ptr == nullptr) return e;
    {
        // The memory is the pool's device's, whichever device is current.
        std::lock_guard<std::mutex> state(__sim::g_state_mu);
        __sim::record_alloc(reinterpret_cast<uintptr_t>(*ptr), pool->props.location.id, false);
    }
    std::lock_guard<std::mutex> lock(g_pool_mu);
    g_owner[*ptr] = {pool, size};
    pool->used += size;
    if (pool->used > pool->used_high) pool->used_high = pool->used;
    return cudaSuccess;
}

}  // namespace

namespace __sim {

void forget_pool_allocation(void* ptr) {
    std::lock_guard<std::mutex> lock(g_pool_mu);
    auto it = g_owner.find(ptr);
    if (it == g_owner.end()) return;
    it->second.first->used -= it->second.second;
    g_owner.erase(it);
}

void reset_device_pools(int device) {
    std::lock_guard<std::mutex> lock(g_pool_mu);
    for (auto it = g_owner.begin(); it != g_owner.end();) {
        cudaMemPool_t pool = it->second.first;
        if (pool->props.location.id != device) {
            ++it;
            continue;
        }
        pool->used -= it->second.second;
        it = g_owner.erase(it);
    }
    for (cudaMemPool_t pool : g_created_pools) {
        if (pool->props.location.id == device) pool->used_high = pool->used;
    }
    g_pools.start_over(device);
}

}  // namespace __sim

extern "C" {

cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream) {
    cudaError_t captured;
    if (__sim::capturing(stream) && __sim::capture_malloc(ptr, size, &captured)) return captured;
    cudaMemPool_t pool;
    {
        std::lock_guard<std::mutex> lock(g_pool_mu);
        pool = g_pools.current[__sim::current_device()];  // the stream's device: streams are the current device's
    }
    return pool_alloc(ptr, size, pool);
}

cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
    cudaError_t captured;
    if (__sim::capturing(stream) && __sim::capture_malloc(ptr, size, &captured)) return captured;
    return pool_alloc(ptr, size, pool);
}

cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
    if (ptr == nullptr) return cudaSuccess;
    cudaError_t captured;
    if (__sim::capturing(stream) && __sim::capture_free(ptr, &captured)) return captured;
    return cudaFree(ptr);  // also frees a cudaMalloc'd pointer, as CUDA allows, and keeps the pool's books
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
    if (pool == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (!__sim::valid_device(device)) return __sim::set_error(cudaErrorInvalidDevice);
    *pool = &g_pools.defaults[device];
    return cudaSuccess;
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) {
    if (pool == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (!__sim::valid_device(device)) return __sim::set_error(cudaErrorInvalidDevice);
    std::lock_guard<std::mutex> lock(g_pool_mu);
    *pool = g_pools.current[device];
    return cudaSuccess;
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool) {
    if (!__sim::valid_device(device)) return __sim::set_error(cudaErrorInvalidDevice);
    std::lock_guard<std::mutex> lock(g_pool_mu);
    if (!live_pool(pool)) return __sim::set_error(cudaErrorInvalidValue);
    if (pool->props.location.id != device) return __sim::set_error(cudaErrorInvalidDevice);  // another device's pool
    g_pools.current[device] = pool;
    return cudaSuccess;
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const struct cudaMemPoolProps* props) {
    if (pool == nullptr || props == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (props->allocType != cudaMemAllocationTypePinned || props->location.type != cudaMemLocationTypeDevice)
        return __sim::set_error(cudaErrorInvalidValue);
    if (!__sim::valid_device(props->location.id)) return __sim::set_error(cudaErrorInvalidDevice);
    if (props->handleTypes != cudaMemHandleTypeNone && props->handleTypes != cudaMemHandleTypePosixFileDescriptor)
        return __sim::set_error(cudaErrorNotSupported);
    auto* created = new CUmemPoolHandle_st;
    created->props = *props;
    std::lock_guard<std::mutex> lock(g_pool_mu);
    g_created_pools.insert(created);
    *pool = created;
    return cudaSuccess;
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
    std::unique_ptr<CUmemPoolHandle_st> gone;
    {
        std::lock_guard<std::mutex> lock(g_pool_mu);
        if (default_pool(pool) || g_created_pools.erase(pool) == 0) return __sim::set_error(cudaErrorInvalidValue);
        const int device = pool->props.location.id;
        if (g_pools.current[device] == pool) g_pools.current[device] = &g_pools.defaults[device];
        // Allocations still live stay valid until freed, as in CUDA; they no longer count.
        for (auto& entry : g_owner)
            if (entry.second.first == pool) entry.second.first = &g_pools.defaults[device];
        gone.reset(pool);
    }
    return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void* value) {
    if (value == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_pool_mu);
    if (!live_pool(pool)) return __sim::set_error(cudaErrorInvalidValue);
    switch (attr) {
        case cudaMemPoolReuseFollowEventDependencies: pool->reuse_follow_events = *static_cast<int*>(value); break;
        case cudaMemPoolReuseAllowOpportunistic: pool->reuse_opportunistic = *static_cast<int*>(value); break;
        case cudaMemPoolReuseAllowInternalDependencies: pool->reuse_internal_deps = *static_cast<int*>(value); break;
        case cudaMemPoolAttrReleaseThreshold:
            pool->release_threshold = *static_cast<unsigned long long*>(value);
            break;
        case cudaMemPoolAttrReservedMemHigh:
        case cudaMemPoolAttrUsedMemHigh:
            // Only a reset to 0 is allowed: the high-water mark restarts from the current use.
            if (*static_cast<unsigned long long*>(value) != 0) return __sim::set_error(cudaErrorInvalidValue);
            pool->used_high = pool->used;
            break;
        default:
            return __sim::set_error(cudaErrorInvalidValue);  // the current counters are read-only
    }
    return cudaSuccess;
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr attr, void* value) {
    if (value == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_pool_mu);
    if (!live_pool(pool)) return __sim::set_error(cudaErrorInvalidValue);
    auto* u64 = static_cast<unsigned long long*>(value);
    switch (attr) {
        case cudaMemPoolReuseFollowEventDependencies: *static_cast<int*>(value) = pool->reuse_follow_events; break;
        case cudaMemPoolReuseAllowOpportunistic: *static_cast<int*>(value) = pool->reuse_opportunistic; break;
        case cudaMemPoolReuseAllowInternalDependencies: *static_cast<int*>(value) = pool->reuse_internal_deps; break;
        case cudaMemPoolAttrReleaseThreshold: *u64 = pool->release_threshold; break;
        // Nothing is cached between frees: what is reserved is what is in use.
        case cudaMemPoolAttrReservedMemCurrent:
        case cudaMemPoolAttrUsedMemCurrent: *u64 = pool->used; break;
        case cudaMemPoolAttrReservedMemHigh:
        case cudaMemPoolAttrUsedMemHigh: *u64 = pool->used_high; break;
        default: return __sim::set_error(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t min_bytes_to_keep) {
    (void)min_bytes_to_keep;  // nothing is cached, so there is nothing to trim
    std::lock_guard<std::mutex> lock(g_pool_mu);
    return live_pool(pool) ? cudaSuccess : __sim::set_error(cudaErrorInvalidValue);
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const struct cudaMemAccessDesc* descs, size_t count) {
    if (descs == nullptr && count != 0) return __sim::set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_pool_mu);
    if (!live_pool(pool)) return __sim::set_error(cudaErrorInvalidValue);
    for (size_t i = 0; i < count; ++i) {
        if (descs[i].location.type != cudaMemLocationTypeDevice) return __sim::set_error(cudaErrorInvalidValue);
        if (!__sim::valid_device(descs[i].location.id)) return __sim::set_error(cudaErrorInvalidDevice);
        pool->access = descs[i].flags;
    }
    return cudaSuccess;
}

cudaError_t cudaMemPoolGetAccess(enum cudaMemAccessFlags* flags, cudaMemPool_t pool,
                                 struct cudaMemLocation* location) {
    if (flags == nullptr || location == nullptr) return __sim::set_error(cudaErrorInvalidValue);
    if (location->type != cudaMemLocationTypeDevice || !__sim::valid_device(location->id))
        return __sim::set_error(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_pool_mu);
    if (!live_pool(pool)) return __sim::set_error(cudaErrorInvalidValue);
    *flags = pool->access;
    return cudaSuccess;
}

}  // extern "C"
// sim-runtime: cold
