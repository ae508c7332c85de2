// Dynamic parallelism: a recursive quicksort (each side sorted by a child grid in its own stream)
// and a tree sum (each grid splits its range between two child grids; leaves reduce in shared
// memory with barriers). Reads unsigned integers from argv[1], writes the sorted values to
// argv[2] and prints sum=... and the launch status; the test compares them with sorted()/numpy.
// With "semantics" or "errors CASE" it runs only the cases of that name below: one program for all,
// so that each mode builds it once.
#include <cuda_runtime.h>
#include <cassert>
#include <cstring>
#include <cstdio>
#include <vector>

constexpr int kLeaf = 256;  // a tree-sum leaf: one block of kLeaf threads

__device__ void insertion_sort(unsigned* a, int lo, int hi) {
    for (int i = lo + 1; i <= hi; ++i) {
        unsigned v = a[i];
        int j = i - 1;
        while (j >= lo && a[j] > v) {
            a[j + 1] = a[j];
            --j;
        }
        a[j + 1] = v;
    }
}

__global__ void quicksort(unsigned* a, int lo, int hi, int depth) {
    if (hi - lo < 8 || depth >= 20) {
        insertion_sort(a, lo, hi);
        return;
    }
    const unsigned pivot = a[lo + (hi - lo) / 2];
    int i = lo, j = hi;
    while (i <= j) {
        while (a[i] < pivot) ++i;
        while (a[j] > pivot) --j;
        if (i <= j) {
            unsigned t = a[i];
            a[i] = a[j];
            a[j] = t;
            ++i;
            --j;
        }
    }
    if (lo < j) {
        cudaStream_t s;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        quicksort<<<1, 1, 0, s>>>(a, lo, j, depth + 1);
        cudaStreamDestroy(s);
    }
    if (i < hi) {
        cudaStream_t s;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        quicksort<<<1, 1, 0, s>>>(a, i, hi, depth + 1);
        cudaStreamDestroy(s);
    }
}

__global__ void leaf_sum(const unsigned* a, int n, unsigned long long* out) {
    __shared__ unsigned long long part[kLeaf];
    const int t = threadIdx.x;
    part[t] = t < n ? a[t] : 0ull;
    __syncthreads();
    for (int s = kLeaf / 2; s > 0; s /= 2) {
        if (t < s) part[t] += part[t + s];
        __syncthreads();
    }
    if (t == 0) atomicAdd(out, part[0]);
}

// Launched from a __device__ function: a device-side launch need not be in the kernel itself.
__device__ void split(const unsigned* a, int n, unsigned long long* out);

__global__ void tree_sum(const unsigned* a, int n, unsigned long long* out) {
    if (n <= kLeaf) {
        leaf_sum<<<1, kLeaf>>>(a, n, out);
    } else {
        split(a, n, out);
    }
}

__device__ void split(const unsigned* a, int n, unsigned long long* out) {
    const int half = n / 2;
    tree_sum<<<1, 1>>>(a, half, out);
    tree_sum<<<1, 1, 0, cudaStreamFireAndForget>>>(a + half, n - half, out);
}

// ---- "semantics": what a device-side launch sees and returns. Prints key=value lines; the test
// states what CUDA 12/13 documents for each.
__device__ int g_order[8];
__device__ int g_next;

__global__ void record(int slot) { g_order[slot] = atomicAdd(&g_next, 1); }

// Tail launch first, then a default-stream and a fire-and-forget child: the tail runs last.
__global__ void launch_order() {
    record<<<1, 1, 0, cudaStreamTailLaunch>>>(0);
    record<<<1, 1>>>(1);
    record<<<1, 1, 0, cudaStreamFireAndForget>>>(2);
}

// Arguments are converted and copied at the launch: later changes of the variable do not reach
// the child, and a double argument arrives as the float parameter.
__global__ void take(int v, float f, int* out) {
    out[0] = v;
    out[1] = (int)(f * 4.0f);
}
__global__ void convert_at_launch(int* out) {
    int v = 5;
    take<<<1, 1>>>(v, 2.75, out);
    v = 99;
    out[2] = v;
}

// Nesting: each grid launches the next level and records the launch's error for its depth.
__global__ void nest(int depth, int* err) {
    nest<<<1, 1>>>(depth + 1, err);
    err[depth] = (int)cudaGetLastError();
}

