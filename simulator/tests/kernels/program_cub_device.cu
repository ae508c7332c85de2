// CUB from NVIDIA's CCCL headers, unmodified: device-wide algorithms on one input, each called
// twice as documented (the first call sizes the temporary storage). Prints name=v0,v1,... lines
// that test_cub.py compares with numpy.
#include <cub/cub.cuh>

#include <cstdio>
#include <vector>

#include "cub_host.h"

constexpr int kN = 512;

struct Positive {
    __host__ __device__ bool operator()(int x) const { return x > 0; }
};

int main() {
    std::vector<int> h(kN);
    for (int i = 0; i < kN; ++i) h[i] = (i * 7919 + 13) % 1000 - 500;
    int *in, *a, *b, *c, *count;
    CHECK(cudaMalloc(&in, kN * sizeof(int)));
    CHECK(cudaMalloc(&a, kN * sizeof(int)));
    CHECK(cudaMalloc(&b, kN * sizeof(int)));
    CHECK(cudaMalloc(&c, kN * sizeof(int)));
    CHECK(cudaMalloc(&count, sizeof(int)));
    CHECK(cudaMemcpy(in, h.data(), kN * sizeof(int), cudaMemcpyHostToDevice));

    void* temp = nullptr;
    size_t temp_bytes = 0, need = 0;
    auto reserve = [&](size_t bytes) -> cudaError_t {
        if (bytes <= temp_bytes) return cudaSuccess;
        cudaFree(temp);
        temp_bytes = bytes;
        return cudaMalloc(&temp, bytes);
    };

    CHECK(cub::DeviceReduce::Sum(nullptr, need, in, c, kN));
    CHECK(reserve(need));
    CHECK(cub::DeviceReduce::Sum(temp, need, in, c, kN));
    CHECK(cub::DeviceReduce::Max(nullptr, need, in, c + 1, kN));
    CHECK(reserve(need));
    CHECK(cub::DeviceReduce::Max(temp, need, in, c + 1, kN));
    print("device_sum_max", fetch(c, 2));

    CHECK(cub::DeviceScan::InclusiveSum(nullptr, need, in, a, kN));
    CHECK(reserve(need));
    CHECK(cub::DeviceScan::InclusiveSum(temp, need, in, a, kN));
    print("device_inclusive_sum", fetch(a, kN));
    CHECK(cub::DeviceScan::ExclusiveSum(nullptr, need, in, a, kN));
    CHECK(reserve(need));
    CHECK(cub::DeviceScan::ExclusiveSum(temp, need, in, a, kN));
    print("device_exclusive_sum", fetch(a, kN));

    CHECK(cub::DeviceRadixSort::SortPairs(nullptr, need, in, a, in, b, kN));
    CHECK(reserve(need));
    CHECK(cub::DeviceRadixSort::SortPairs(temp, need, in, a, in, b, kN));
    print("device_sort_keys", fetch(a, kN));
    print("device_sort_values", fetch(b, kN));

    CHECK(cub::DeviceSelect::If(nullptr, need, in, a, count, kN, Positive()));
    CHECK(reserve(need));
    CHECK(cub::DeviceSelect::If(temp, need, in, a, count, kN, Positive()));
    const int selected = fetch(count, 1)[0];
    print("device_select_positive", fetch(a, selected));

    std::vector<int> offsets_h = {0, 10, 10, 300, kN};  // an empty segment among them
    int* offsets;
    CHECK(cudaMalloc(&offsets, offsets_h.size() * sizeof(int)));
    CHECK(cudaMemcpy(offsets, offsets_h.data(), offsets_h.size() * sizeof(int), cudaMemcpyHostToDevice));
    const int segments = static_cast<int>(offsets_h.size()) - 1;
    CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, need, in, c, segments, offsets, offsets + 1));
    CHECK(reserve(need));
    CHECK(cub::DeviceSegmentedReduce::Sum(temp, need, in, c, segments, offsets, offsets + 1));
    print("device_segmented_sum", fetch(c, segments));

    const int bins = 10;  // [-500, 500) in bins of 100
    CHECK(cub::DeviceHistogram::HistogramEven(nullptr, need, in, c, bins + 1, -500, 500, kN));
    CHECK(reserve(need));
    CHECK(cub::DeviceHistogram::HistogramEven(temp, need, in, c, bins + 1, -500, 500, kN));
    print("device_histogram", fetch(c, bins));

    CHECK(cudaFree(temp));
    CHECK(cudaFree(offsets));
    CHECK(cudaFree(in));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaFree(count));
    std::printf("error=%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
