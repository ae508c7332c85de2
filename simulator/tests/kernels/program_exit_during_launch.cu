// exit() from host code while a kernel runs: the process must end at once with that status.
// Without an argument a host thread calls exit(3) while main waits in a launch that never
// ends; with "main", main calls exit(3) while a host thread waits in it. The kernel spins
// without barriers on more blocks than one worker runs, so worker threads are busy in it.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <thread>

__global__ void spin_kernel(volatile int* flag) {
    while (flag[0] == 0) {
    }
}

static void launch_spin() {
    int* flag = nullptr;
    cudaMalloc(&flag, sizeof(int));
    cudaMemset(flag, 0, sizeof(int));
    spin_kernel<<<8, 32>>>(flag);
    cudaDeviceSynchronize();
}

int main(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "main") == 0) {
        std::thread launcher(launch_spin);
        launcher.detach();
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        exit(3);
    }
    std::thread exiter([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        exit(3);
    });
    exiter.detach();
    launch_spin();
    printf("main went on after exit()\n");
    return 0;
}
