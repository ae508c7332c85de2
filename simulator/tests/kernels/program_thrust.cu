// Thrust's algorithms next to the program's own kernels, as CUDA programs mix them: a kernel
// writes a device_vector through its raw pointer and Thrust reads the result, Thrust fills a
// buffer a kernel then reads, cudaMemcpy copies to and from device_vector storage and
// thrust::device_malloc memory, and a kernel sorts rows with thrust::seq. Prints key=v0,v1,...
// lines that simulator/tests/test_thrust.py recomputes with numpy. With the argument "past_end", a kernel
// reads one element past the end of a device_vector (memcheck must report it).
#include <thrust/adjacent_difference.h>
#include <thrust/copy.h>
#include <thrust/device_free.h>
#include <thrust/device_malloc.h>
#include <thrust/device_vector.h>
#include <thrust/equal.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/remove.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <cstdio>
#include <cstring>

const int N = 1000;

__global__ void affine(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 3 * in[i] + 1;
}

// Reads in[i + shift]: with shift 1 the last thread reads one element past the end.
__global__ void shifted_copy(const int* in, int* out, int n, int shift) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i + shift];
}

// Each thread sorts its own row with Thrust's sequential policy, inside the kernel.
__global__ void sort_rows(int* rows, int width, int count) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < count) thrust::sort(thrust::seq, rows + r * width, rows + (r + 1) * width);
}

struct multiple_of_3 {
    __host__ __device__ bool operator()(int x) const { return x % 3 == 0; }
};

struct square {
    __host__ __device__ long long operator()(int x) const { return (long long)x * x; }
};

template <class V>
void print(const char* key, const V& v) {
    thrust::host_vector<typename V::value_type> h = v;
    std::printf("%s=", key);
    for (size_t i = 0; i < h.size(); i++) std::printf(i ? ",%lld" : "%lld", (long long)h[i]);
    std::printf("\n");
}

int main(int argc, char** argv) {
    thrust::host_vector<int> h(N);
    for (int i = 0; i < N; i++) h[i] = (i * 7919 + 13) % 1000 - 500;
    thrust::device_vector<int> d = h;

    if (argc > 1 && std::strcmp(argv[1], "past_end") == 0) {
        thrust::device_vector<int> out(N);
        shifted_copy<<<(N + 127) / 128, 128>>>(thrust::raw_pointer_cast(d.data()),
                                                thrust::raw_pointer_cast(out.data()), N, 1);
        cudaDeviceSynchronize();
        std::printf("error=%s\n", cudaGetErrorString(cudaGetLastError()));
        return 0;
    }

    // A kernel writes a device_vector through its raw pointer; Thrust reads it back.
    thrust::device_vector<int> lin(N);
    affine<<<(N + 127) / 128, 128>>>(thrust::raw_pointer_cast(d.data()), thrust::raw_pointer_cast(lin.data()), N);
    cudaDeviceSynchronize();
    print("affine", lin);
    std::printf("affine_sum=%d\n", thrust::reduce(lin.begin(), lin.end()));

    thrust::device_vector<int> sorted = d;
    thrust::sort(sorted.begin(), sorted.end());
    print("sorted", sorted);
    thrust::device_vector<int> desc = d;
    thrust::sort(thrust::device, desc.begin(), desc.end(), thrust::greater<int>());
    print("sorted_desc", desc);

    std::printf("sum=%d\n", thrust::reduce(d.begin(), d.end()));
    std::printf("max=%d\n", thrust::reduce(d.begin(), d.end(), -1000000, thrust::maximum<int>()));

    thrust::device_vector<long long> sq(N);
    thrust::transform(d.begin(), d.end(), sq.begin(), square());
    print("square", sq);

    thrust::device_vector<int> scan(N);
    thrust::inclusive_scan(d.begin(), d.end(), scan.begin());
    print("inclusive_scan", scan);
    thrust::exclusive_scan(d.begin(), d.end(), scan.begin(), 7);
    print("exclusive_scan", scan);
    thrust::adjacent_difference(d.begin(), d.end(), scan.begin());
    print("adjacent_difference", scan);

    thrust::device_vector<int> kept = d;
    auto end = thrust::remove_if(kept.begin(), kept.end(), multiple_of_3());
    kept.resize(end - kept.begin());
    print("not_multiple_of_3", kept);

    thrust::device_vector<int> rows = d;
    sort_rows<<<2, 32>>>(thrust::raw_pointer_cast(rows.data()), 20, N / 20);
    cudaDeviceSynchronize();
    print("rows_sorted", rows);

    // Thrust fills device_malloc memory; a kernel reads it; cudaMemcpy copies both ways.
    thrust::device_ptr<int> raw = thrust::device_malloc<int>(N);
    thrust::sequence(raw, raw + N, 5, 2);
    thrust::device_vector<int> seq_affine(N);
    affine<<<(N + 127) / 128, 128>>>(thrust::raw_pointer_cast(raw), thrust::raw_pointer_cast(seq_affine.data()), N);
    cudaError_t copy_in = cudaMemcpy(thrust::raw_pointer_cast(lin.data()), h.data(), N * sizeof(int),
                                     cudaMemcpyHostToDevice);
    thrust::host_vector<int> back(N);
    cudaError_t copy_out = cudaMemcpy(back.data(), thrust::raw_pointer_cast(seq_affine.data()), N * sizeof(int),
                                      cudaMemcpyDeviceToHost);
    thrust::device_free(raw);
    print("sequence_affine", back);
    std::printf("copied_in_equal=%d\n", (int)thrust::equal(lin.begin(), lin.end(), d.begin()));
    std::printf("memcpy=%s,%s\n", cudaGetErrorString(copy_in), cudaGetErrorString(copy_out));
    std::printf("error=%s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
