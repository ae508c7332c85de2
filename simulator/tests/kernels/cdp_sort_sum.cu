// Dynamic parallelism: a recursive quicksort (each side sorted by a child grid in its own stream)
// and a tree sum (each grid splits its range between two child grids; leaves reduce in shared
// memory with barriers). Reads unsigned integers from argv[1], writes the sorted values to
// argv[2] and prints sum=... and the launch status; the test compares them with sorted()/numpy.
#include <cuda_runtime.h>
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

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s IN OUT\n", argv[0]);
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
