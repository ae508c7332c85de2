// racecheck --racecheck-memory shared, byte by byte (test_racecheck_bytes.py): argv[1] picks a
// kernel of one block of 64 threads (two warps). However wide the accesses, bytes race, not
// words: threads touching different bytes of one word are no hazard; an access that shares a
// byte with an unordered write of another thread is one, at the PLANT lines.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

union Words {
    int4 quad[4];
    long long wide[8];
    int word[16];
    short half[32];
    unsigned char byte[64];
};

// Whole words, then each byte by a thread of its own (every word has lanes of both warps), then
// whole words again: a barrier between each kind, no byte shared within one.
__global__ void bytes_of_words(int* out) {
    __shared__ Words u;
    const unsigned t = threadIdx.x;
    if (t < 16) u.word[t] = 0;
    __syncthreads();
    const unsigned mine = (t & 31u) * 2u + (t >> 5);  // word k: lanes 2k and 2k+1 of each warp
    u.byte[mine] = (unsigned char)t;
    out[t] = u.byte[mine];
    __syncthreads();
    if (t < 16) out[t] = u.word[t];
}

__global__ void word_then_byte(int* out) {
    __shared__ Words u;
    if (threadIdx.x == 0) u.word[0] = 7;  // PLANT: whole word write
    if (threadIdx.x == 33) out[0] = u.byte[2];  // PLANT: one byte read
}

// Bytes 1 and 3 of one word by threads of two warps, and a half-word over bytes 0 and 1: only
// byte 1 is shared.
__global__ void sub_word_across_warps(int* out) {
    __shared__ Words u;
    if (threadIdx.x == 3) u.byte[1] = 1;  // PLANT: byte one write
    if (threadIdx.x == 36) u.byte[3] = 3;  // PLANT: byte three write
    if (threadIdx.x == 40) u.half[0] = 2;  // PLANT: half write
    out[threadIdx.x] = 0;
}

// An 8-byte write over words 0 and 1, a 16-byte read over words 4 to 7, each against a byte of
// another word of theirs; an 8-byte read over words 4 and 5 shares no byte written.
__global__ void wide_spans(int* out) {
    __shared__ Words u;
    if (threadIdx.x == 0) u.wide[0] = 1;  // PLANT: wide write
    if (threadIdx.x == 40) u.byte[6] = 6;  // PLANT: byte six write
    if (threadIdx.x == 9) u.byte[30] = 9;  // PLANT: byte thirty write
    if (threadIdx.x == 50) {
        const int4 v = u.quad[1];  // PLANT: vector read
        out[0] = v.x + v.y + v.z + v.w;
    }
    if (threadIdx.x == 51) out[1] = (int)u.wide[2];  // PLANT: quiet wide read
}

// 4-byte reads at byte offsets 2 and 6: the first shares byte 5 with another warp's write.
__global__ void misaligned(int* out) {
    __shared__ Words u;
    int v = 0;
    if (threadIdx.x == 0) u.byte[5] = 5;  // PLANT: byte five write
    if (threadIdx.x == 40) std::memcpy(&v, &u.byte[2], sizeof v);  // PLANT: straddling read
    if (threadIdx.x == 41) std::memcpy(&v, &u.byte[6], sizeof v);  // PLANT: neighbouring read
    out[threadIdx.x] = v;
}

// A word split by a byte write, then written whole by one thread (its four bytes equal again),
// then read whole by a thread of the other warp with no barrier between.
__global__ void rejoined(int* out) {
    __shared__ Words u;
    if (threadIdx.x == 0) u.byte[1] = 1;
    __syncthreads();
    if (threadIdx.x == 0) u.word[0] = 2;  // PLANT: rejoining write
    if (threadIdx.x == 40) out[0] = u.word[0];  // PLANT: whole read
}

// The lanes of each warp store one value to a byte of their own in one statement: a warning, not
// a hazard, though both warps' bytes are in one word.
__global__ void warp_byte_same(int* out) {
    __shared__ unsigned char flags[4];
    const int warp_id = (int)threadIdx.x / 32;
    flags[warp_id] = (unsigned char)(warp_id + 1);  // PLANT: one byte value per warp
    __syncthreads();
    if (threadIdx.x == 0) {
        out[0] = flags[0];
        out[1] = flags[1];
        out[2] = 0;
    }
}

// The same with a value per lane: a hazard.
__global__ void warp_byte_differ(int* out) {
    __shared__ unsigned char flags[4];
    const int warp_id = (int)threadIdx.x / 32;
    flags[warp_id] = (unsigned char)threadIdx.x;  // PLANT: a byte value per lane
    __syncthreads();
    if (threadIdx.x == 0) out[0] = flags[0] + flags[1];
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "bytes_of_words";
    int* d_out;
    cudaMalloc(&d_out, 64 * sizeof(int));
    cudaMemset(d_out, 0, 64 * sizeof(int));
    if (std::strcmp(what, "bytes_of_words") == 0) {
        bytes_of_words<<<1, 64>>>(d_out);
    } else if (std::strcmp(what, "word_then_byte") == 0) {
        word_then_byte<<<1, 64>>>(d_out);
    } else if (std::strcmp(what, "sub_word") == 0) {
        sub_word_across_warps<<<1, 64>>>(d_out);
    } else if (std::strcmp(what, "wide_spans") == 0) {
        wide_spans<<<1, 64>>>(d_out);
    } else if (std::strcmp(what, "misaligned") == 0) {
        misaligned<<<1, 64>>>(d_out);
    } else if (std::strcmp(what, "rejoined") == 0) {
        rejoined<<<1, 64>>>(d_out);
    } else if (std::strcmp(what, "warp_byte_same") == 0) {
        warp_byte_same<<<1, 64>>>(d_out);
    } else if (std::strcmp(what, "warp_byte_differ") == 0) {
        warp_byte_differ<<<1, 64>>>(d_out);
    }
    int h[64];
    cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost);
    std::printf("%s %d %d %d\n", what, h[0], h[1], h[2]);
    cudaFree(d_out);
    return 0;
}
