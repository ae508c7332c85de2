// Members declared in the class without an execution space and defined outside it with
// __device__, as the CUDA Handbook's spinlockReduction.cu defines its cudaSpinlock: nvcc takes the
// definition's space; the simulator's front end (clang's CUDA mode) keeps the declaration's, host,
// and refuses the kernel's calls.
#include <cstdio>

class Counter {
public:
    Counter(int *p);
    void add(int v);

private:
    int *m_p;
};

inline __device__ Counter::Counter(int *p) { m_p = p; }
inline __device__ void Counter::add(int v) { atomicAdd(m_p, v); }

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
    return 0;
}