// A launch error is the launching thread's own: thread 0 launches with 2048 threads per block.
__global__ void child_noop() {}
__global__ void bad_config(int* err) {
    if (threadIdx.x == 0) child_noop<<<1, 2048>>>();
    __syncthreads();
    err[threadIdx.x] = (int)cudaPeekAtLastError();
    __syncthreads();
    err[2 + threadIdx.x] = (int)cudaGetLastError();
    err[4 + threadIdx.x] = (int)cudaGetLastError();  // cleared by the read before
}

// A child with dynamic shared memory and barriers; grandchildren write the results.
__global__ void grandchild(int* out, int i, int v) { out[i] = v; }
__global__ void shared_child(int* out) {
    extern __shared__ int buf[];
    buf[threadIdx.x] = (int)threadIdx.x + 1;
    __syncthreads();
    if (threadIdx.x == 0) {
        int s = 0;
        for (int i = 0; i < (int)blockDim.x; ++i) s += buf[i];
        grandchild<<<1, 1>>>(out, 0, s);
    }
}
__global__ void shared_parent(int* out) { shared_child<<<1, 32, 32 * sizeof(int)>>>(out); }

// A copy issued after a child launch in the same stream runs after the child.
__global__ void write_seven(int* p) { *p = 7; }
__global__ void copy_after_child(int* src, int* dst) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    write_seven<<<1, 1, 0, s>>>(src);
    cudaMemcpyAsync(dst, src, sizeof(int), cudaMemcpyDeviceToDevice, s);
    cudaStreamDestroy(s);
}

// The device runtime queries and device heap.
__global__ void queries(int* out) {
    int dev = -1, threads = 0;
    out[0] = (int)cudaGetDevice(&dev);
    out[1] = dev;
    out[2] = (int)cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerBlock, dev);
    out[3] = threads;
    int* p = (int*)malloc(4 * sizeof(int));
    p[3] = 42;
    out[4] = p[3];
    free(p);
    int* q = nullptr;
    out[5] = (int)cudaMalloc((void**)&q, 2 * sizeof(int));
    q[1] = 17;
    out[6] = q[1];
    out[7] = (int)cudaFree(q);
}

