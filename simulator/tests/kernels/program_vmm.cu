// The driver API's virtual memory management, driven as cuda-samples' vectorAddMMAP drives it but
// with runtime-API launches: reserve, create, map, set access, a kernel on the mapped range, copy
// back, unmap, release; two chunks (on two devices when there are two) mapped side by side and
// used as one array; release while mapped; retain; export and import through a file descriptor;
// read-only access; and the errors for misaligned sizes, double maps and partial unmaps.
// Prints key=value tokens for test_vmm.py.
// With "fault WHERE" it runs only the faulting write below instead: one program for both, so that
// each mode builds it once.
#include <cuda.h>
#include <cuda_runtime.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

static const char* N(CUresult r) {
    const char* s = "?";
    cuGetErrorName(r, &s);
    return s;
}

#define CHECK(call)                                                        \
    do {                                                                   \
        CUresult r_ = (call);                                              \
        if (r_ != CUDA_SUCCESS) {                                          \
            std::printf("failed=%s line=%d\n", N(r_), __LINE__);           \
            return 1;                                                      \
        }                                                                  \
    } while (0)

// x[i] = i * scale + bias, over a grid-stride loop.
__global__ void fill(int* x, size_t n, int scale, int bias) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        x[i] = (int)i * scale + bias;
    }
}

// c[i] = a[i] + b[i]: vectorAddMMAP's kernel.
__global__ void add(const float* a, const float* b, float* c, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        c[i] = a[i] + b[i];
    }
}

static CUmemAllocationProp device_prop(int device, bool shareable) {
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    if (shareable) prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return prop;
}

static CUresult grant(CUdeviceptr p, size_t size, int device, CUmemAccess_flags flags) {
    CUmemAccessDesc d = {};
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = device;
    d.flags = flags;
    return cuMemSetAccess(p, size, &d, 1);
}

static bool is_fill(const std::vector<int>& v, int scale, int bias) {
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] != (int)i * scale + bias) return false;
    }
    return true;
}

// ---- "fault WHERE": a kernel's write into a reservation where it may not write, as WHERE says:
// "unmapped" (the reservation's second granule, never mapped) or "no_access" (mapped, but
// cuMemSetAccess never called). The first granule is mapped and writable; a GPU faults on the
// other, and so must the simulator (test_vmm.py). "leak" exits after the valid launch, leaving the
// memory mapped. Prints key=value tokens.
// x[i] = i for the thread's i.
__global__ void touch(int* x, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = i;
}

