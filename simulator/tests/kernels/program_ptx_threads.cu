// Inline PTX between threads: warp instructions (shfl.sync with its clamp and segment mask and
// predicate output, vote, match, redux, the lane registers, CUB's shuffle steps), loads and stores
// with state spaces and memory orders, atomics, fences, barriers, nanosleep, exit and trap. Each
// result is printed as a "kernel thread : results..." line (hex) that test_ptx_threads.py checks against
// the PTX ISA's definitions; `... trap` runs only the trap, `... named` a named barrier. Also built
// by `nvcc -arch=sm_80 -c`.
#include <cstdio>
#include <cstring>

typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short u16;

#define CUDA_OK(call)                                                                      \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            printf("failed %s at line %d: %s\n", #call, __LINE__, cudaGetErrorName(e_)); \
            return 1;                                                                      \
        }                                                                                  \
    } while (0)

// ---- warp-level instructions and lane registers (one block of two warps) ------------------------------
constexpr int kWarp = 40;
#define SHFL(MODE, B, C, K)                                                                          \
    asm volatile("{\n\t.reg .pred p;\n\t.reg .u32 v;\n\tshfl.sync." #MODE ".b32 v|p, %2, %3, %4, 0xffffffff;\n\t" \
                 "mov.u32 %0, v;\n\tselp.u32 %1, 1, 0, p;\n\t}"                                      \
                 : "=r"(r), "=r"(p)                                                                  \
                 : "r"(v), "r"(B), "r"(C));                                                          \
    o[K] = r | ((u64)p << 32)
#define VOTE(MODE, VALUE, K)                                                                                    \
    asm volatile("{\n\t.reg .pred a, d;\n\tsetp.ne.u32 a, %1, 0;\n\tvote.sync." #MODE ".pred d, a, 0xffffffff;\n\t" \
                 "selp.u32 %0, 1, 0, d;\n\t}"                                                                   \
                 : "=r"(r)                                                                                      \
                 : "r"(VALUE));                                                                                 \
    o[K] = r

