// Members declared in the class without an execution space and defined outside it with one, as
// the CUDA Handbook's spinlockReduction.cu defines its cudaSpinlock: nvcc takes the definition's
// space (clang's CUDA mode would match the definitions to no declaration of the class).
#include <cstdio>

class Counter {
public:
    Counter(int *p);
    void add(int v);
    static int twice(int v);

private:
    int *m_p;
};

inline __device__ Counter::Counter(int *p) { m_p = p; }
inline __device__ void Counter::add(int v) { atomicAdd(m_p, twice(v)); }
__host__ __device__ int Counter::twice(int v) { return 2 * v; }

__global__ void count(int *p)
{
    Counter c(p);
    c.add(threadIdx.x);
}

int main()
{
    int *p;
    cudaMallocManaged(&p, sizeof(int));
    *p = 0;
    count<<<1, 32>>>(p);
    cudaDeviceSynchronize();
    printf("sum=%d\n", *p);
    printf("host_twice=%d\n", Counter::twice(21));
    return 0;
}