static int fault_main(int argc, char** argv) {
    const bool unmapped = argc > 1 && std::strcmp(argv[1], "unmapped") == 0;
    cuInit(0);
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t g = 0;
    cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    CUdeviceptr va = 0;
    cuMemAddressReserve(&va, 2 * g, 0, 0, 0);
    CUmemGenericAllocationHandle h[2] = {0, 0};
    const int chunks = unmapped ? 1 : 2;
    for (int c = 0; c < chunks; ++c) {
        cuMemCreate(&h[c], g, &prop, 0);
        cuMemMap(va + c * g, g, 0, h[c], 0);
    }
    CUmemAccessDesc d = {};
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = 0;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    cuMemSetAccess(va, g, &d, 1);  // the first granule only
    int* good = (int*)va;
    touch<<<1, 32>>>(good, 32);
    std::printf("good=%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    if (argc > 1 && std::strcmp(argv[1], "leak") == 0) return 0;  // exits with the granule mapped
    int* bad = (int*)(va + g);
    touch<<<1, 32>>>(bad, 32);  // VMM_FAULT_LINE
    std::printf("bad=%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "fault") == 0) return fault_main(argc - 1, argv + 1);
    CHECK(cuInit(0));
    int devices = 0;
    CHECK(cuDeviceGetCount(&devices));
    int vmm = -1;
    CHECK(cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
    std::printf("vmm_supported=%d devices=%d\n", vmm, devices);

    CUmemAllocationProp prop = device_prop(0, false);
    size_t g = 0;
    CHECK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t rec = 0;
    CHECK(cuMemGetAllocationGranularity(&rec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    CUmemAllocationProp bad = device_prop(devices, false);
    std::printf("granularity=%zu recommended=%zu granularity_bad_device=%s\n", g, rec,
                N(cuMemGetAllocationGranularity(&g, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM)));

    // ---- one chunk: reserve two granules, map the first, use it --------------------------------
    CUdeviceptr va = 0;
    CHECK(cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
    CUmemGenericAllocationHandle h = 0;
    CHECK(cuMemCreate(&h, g, &prop, 0));
    CHECK(cuMemMap(va, g, 0, h, 0));
    CUmemLocation loc = {};
    loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
    loc.id = 0;
    unsigned long long flags = 99;
    CHECK(cuMemGetAccess(&flags, &loc, va));
    std::printf("access_after_map=%llu\n", flags);
    const size_t n = g / sizeof(int);
    std::vector<int> host(n, 7);
    // Mapped, but no device has access yet: a copy there is refused as for any invalid pointer.
    std::printf("copy_before_access=%s\n",
                cudaGetErrorName(cudaMemcpy((void*)va, host.data(), 64, cudaMemcpyHostToDevice)));
    CHECK(grant(va, g, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
    CHECK(cuMemGetAccess(&flags, &loc, va + g - 1));
    std::printf("access_after_set=%llu\n", flags);
    std::printf("aligned_start=%d\n", (int)(va % g == 0));
    fill<<<64, 256>>>((int*)va, n, 3, 1);
    std::printf("fill=%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    std::printf("copy_back=%s\n", cudaGetErrorName(cudaMemcpy(host.data(), (void*)va, g, cudaMemcpyDeviceToHost)));
    std::printf("one_chunk_ok=%d\n", (int)is_fill(host, 3, 1));
    cudaPointerAttributes attr;
    const bool known = cudaPointerGetAttributes(&attr, (void*)(va + 100)) == cudaSuccess;
    std::printf("pointer_type=%d\n", known ? (int)attr.type : -1);
    // The reservation's second granule is not mapped: copies into it are refused.
    std::printf("copy_unmapped=%s\n",
                cudaGetErrorName(cudaMemcpy((void*)(va + g), host.data(), 64, cudaMemcpyHostToDevice)));
    std::printf("copy_across_end=%s\n",
                cudaGetErrorName(cudaMemcpy((void*)(va + g - 32), host.data(), 64, cudaMemcpyHostToDevice)));
    std::printf("memset_mapped=%s\n", cudaGetErrorName(cudaMemset((void*)va, 0, 256)));
    // cudaFree cannot take mapped memory away: the range stays usable.
    std::printf("cuda_free_mapped=%s\n", cudaGetErrorName(cudaFree((void*)va)));
    std::printf("memset_after_free=%s\n", cudaGetErrorName(cudaMemset((void*)va, 0, 256)));

    // ---- errors ---------------------------------------------------------------------------------
    CUmemGenericAllocationHandle h2 = 0;
    std::printf("create_misaligned=%s\n", N(cuMemCreate(&h2, g + 4096, &prop, 0)));
    std::printf("create_zero=%s\n", N(cuMemCreate(&h2, 0, &prop, 0)));
    std::printf("map_twice=%s\n", N(cuMemMap(va, g, 0, h, 0)));
    std::printf("map_misaligned_address=%s\n", N(cuMemMap(va + g + 4096, g, 0, h, 0)));
    std::printf("map_past_reservation=%s\n", N(cuMemMap(va + g, 2 * g, 0, h, 0)));
    std::printf("map_past_allocation=%s\n", N(cuMemMap(va + g, g, g, h, 0)));
    std::printf("access_misaligned=%s\n", N(grant(va, g / 2, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)));
    std::printf("access_unmapped=%s\n", N(grant(va, 2 * g, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE)));
    std::printf("unmap_unmapped=%s\n", N(cuMemUnmap(va + g, g)));
    std::printf("free_mapped=%s\n", N(cuMemAddressFree(va, 2 * g)));
    std::printf("free_wrong_size=%s\n", N(cuMemAddressFree(va, g)));
    CUdeviceptr other = 0;
    std::printf("reserve_flags=%s\n", N(cuMemAddressReserve(&other, g, 0, 0, 1)));
    std::printf("reserve_alignment=%s\n", N(cuMemAddressReserve(&other, g, 3 * 4096, 0, 0)));

    // ---- release while mapped; retain; properties ------------------------------------------------
    CHECK(cuMemRelease(h));  // the memory stays: it is still mapped
    fill<<<64, 256>>>((int*)va, n, 5, 2);
    cudaDeviceSynchronize();
    cudaMemcpy(host.data(), (void*)va, g, cudaMemcpyDeviceToHost);
    std::printf("used_after_release=%d\n", (int)is_fill(host, 5, 2));
    CUmemGenericAllocationHandle again = 0;
    CHECK(cuMemRetainAllocationHandle(&again, (void*)(va + 12345)));
    CUmemAllocationProp got = {};
    CHECK(cuMemGetAllocationPropertiesFromHandle(&got, again));
    std::printf("retained_same=%d prop_type=%d prop_location=%d,%d\n", (int)(again == h), (int)got.type,
                (int)got.location.type, got.location.id);
    CHECK(cuMemRelease(again));
    std::printf("retain_unmapped=%s\n", N(cuMemRetainAllocationHandle(&again, (void*)(va + g))));
    CHECK(cuMemUnmap(va, g));
    std::printf("copy_after_unmap=%s\n",
                cudaGetErrorName(cudaMemcpy(host.data(), (void*)va, 64, cudaMemcpyDeviceToHost)));
    std::printf("release_freed=%s\n", N(cuMemRelease(h)));
    std::printf("unmap_twice=%s\n", N(cuMemUnmap(va, g)));
    CHECK(cuMemAddressFree(va, 2 * g));
    // The freed range as a hint: it is free again, so the reservation lands there.
    CHECK(cuMemAddressReserve(&other, g, 0, va, 0));
    std::printf("hint_honoured=%d\n", (int)(other == va));
    CHECK(cuMemAddressFree(other, g));

    // ---- two chunks side by side, one array (vectorAddMMAP's layout) ----------------------------
    const size_t total = 2 * g;
    const size_t count = total / sizeof(float);
    CUdeviceptr a = 0, b = 0, c = 0;
    CUdeviceptr* arrays[3] = {&a, &b, &c};
    for (CUdeviceptr* p : arrays) {
        CHECK(cuMemAddressReserve(p, total, 0, 0, 0));
        for (int chunk = 0; chunk < 2; ++chunk) {
            CUmemAllocationProp cp = device_prop(chunk % devices, false);
            CUmemGenericAllocationHandle ch = 0;
            CHECK(cuMemCreate(&ch, g, &cp, 0));
            CHECK(cuMemMap(*p + chunk * g, g, 0, ch, 0));
            CHECK(cuMemRelease(ch));
        }
        std::vector<CUmemAccessDesc> desc(devices);
        for (int d = 0; d < devices; ++d) {
            desc[d].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
            desc[d].location.id = d;
            desc[d].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        }
        CHECK(cuMemSetAccess(*p, total, desc.data(), desc.size()));
    }
    std::vector<float> ha(count), hb(count), hc(count, -1.0f);
    for (size_t i = 0; i < count; ++i) {
        ha[i] = (float)(i % 1000) * 0.5f;
        hb[i] = (float)(i % 7) - 3.0f;
    }
    std::printf("copy_a=%s\n", cudaGetErrorName(cudaMemcpy((void*)a, ha.data(), total, cudaMemcpyHostToDevice)));
    std::printf("copy_b=%s\n", cudaGetErrorName(cudaMemcpy((void*)b, hb.data(), total, cudaMemcpyDefault)));
    add<<<128, 256>>>((const float*)a, (const float*)b, (float*)c, count);
    std::printf("add=%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    std::printf("copy_c=%s\n", cudaGetErrorName(cudaMemcpy(hc.data(), (void*)c, total, cudaMemcpyDeviceToHost)));
    bool ok = true;
    for (size_t i = 0; i < count; ++i) ok = ok && hc[i] == ha[i] + hb[i];
    std::printf("two_chunks_ok=%d\n", (int)ok);
    CUmemGenericAllocationHandle first = 0, second = 0;
    CHECK(cuMemRetainAllocationHandle(&first, (void*)c));
    CHECK(cuMemRetainAllocationHandle(&second, (void*)(c + g)));
    CUmemAllocationProp p1 = {}, p2 = {};
    CHECK(cuMemGetAllocationPropertiesFromHandle(&p1, first));
    CHECK(cuMemGetAllocationPropertiesFromHandle(&p2, second));
    std::printf("chunk_devices=%d,%d\n", p1.location.id, p2.location.id);
    CHECK(cuMemRelease(first));
    CHECK(cuMemRelease(second));
    std::printf("unmap_half=%s\n", N(cuMemUnmap(a, g / 2)));
    for (CUdeviceptr* p : arrays) {
        CHECK(cuMemUnmap(*p, total));  // both chunks in one call
        CHECK(cuMemAddressFree(*p, total));
    }

    // ---- export and import through a file descriptor: two views of one memory -------------------
    CUmemAllocationProp sp = device_prop(0, true);
    CUmemGenericAllocationHandle hx = 0, hy = 0;
    CHECK(cuMemCreate(&hx, g, &sp, 0));
    int fd = -1;
    CHECK(cuMemExportToShareableHandle(&fd, hx, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CHECK(cuMemImportFromShareableHandle(&hy, (void*)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    CUmemGenericAllocationHandle plain = 0;
    CHECK(cuMemCreate(&plain, g, &prop, 0));
    int fd2 = -1;
    std::printf("export_not_requested=%s\n",
                N(cuMemExportToShareableHandle(&fd2, plain, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)));
    std::printf("import_bad_fd=%s\n",
                N(cuMemImportFromShareableHandle(&hy, (void*)(intptr_t)-1, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)));
    CHECK(cuMemRelease(plain));
    CUdeviceptr vx = 0, vy = 0;
    CHECK(cuMemAddressReserve(&vx, g, 0, 0, 0));
    CHECK(cuMemAddressReserve(&vy, g, 0, 0, 0));
    CHECK(cuMemMap(vx, g, 0, hx, 0));
    CHECK(cuMemMap(vy, g, 0, hy, 0));
    CHECK(grant(vx, g, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
    CHECK(grant(vy, g, 0, CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
    fill<<<64, 256>>>((int*)vx, n, 11, -4);
    cudaDeviceSynchronize();
    std::vector<int> seen(n, 0);
    cudaMemcpy(seen.data(), (void*)vy, g, cudaMemcpyDeviceToHost);
    std::printf("shared_view=%d\n", (int)is_fill(seen, 11, -4));

    // ---- read-only access ------------------------------------------------------------------------
    CHECK(grant(vy, g, 0, CU_MEM_ACCESS_FLAGS_PROT_READ));
    CHECK(cuMemGetAccess(&flags, &loc, vy));
    std::printf("access_read=%llu\n", flags);
    std::printf("copy_into_read_only=%s\n",
                cudaGetErrorName(cudaMemcpy((void*)vy, host.data(), 64, cudaMemcpyHostToDevice)));
    cudaGetLastError();  // the refused copies above set it
    CHECK(cuMemUnmap(vx, g));
    CHECK(cuMemUnmap(vy, g));
    CHECK(cuMemRelease(hx));
    CHECK(cuMemRelease(hy));
    CHECK(cuMemAddressFree(vx, g));
    CHECK(cuMemAddressFree(vy, g));
    std::printf("last_error=%s done=1\n", cudaGetErrorName(cudaGetLastError()));
    return 0;
}