__global__ void warp_kernel(const u32* in, u64* out) {
    const u32 tid = threadIdx.x;
    const u32 v = in[tid];
    u64* o = out + (size_t)tid * kWarp;
    u32 r, p, lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    o[0] = lane;
    asm("mov.u32 %0, %%warpid;" : "=r"(r));
    o[1] = r;
    asm("mov.u32 %0, %%lanemask_eq;" : "=r"(r));
    o[2] = r;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
    o[3] = r;
    asm("mov.u32 %0, %%lanemask_le;" : "=r"(r));
    o[4] = r;
    asm("mov.u32 %0, %%lanemask_ge;" : "=r"(r));
    o[5] = r;
    asm("mov.u32 %0, %%lanemask_gt;" : "=r"(r));
    o[6] = r;
    SHFL(up, 1, 0, 7);
    SHFL(up, 5, 0, 8);
    SHFL(up, 3, (32 - 8) << 8, 9);
    SHFL(down, 1, 0x1f, 10);
    SHFL(down, 6, ((32 - 16) << 8) | 0x1f, 11);
    SHFL(down, 3, 0x10, 12);
    SHFL(bfly, 3, 0x1f, 13);
    SHFL(bfly, 9, ((32 - 8) << 8) | 0x1f, 14);
    SHFL(bfly, 5, ((32 - 8) << 8) | 0x1f, 15);
    SHFL(idx, 7, 0x1f, 16);
    SHFL(idx, 2, ((32 - 4) << 8) | 0x1f, 17);
    SHFL(idx, lane ^ 1, 0x1f, 18);
    asm volatile("shfl.sync.idx.b32 %0, %1, 0, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v));
    o[19] = r;
    VOTE(all, v & 1, 20);
    VOTE(any, v & 1, 21);
    VOTE(uni, v & 1, 22);
    VOTE(uni, (u32)(tid < 32), 23);
    VOTE(all, (u32)(tid < 64), 24);
    asm volatile("{\n\t.reg .pred a;\n\tsetp.gt.u32 a, %1, %2;\n\tvote.sync.ballot.b32 %0, a, 0xffffffff;\n\t}"
                 : "=r"(r)
                 : "r"(v), "r"(0x80000000u));
    o[25] = r;
    asm volatile("{\n\t.reg .pred a;\n\tsetp.gt.u32 a, %1, %2;\n\tvote.sync.ballot.b32 %0, !a, 0xffffffff;\n\t}"
                 : "=r"(r)
                 : "r"(v), "r"(0x80000000u));
    o[26] = r;
    asm volatile("match.any.sync.b32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v % 4));
    o[27] = r;
    asm volatile("{\n\t.reg .pred q;\n\tmatch.all.sync.b32 %0|q, %2, 0xffffffff;\n\tselp.u32 %1, 1, 0, q;\n\t}"
                 : "=r"(r), "=r"(p)
                 : "r"(tid < 32 ? 7u : v));
    o[28] = r | ((u64)p << 32);
    asm volatile("match.any.sync.b64 %0, %1, 0xffffffff;" : "=r"(r) : "l"((u64)(v % 3) << 40));
    o[29] = r;
    asm volatile("redux.sync.add.u32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v));
    o[30] = r;
    asm volatile("redux.sync.min.s32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v));
    o[31] = r;
    asm volatile("redux.sync.max.u32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v));
    o[32] = r;
    asm volatile("redux.sync.or.b32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(1u << (v % 32)));
    o[33] = r;
    asm volatile("activemask.b32 %0;" : "=r"(r));
    o[34] = r;
    asm volatile("bar.warp.sync 0xffffffff;" ::: "memory");
    // CUB's guarded reduction step: shuffle down with the predicate output, add when in range.
    u32 sum = v & 0xffff;
    for (int offset = 1; offset < 32; offset *= 2) {
        u32 output;
        asm volatile("{\n\t.reg .u32 r0;\n\t.reg .pred p;\n\tshfl.sync.down.b32 r0|p, %1, %2, %3, %5;\n\t"
                     "@p add.u32 r0, r0, %4;\n\tmov.u32 %0, r0;\n\t}"
                     : "=r"(output)
                     : "r"(sum), "r"(offset), "r"(31), "r"(sum), "r"(0xffffffffu));
        sum = output;
    }
    o[35] = sum;
    // CUB's 64-bit step: halves shuffled apart, then put back together.
    const u64 wide = ((u64)v << 32) | tid;
    u64 wide_out;
    asm volatile("{\n\t.reg .u32 lo;\n\t.reg .u32 hi;\n\t.reg .pred p;\n\tmov.b64 {lo, hi}, %1;\n\t"
                 "shfl.sync.down.b32 lo|p, lo, %2, %3, %4;\n\tshfl.sync.down.b32 hi|p, hi, %2, %3, %4;\n\t"
                 "mov.b64 %0, {lo, hi};\n\t@p add.u64 %0, %0, %1;\n\t}"
                 : "=l"(wide_out)
                 : "l"(wide), "r"(2), "r"(31), "r"(0xffffffffu));
    o[36] = wide_out;
}

// ---- loads, stores and atomics (one block of 64 threads) --------------------------------------------
constexpr int kMemory = 18;
constexpr int kCounters = 12;
__global__ void memory_kernel(const float* src, const signed char* bytes, u32* words, u32* counters, float* fsum,
                              double* dsum, u64* big, u32* data, u64* out) {
    __shared__ u32 sh[64];
    __shared__ u32 shcount;
    const u32 tid = threadIdx.x;
    u64* o = out + (size_t)tid * kMemory;
    if (tid == 0) shcount = 0;
    float f0, f1, f2, f3;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(f0), "=f"(f1), "=f"(f2), "=f"(f3)
        : "l"(src + 4 * tid));
    o[0] = __float_as_uint(f0);
    o[1] = __float_as_uint(f1);
    o[2] = __float_as_uint(f2);
    o[3] = __float_as_uint(f3);
    u32 r;
    asm("ld.global.u8 %0, [%1];" : "=r"(r) : "l"(bytes + tid));
    o[4] = r;
    asm("ld.global.s8 %0, [%1];" : "=r"(r) : "l"(bytes + tid));
    o[5] = r;
    long long wide;
    asm("ld.global.s16 %0, [%1+2];" : "=l"(wide) : "l"(bytes + 2 * (tid % 30)));
    o[6] = (u64)wide;
    asm volatile("st.global.wb.v2.u32 [%0], {%1, %2};" ::"l"(words + 2 * tid), "r"(tid * 3), "r"(~tid) : "memory");
    asm volatile("{\n\t.reg .u64 s;\n\tcvta.to.shared.u64 s, %0;\n\tst.volatile.shared.u32 [s], %1;\n\t}" ::"l"(sh + tid),
                 "r"(tid * 5)
                 : "memory");
    asm volatile("bar.sync 0;" ::: "memory");
    asm volatile("{\n\t.reg .u64 s;\n\tcvta.to.shared.u64 s, %1;\n\tld.volatile.shared.u32 %0, [s+4];\n\t}"
                 : "=r"(r)
                 : "l"(sh + (tid & ~1u)));
    o[7] = r;
    asm volatile("ld.volatile.u32 %0, [%1];" : "=r"(r) : "l"(sh + 63 - tid));
    o[8] = r;
    // A release store and an acquire load of a flag (ordered here by the barrier between them).
    if (tid == 0) {
        data[0] = 1234;
        asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(data + 1), "r"(1u) : "memory");
    }
    asm volatile("bar.sync 0;" ::: "memory");
    u32 flag = 0, seen = 0;
    if (tid == 63) {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(flag) : "l"(data + 1) : "memory");
        asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(data) : "memory");
    }
    o[9] = flag;
    o[10] = seen;
    asm volatile("atom.global.add.u32 %0, [%1], 1;" : "=r"(r) : "l"(counters + 0) : "memory");
    o[11] = r;
    asm volatile("red.global.add.u32 [%0], %1;" ::"l"(counters + 1), "r"(tid) : "memory");
    asm volatile("atom.global.min.s32 %0, [%1], %2;" : "=r"(r) : "l"(counters + 2), "r"((int)(tid * 7 % 61) - 30) : "memory");
    asm volatile("atom.global.max.u32 %0, [%1], %2;" : "=r"(r) : "l"(counters + 3), "r"(tid * 13 % 97) : "memory");
    asm volatile("atom.global.inc.u32 %0, [%1], 16;" : "=r"(r) : "l"(counters + 4) : "memory");
    o[12] = r;
    asm volatile("atom.global.dec.u32 %0, [%1], 20;" : "=r"(r) : "l"(counters + 5) : "memory");
    asm volatile("atom.global.and.b32 %0, [%1], %2;" : "=r"(r) : "l"(counters + 6), "r"(~(1u << (tid % 32))) : "memory");
    asm volatile("atom.global.or.b32 %0, [%1], %2;" : "=r"(r) : "l"(counters + 7), "r"(1u << (tid % 29)) : "memory");
    asm volatile("atom.global.xor.b32 %0, [%1], %2;" : "=r"(r) : "l"(counters + 8), "r"(tid * 0x01010101u) : "memory");
    asm volatile("atom.global.exch.b32 %0, [%1], %2;" : "=r"(r) : "l"(counters + 9), "r"(tid + 100) : "memory");
    o[13] = r;
    // A compare-and-swap loop adding tid + 1.
    u32 old, got;
    do {
        asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(old) : "l"(counters + 10) : "memory");
        asm volatile("atom.global.cas.b32 %0, [%1], %2, %3;"
                     : "=r"(got)
                     : "l"(counters + 10), "r"(old), "r"(old + tid + 1)
                     : "memory");
    } while (got != old);
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 2;" : "=r"(r) : "l"(counters + 11) : "memory");
    asm volatile("atom.global.add.f32 %0, [%1], %2;" : "=f"(f0) : "l"(fsum), "f"((float)tid * 0.5f) : "memory");
    asm volatile("red.global.add.f64 [%0], %1;" ::"l"(dsum), "d"((double)tid * 0.25) : "memory");
    asm volatile("red.global.add.u64 [%0], %1;" ::"l"(big), "l"(1ull << 33) : "memory");
    asm volatile("{\n\t.reg .u64 s;\n\tcvta.to.shared.u64 s, %0;\n\tred.shared.add.u32 [s], 3;\n\t}" ::"l"(&shcount)
                 : "memory");
    asm volatile("fence.acq_rel.gpu;\n\tmembar.gl;\n\tmembar.cta;\n\tfence.sc.sys;\n\tfence.proxy.alias;" ::: "memory");
    asm volatile("prefetch.global.L2 [%0];" ::"l"(src + tid));
    u64 policy;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("ld.global.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(r) : "l"(words + 2 * tid), "l"(policy));
    o[14] = r;
    // Local memory through its window (cvta.to.local), and a 16-bit compare-and-swap.
    u32 local[4] = {tid, tid + 1, tid + 2, tid + 3};
    asm volatile("{\n\t.reg .u64 l;\n\tcvta.to.local.u64 l, %1;\n\tst.local.u32 [l+4], %2;\n\tld.local.u32 %0, [l+8];\n\t}"
                 : "=r"(r)
                 : "l"(local), "r"(tid * 9)
                 : "memory");
    o[16] = r + local[1];
    if (tid == 0) {
        u16 seen16;
        asm volatile("atom.global.cas.b16 %0, [%1], %2, %3;"
                     : "=h"(seen16)
                     : "l"((u16*)(data + 2)), "h"((u16)0), "h"((u16)0x1234)
                     : "memory");
        o[17] = seen16 | ((u64)((volatile u16*)(data + 2))[0] << 16);
    }
    asm volatile("bar.sync 0;" ::: "memory");
    o[15] = shcount;
}

// ---- barriers, sleep and exit (blocks of 128 threads) ---------------------------------------------
constexpr int kBarrier = 8;
constexpr int kBarrierBlocks = 3;
__device__ void exit_thread() { asm volatile("exit;"); }

__global__ void barrier_kernel(u32* out) {
    __shared__ u32 buf[128];
    __shared__ u32 flag;
    const u32 tid = threadIdx.x;
    u32* o = out + (blockIdx.x * 128 + tid) * kBarrier;
    buf[tid] = tid * 3;
    if (tid == 0) flag = 0;
    asm volatile("bar.sync 0;" ::: "memory");
    o[0] = buf[(tid + 1) % 128];
    asm volatile("barrier.sync.aligned 0, 128;" ::: "memory");
    buf[tid] = tid * 7;
    asm volatile("barrier.sync 0;" ::: "memory");
    o[1] = buf[127 - tid];
    u32 r;
    asm volatile("{\n\t.reg .pred p;\n\tsetp.eq.u32 p, %1, 0;\n\tbar.red.popc.u32 %0, 0, p;\n\t}" : "=r"(r) : "r"(tid % 3));
    o[2] = r;
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.lt.u32 p, %1, 200;\n\tbar.red.and.pred q, 0, p;\n\tselp.u32 %0, 1, 0, q;\n\t}"
                 : "=r"(r)
                 : "r"(tid));
    o[3] = r;
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.eq.u32 p, %1, 77;\n\tbar.red.or.pred q, 0, p;\n\tselp.u32 %0, 1, 0, q;\n\t}"
                 : "=r"(r)
                 : "r"(tid));
    o[4] = r;
    // Thread 5 waits, with nanosleep, for the flag thread 100 releases.
    if (tid == 100) {
        asm volatile("{\n\t.reg .u64 s;\n\tcvta.to.shared.u64 s, %0;\n\tst.release.cta.shared.u32 [s], 42;\n\t}" ::"l"(&flag)
                     : "memory");
    }
    if (tid == 5) {
        u32 seen = 0;
        for (;;) {
            asm volatile("{\n\t.reg .u64 s;\n\tcvta.to.shared.u64 s, %1;\n\tld.acquire.cta.shared.u32 %0, [s];\n\t}"
                         : "=r"(seen)
                         : "l"(&flag)
                         : "memory");
            if (seen != 0) break;
            asm volatile("nanosleep.u32 100;");
        }
        o[5] = seen;
    }
    asm volatile("bar.sync 0;" ::: "memory");
    // Threads 120..127 end here, inside a helper's frame (CUB's ThreadExit), and never write o[6].
    if (tid >= 120) exit_thread();
    o[6] = 1;
}