static int semantics_main() {
    int* d = nullptr;
    cudaMalloc(&d, 64 * sizeof(int));
    int h[64];

    std::printf("set_limit=%d\n", (int)cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096));

    launch_order<<<1, 1>>>();
    cudaDeviceSynchronize();
    int order[3];
    cudaMemcpyFromSymbol(order, g_order, sizeof order);
    std::printf("tail=%d\ndefault=%d\nfire_and_forget=%d\n", order[0], order[1], order[2]);

    convert_at_launch<<<1, 1>>>(d);
    cudaDeviceSynchronize();
    cudaMemcpy(h, d, 3 * sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("arg_int=%d\narg_float_x4=%d\nparent_after=%d\n", h[0], h[1], h[2]);

    cudaMemset(d, 0xff, 64 * sizeof(int));
    nest<<<1, 1>>>(0, d);
    std::printf("nest_status=%d\n", (int)cudaDeviceSynchronize());
    cudaMemcpy(h, d, 30 * sizeof(int), cudaMemcpyDeviceToHost);
    int deepest_ok = -1;
    while (deepest_ok + 1 < 30 && h[deepest_ok + 1] == 0) ++deepest_ok;
    std::printf("deepest_ok_launcher=%d\ndepth_error=%d\nbeyond=%d\n", deepest_ok, h[deepest_ok + 1],
                h[deepest_ok + 2]);

    bad_config<<<1, 2>>>(d);
    std::printf("bad_config_status=%d\n", (int)cudaDeviceSynchronize());
    cudaMemcpy(h, d, 6 * sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("peek0=%d\npeek1=%d\nget0=%d\nget1=%d\nagain0=%d\n", h[0], h[1], h[2], h[3], h[4]);

    shared_parent<<<1, 1>>>(d);
    cudaDeviceSynchronize();
    cudaMemcpy(h, d, sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("shared_sum=%d\n", h[0]);

    cudaMemset(d, 0, 64 * sizeof(int));
    copy_after_child<<<1, 1>>>(d, d + 1);
    cudaDeviceSynchronize();
    cudaMemcpy(h, d, 2 * sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("copied=%d\n", h[1]);

    queries<<<1, 1>>>(d);
    cudaDeviceSynchronize();
    cudaMemcpy(h, d, 8 * sizeof(int), cudaMemcpyDeviceToHost);
    std::printf("get_device=%d\ndevice=%d\nattr_status=%d\nmax_threads=%d\nheap=%d\n", h[0], h[1], h[2], h[3],
                h[4]);
    std::printf("malloc_status=%d\nmalloc_value=%d\nfree_status=%d\n", h[5], h[6], h[7]);
    std::printf("last=%d\n", (int)cudaGetLastError());
    cudaFree(d);
    return 0;
}

// ---- "errors CASE": errors in child grids. CASE is one of:
//   trap    a grandchild calls __trap(): the host's launch fails with sticky cudaErrorLaunchFailure
//   assert  a child's assert fails: sticky cudaErrorAssert
//   oob     a child writes past its buffer (memcheck names the child kernel)
//   spin    the parent spins until its child sets a flag: the child cannot run before the parent
//           ends here, so the launch runs into the time limit (cudaErrorLaunchTimeout)
__global__ void grandchild_trap(int* p) {
    if (threadIdx.x == 3) __trap();
    p[threadIdx.x] = 1;
}
__global__ void child_trap(int* p) { grandchild_trap<<<1, 8>>>(p); }
__global__ void parent_trap(int* p) { child_trap<<<1, 1>>>(p); }

__global__ void child_assert(int v) { assert(v == 0); }
__global__ void parent_assert() { child_assert<<<1, 1>>>(1); }

__global__ void child_oob(int* p, int n) { p[n + threadIdx.x] = 1; }
__global__ void parent_oob(int* p, int n) { child_oob<<<1, 4>>>(p, n); }

__global__ void child_flag(volatile int* flag) { *flag = 1; }
__global__ void parent_spin(volatile int* flag) {
    child_flag<<<1, 1>>>(flag);
    while (*flag == 0) {
    }
}

static int errors_main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "";
    int* d = nullptr;
    cudaMalloc(&d, 8 * sizeof(int));
    cudaMemset(d, 0, 8 * sizeof(int));
    if (std::strcmp(what, "trap") == 0) {
        parent_trap<<<1, 1>>>(d);
    } else if (std::strcmp(what, "assert") == 0) {
        parent_assert<<<1, 1>>>();
    } else if (std::strcmp(what, "oob") == 0) {
        parent_oob<<<1, 1>>>(d, 8);
    } else if (std::strcmp(what, "spin") == 0) {
        parent_spin<<<1, 1>>>(d);
    } else {
        std::fprintf(stderr, "usage: %s trap|assert|oob|spin\n", argv[0]);
        return 2;
    }
    std::printf("sync=%d\n", (int)cudaDeviceSynchronize());
    std::printf("after=%d\n", (int)cudaMemset(d, 0, sizeof(int)));  // a sticky error stays
    cudaFree(d);
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "semantics") == 0) return semantics_main();
    if (argc > 1 && std::strcmp(argv[1], "errors") == 0) return errors_main(argc - 1, argv + 1);
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s IN OUT | semantics | errors CASE\n", argv[0]);
        return 2;
    }
    std::vector<unsigned> h;
    FILE* in = std::fopen(argv[1], "r");
    if (in == nullptr) return 2;
    unsigned v;
    while (std::fscanf(in, "%u", &v) == 1) h.push_back(v);
    std::fclose(in);
    const int n = (int)h.size();
    unsigned* d = nullptr;
    unsigned long long* sum = nullptr;
    cudaMalloc(&d, n * sizeof(unsigned));
    cudaMalloc(&sum, sizeof(unsigned long long));
    cudaMemcpy(d, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice);
    cudaMemset(sum, 0, sizeof(unsigned long long));
    tree_sum<<<1, 1>>>(d, n, sum);  // before the sort: the sum must not depend on the order
    quicksort<<<1, 1>>>(d, 0, n - 1, 0);
    const cudaError_t e = cudaDeviceSynchronize();
    unsigned long long total = 0;
    cudaMemcpy(h.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost);
    cudaMemcpy(&total, sum, sizeof total, cudaMemcpyDeviceToHost);
    FILE* out = std::fopen(argv[2], "w");
    if (out == nullptr) return 2;
    for (unsigned x : h) std::fprintf(out, "%u\n", x);
    std::fclose(out);
    std::printf("status=%d\nsum=%llu\n", (int)e, total);
    cudaFree(d);
    cudaFree(sum);
    return 0;
}
