// More of what real kernels use: labeled/binary partitions and coalesced groups (warp-aggregated
// atomics), a thread_block passed as a thread_group, vector types, scoped atomics, umin/umax.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#include "entry_check.h"

__device__ unsigned int rank_in(const cg::thread_group& g) {
    g.sync();
    return g.thread_rank();
}

// Per thread of a 64-thread block, 8 values:
// [sum of the lanes with the same lane % 3, rank and size in that labeled group,
//  size of its binary partition by lane parity, rank in the block via thread_group&,
//  for even lanes only: rank and size in the coalesced group, and the slot a warp-aggregated
//  atomicAdd gave it (counter starts at 0)]
__global__ void partitions_kernel(int* out, int* counter) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    const int lane = (int)warp.thread_rank();
    int* o = out + block.thread_rank() * 8;
    cg::coalesced_group all = cg::coalesced_threads();
    cg::coalesced_group same = cg::labeled_partition(all, lane % 3);
    o[0] = cg::reduce(same, lane, cg::plus<int>());
    o[1] = (int)same.thread_rank();
    o[2] = (int)same.size();
    o[3] = (int)cg::binary_partition(warp, (lane & 1) != 0).size();
    o[4] = (int)rank_in(block);
    if ((lane & 1) == 0) {
        cg::coalesced_group even = cg::coalesced_threads();
        o[5] = (int)even.thread_rank();
        o[6] = (int)even.size();
        int base = 0;
        if (even.thread_rank() == 0) base = atomicAdd_system(counter, (int)even.size());
        o[7] = even.shfl(base, 0) + (int)even.thread_rank();
    } else {
        o[5] = o[6] = o[7] = -1;
    }
}

extern "C" int misc_partitions(int* out, int* counter) {
    int *d_out, *d_counter;
    CHECK(cudaMalloc(&d_out, sizeof(int) * 64 * 8));
    CHECK(cudaMalloc(&d_counter, sizeof(int)));
    CHECK(cudaMemset(d_counter, 0, sizeof(int)));
    partitions_kernel<<<1, 64>>>(d_out, d_counter);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d_out, sizeof(int) * 64 * 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(counter, d_counter, sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_counter));
    return 0;
}

// uchar4 pixels: out = (min(r, g), max(b, a), r + g, alignment checks) through vector loads.
__global__ void vectors_kernel(const uchar4* in, uint4* out, unsigned int* total) {
    const uchar4 p = in[threadIdx.x];
    const short2 s = make_short2((short)p.x, (short)p.y);
    const ulonglong2 w = make_ulonglong2(p.z, p.w);
    out[threadIdx.x] = make_uint4(umin(p.x, p.y), umax((unsigned)w.x, (unsigned)w.y), (unsigned)(s.x + s.y),
                                  (unsigned)(alignof(uchar4) * 100 + sizeof(short2) * 10 + alignof(double2) / 8));
    atomicAdd_block(total, 1u);
}

extern "C" int misc_vectors(const unsigned char* in, unsigned int* out, unsigned int* total, int n) {
    uchar4* d_in;
    uint4* d_out;
    unsigned int* d_total;
    CHECK(cudaMalloc(&d_in, sizeof(uchar4) * n));
    CHECK(cudaMalloc(&d_out, sizeof(uint4) * n));
    CHECK(cudaMalloc(&d_total, sizeof(unsigned int)));
    CHECK(cudaMemcpy(d_in, in, sizeof(uchar4) * n, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_total, 0, sizeof(unsigned int)));
    vectors_kernel<<<1, n>>>(d_in, d_out, d_total);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d_out, sizeof(uint4) * n, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(total, d_total, sizeof(unsigned int), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_total));
    return 0;
}

// The sm_61 integer dot products, per pair of words a[i], b[i] with c[i]: 12 results each —
// __dp4a, __dp2a_lo and __dp2a_hi, signed (int and vector forms) and unsigned (both forms).
#include <sm_61_intrinsics.h>
__global__ void dot_products_kernel(const int* a, const int* b, const int* c, int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned ua = (unsigned)a[i], ub = (unsigned)b[i], uc = (unsigned)c[i];
    char4 sa, sb;
    uchar4 va, vb;
    short2 ha;
    ushort2 uha;
    memcpy(&sa, &a[i], 4);
    memcpy(&sb, &b[i], 4);
    memcpy(&va, &a[i], 4);
    memcpy(&vb, &b[i], 4);
    memcpy(&ha, &a[i], 4);
    memcpy(&uha, &a[i], 4);
    int* o = out + 12 * i;
    o[0] = __dp4a(a[i], b[i], c[i]);
    o[1] = __dp4a(sa, sb, c[i]);
    o[2] = (int)__dp4a(ua, ub, uc);
    o[3] = (int)__dp4a(va, vb, uc);
    o[4] = __dp2a_lo(a[i], b[i], c[i]);
    o[5] = __dp2a_lo(ha, sb, c[i]);
    o[6] = (int)__dp2a_lo(ua, ub, uc);
    o[7] = (int)__dp2a_lo(uha, vb, uc);
    o[8] = __dp2a_hi(a[i], b[i], c[i]);
    o[9] = __dp2a_hi(ha, sb, c[i]);
    o[10] = (int)__dp2a_hi(ua, ub, uc);
    o[11] = (int)__dp2a_hi(uha, vb, uc);
}

extern "C" int misc_dot_products(const int* a, const int* b, const int* c, int* out, int n) {
    int *d_a, *d_b, *d_c, *d_out;
    const size_t bytes = sizeof(int) * n;
    CHECK(cudaMalloc(&d_a, bytes));
    CHECK(cudaMalloc(&d_b, bytes));
    CHECK(cudaMalloc(&d_c, bytes));
    CHECK(cudaMalloc(&d_out, 12 * bytes));
    CHECK(cudaMemcpy(d_a, a, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_c, c, bytes, cudaMemcpyHostToDevice));
    dot_products_kernel<<<(n + 63) / 64, 64>>>(d_a, d_b, d_c, d_out, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, d_out, 12 * bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    CHECK(cudaFree(d_out));
    return 0;
}