// trap, and a named barrier (refused when reached): the launch fails (separate runs: the error
// is sticky).
__global__ void trap_kernel(u32* out) {
    if (threadIdx.x == 5) asm volatile("trap;");  // TRAP
    out[threadIdx.x] = 1;
}
__global__ void named_barrier_kernel(u32* out) {
    out[threadIdx.x] = 1;
    asm volatile("bar.sync 1, 64;" ::: "memory");  // NAMED
    out[threadIdx.x] = 2;
}

// ---- host ------------------------------------------------------------------------------------------
template <class T>
static T* device_copy(const T* host, size_t count) {
    T* p = nullptr;
    cudaMalloc(&p, count * sizeof(T));
    cudaMemcpy(p, host, count * sizeof(T), cudaMemcpyHostToDevice);
    return p;
}

static void print_rows(const char* name, const u64* res, int n, int width) {
    for (int t = 0; t < n; ++t) {
        printf("%s %d :", name, t);
        for (int k = 0; k < width; ++k) printf(" %llx", res[(size_t)t * width + k]);
        printf("\n");
    }
}

int main(int argc, char** argv) {
    if (argc > 1 && (strcmp(argv[1], "trap") == 0 || strcmp(argv[1], "named") == 0)) {
        u32* d_out = nullptr;
        CUDA_OK(cudaMalloc(&d_out, 64 * sizeof(u32)));
        if (argv[1][0] == 't') trap_kernel<<<1, 32>>>(d_out);
        if (argv[1][0] == 'n') named_barrier_kernel<<<1, 64>>>(d_out);
        printf("%s=%s\n", argv[1], cudaGetErrorName(cudaDeviceSynchronize()));
        return 0;
    }
    // Warps: 64 lanes' values, pseudo-random.
    u32 lanes[64], seed = 12345u;
    for (int t = 0; t < 64; ++t) {
        seed = seed * 1664525u + 1013904223u;
        lanes[t] = seed;
        printf("lane %d %x\n", t, lanes[t]);
    }
    static u64 res[128 * kWarp];
    u32* d_lanes = device_copy(lanes, 64);
    u64* d_res = nullptr;
    CUDA_OK(cudaMalloc(&d_res, sizeof(res)));
    CUDA_OK(cudaMemset(d_res, 0, sizeof(res)));
    warp_kernel<<<1, 64>>>(d_lanes, d_res);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpy(res, d_res, 64 * kWarp * sizeof(u64), cudaMemcpyDeviceToHost));
    print_rows("warp", res, 64, kWarp);
    // Memory: 256 floats, 64 bytes, words, counters, sums.
    static float src[256];
    static signed char bytes[64];
    for (int i = 0; i < 256; ++i) src[i] = (float)i * 1.5f - 100.0f;
    for (int i = 0; i < 64; ++i) bytes[i] = (signed char)(i * 37 - 128);
    const u32 counters0[kCounters] = {0, 0, 1000, 0, 0, 0, 0xffffffffu, 0, 0, 7, 0, 0};
    float* d_src = device_copy(src, 256);
    signed char* d_bytes = device_copy(bytes, 64);
    u32* d_counters = device_copy(counters0, kCounters);
    u32* d_words = nullptr;
    u32* d_data = nullptr;
    float* d_fsum = nullptr;
    double* d_dsum = nullptr;
    u64* d_big = nullptr;
    CUDA_OK(cudaMalloc(&d_words, 128 * sizeof(u32)));
    CUDA_OK(cudaMalloc(&d_data, 4 * sizeof(u32)));
    CUDA_OK(cudaMalloc(&d_fsum, sizeof(float)));
    CUDA_OK(cudaMalloc(&d_dsum, sizeof(double)));
    CUDA_OK(cudaMalloc(&d_big, sizeof(u64)));
    CUDA_OK(cudaMemset(d_data, 0, 4 * sizeof(u32)));
    CUDA_OK(cudaMemset(d_fsum, 0, sizeof(float)));
    CUDA_OK(cudaMemset(d_dsum, 0, sizeof(double)));
    CUDA_OK(cudaMemset(d_big, 0, sizeof(u64)));
    CUDA_OK(cudaMemset(d_res, 0, sizeof(res)));
    memory_kernel<<<1, 64>>>(d_src, d_bytes, d_words, d_counters, d_fsum, d_dsum, d_big, d_data, d_res);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpy(res, d_res, 64 * kMemory * sizeof(u64), cudaMemcpyDeviceToHost));
    print_rows("memory", res, 64, kMemory);
    u32 counters[kCounters], words[128];
    float fsum;
    double dsum;
    u64 big;
    CUDA_OK(cudaMemcpy(counters, d_counters, sizeof counters, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(words, d_words, sizeof words, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(&fsum, d_fsum, sizeof fsum, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(&dsum, d_dsum, sizeof dsum, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(&big, d_big, sizeof big, cudaMemcpyDeviceToHost));
    printf("counters :");
    for (int k = 0; k < kCounters; ++k) printf(" %x", counters[k]);
    printf("\nwords :");
    for (int k = 0; k < 128; ++k) printf(" %x", words[k]);
    u32 fbits;
    u64 dbits;
    memcpy(&fbits, &fsum, sizeof fbits);
    memcpy(&dbits, &dsum, sizeof dbits);
    printf("\nsums : %x %llx %llx\n", fbits, dbits, big);
    // Barriers.
    static u32 bar[kBarrierBlocks * 128 * kBarrier];
    u32* d_bar = nullptr;
    CUDA_OK(cudaMalloc(&d_bar, sizeof bar));
    CUDA_OK(cudaMemset(d_bar, 0xee, sizeof bar));
    barrier_kernel<<<kBarrierBlocks, 128>>>(d_bar);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaMemcpy(bar, d_bar, sizeof bar, cudaMemcpyDeviceToHost));
    for (int t = 0; t < kBarrierBlocks * 128; ++t) {
        printf("barrier %d :", t);
        for (int k = 0; k < kBarrier; ++k) printf(" %x", bar[t * kBarrier + k]);
        printf("\n");
    }
    cudaFree(d_lanes);
    cudaFree(d_res);
    cudaFree(d_src);
    cudaFree(d_bytes);
    cudaFree(d_counters);
    cudaFree(d_words);
    cudaFree(d_data);
    cudaFree(d_fsum);
    cudaFree(d_dsum);
    cudaFree(d_big);
    cudaFree(d_bar);
    printf("done=1\n");
    return 0;
}
