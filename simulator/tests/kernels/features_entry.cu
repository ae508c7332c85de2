// A self-checking entry for `python -m simulator check`: cooperative groups, half/bfloat16,
// cache hints, coalesced groups and vector types (the launchers of coop_groups.cu, fp16.cu and
// misc.cu) must run clean under every checker. Returns 0 when every result is right.
#include <cuda_runtime.h>

extern "C" int cg_block_reduce(const int* in, int* out, int blocks, int threads);
extern "C" int cg_tiles(int* out, int tile, int threads);
extern "C" int cg_float_tiles(const float* in, float* out, unsigned long long* ranks, int blocks);
extern "C" int f16_dot(const unsigned short* xy, float* out, unsigned short* count, int blocks);
extern "C" int cache_hints(const double* in, double* out, int n);
extern "C" int misc_partitions(int* out, int* counter);
extern "C" int misc_vectors(const unsigned char* in, unsigned int* out, unsigned int* total, int n);

extern "C" int features_selfcheck(void) {
    const int blocks = 2, threads = 96;
    int in[blocks * threads], out[blocks * 3];
    for (int i = 0; i < blocks * threads; ++i) in[i] = (i * 37) % 101 - 50;
    if (cg_block_reduce(in, out, blocks, threads) != 0) return 1;
    for (int b = 0; b < blocks; ++b) {
        int sum = 0, hi = -1000, lo = 1000;
        for (int t = 0; t < threads; ++t) {
            const int v = in[b * threads + t];
            sum += v;
            hi = v > hi ? v : hi;
            lo = v < lo ? v : lo;
        }
        if (out[b * 3] != sum || out[b * 3 + 1] != hi || out[b * 3 + 2] != lo) return 2;
    }
    static int tiles[48 * 12];
    if (cg_tiles(tiles, 16, 48) != 0) return 3;
    for (int t = 0; t < 48; ++t) {
        if (tiles[t * 12] != t % 16 || tiles[t * 12 + 2] != t / 16 || tiles[t * 12 + 3] != 3) return 4;
    }
    float fin[64], fout[64];
    unsigned long long ranks[64];
    for (int i = 0; i < 64; ++i) fin[i] = (float)(i % 5);
    if (cg_float_tiles(fin, fout, ranks, 1) != 0) return 5;
    for (int i = 0; i < 64; ++i) {
        if (fout[i] != 126.0f || ranks[i] != (unsigned long long)i * 1000000ull + 64) return 6;
    }
    unsigned short xy[2 * 64 * 2];
    for (int i = 0; i < 2 * 64; ++i) {
        xy[2 * i] = 0x3f80;      // bf16 1.0
        xy[2 * i + 1] = 0x4000;  // bf16 2.0
    }
    float dots[2];
    unsigned short count = 0;
    if (f16_dot(xy, dots, &count, 2) != 0) return 7;
    if (dots[0] != 128.0f || dots[1] != 128.0f || count != 0x5800) return 8;  // half 128.0
    double din[10], dout[60];
    for (int i = 0; i < 10; ++i) din[i] = i * 0.5;
    if (cache_hints(din, dout, 10) != 0) return 9;
    for (int i = 0; i < 60; ++i) {
        if (dout[i] != din[i / 6]) return 10;
    }
    static int parts[64 * 8];
    int counter = 0;
    if (misc_partitions(parts, &counter) != 0) return 11;
    if (counter != 32) return 12;
    for (int t = 0; t < 64; ++t) {
        const int lane = t % 32;
        if (parts[t * 8 + 3] != 16 || parts[t * 8 + 4] != t) return 13;
        if (lane % 2 == 0 && (parts[t * 8 + 5] != lane / 2 || parts[t * 8 + 6] != 16)) return 14;
    }
    unsigned char pix[8 * 4];
    unsigned int vout[8 * 4], total = 0;
    for (int i = 0; i < 32; ++i) pix[i] = (unsigned char)(i * 7);
    if (misc_vectors(pix, vout, &total, 8) != 0) return 15;
    if (total != 8 || vout[0] != 0 || vout[4 * 7 + 2] != (unsigned)(7 * 28 + 7 * 29)) return 16;
    return 0;
}
