"""``python -m simulator run``: whole programs with their own ``main``; their output, arguments
and exit status; the checkers' findings; the time limit; and the launch forms and host API
that self-checking programs use (default arguments, launches through expressions, host
variables named like the built-ins, events, the modelled device, stream flags,
``cudaMemcpyDefault``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

from simulator.host import cpu_count

from .conftest import KERNELS, REPO, run_cli

FRONTEND = KERNELS / "program_frontend.cu"
HOST_API = KERNELS / "program_host_api.cu"


def _values(stdout: str) -> dict[str, str]:
    out = {}
    for line in stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep and " " not in key:
            out[key] = value
    return out


def test_run_forwards_arguments_output_and_status():
    proc = run_cli("run", str(FRONTEND), "--", "77")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    n = 77
    # Default arguments: scale 2.0 and shift 0.5, then only the shift, then none.
    assert float(v["affine_defaults_last"]) == 2.0 * (n - 1) + 0.5
    assert float(v["affine_one_default_last"]) == 3.0 * (n - 1) + 0.5
    assert float(v["affine_no_default_last"]) == n - 1
    assert float(v["template_default_last"]) == 4.0 * (n - 1) + 0.25
    assert float(v["declared_default_last"]) == 3.0 * (n - 1)
    # From 3 * i (declared_first): table[1] (x10), the conditional (+1), a pointer (x10), a
    # call's result (+1), table[0] (+1).
    assert float(v["expression_launches_last"]) == (3 * (n - 1) * 10 + 1) * 10 + 2
    assert float(v["expression_launches_first"]) == 12
    assert float(v["device_builtins_last"]) == n - 1
    assert float(v["host_warpSize"]) == 3
    assert float(v["shared_forms_first"]) == 63 + 1000 + 63
    assert float(v["shared_forms_last"]) == 1000
    assert v["null_kernel"] == "cudaErrorInvalidDeviceFunction"
    assert v["failures"] == "0"
    assert proc.stderr == ""


def test_run_returns_the_programs_own_status():
    proc = run_cli("run", str(FRONTEND), "--", "1000")  # the program refuses n > 256 with 64
    assert proc.returncode == 64, proc.stdout + proc.stderr
    assert "finding" not in proc.stderr


def _nvcc() -> str:
    nvcc = shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None
    )
    if nvcc is None:
        pytest.skip("nvcc is not installed: cannot check that the program builds for a GPU unchanged")
    return nvcc


@pytest.mark.parametrize("program", [FRONTEND, HOST_API], ids=["frontend", "host_api"])
def test_the_same_programs_build_with_nvcc(tmp_path, program):
    proc = subprocess.run(
        [_nvcc(), "-c", str(program), "-o", str(tmp_path / "p.o")],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr


CPU_COUNT_PROGRAM = r"""
#include <cstdio>
int main() {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return 1;
    std::printf("multiprocessors=%d\n", p.multiProcessorCount);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("taskset") is None, reason="taskset (util-linux) is not installed")
@pytest.mark.skipif(cpu_count() < 2, reason="one CPU here: pinning to CPU 0 would not change the count")
def test_the_runtime_counts_the_cpus_this_process_may_use_as_python_does(tmp_path):
    # One CPU count everywhere (simulator/host.py): the runtime's multiprocessors and worker
    # threads follow the affinity mask (and a container's quota), not the host's CPUs.
    source = tmp_path / "cpus.cu"
    source.write_text(CPU_COUNT_PROGRAM)
    free = run_cli("run", str(source))
    assert free.returncode == 0, free.stderr
    assert f"multiprocessors={cpu_count()}" in free.stdout
    pinned = run_cli("run", str(source), prefix=("taskset", "-c", "0"))
    assert pinned.returncode == 0, pinned.stderr
    assert "multiprocessors=1" in pinned.stdout
    count = "from simulator.host import cpu_count; print(cpu_count())"
    python_side = subprocess.run(
        ["taskset", "-c", "0", sys.executable, "-c", count],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert python_side.stdout.strip() == "1", python_side.stderr


def test_host_api_events_device_model_streams_and_memcpy_default():
    proc = run_cli("run", str(HOST_API))
    v = _values(proc.stdout)
    assert v.get("failures") == "0", proc.stdout
    # Every call returned CUDA's documented result (the program checks each one).
    assert not [ln for ln in proc.stdout.splitlines() if ln.startswith("MISMATCH")]
    # Events time the host: 30 ms of sleep between two records.
    elapsed = float(v["elapsed_ms"])
    assert 29.9 <= elapsed < 30_000
    assert float(v["elapsed_reversed_ms"]) == pytest.approx(-elapsed, abs=1e-3)
    # The modelled device (simulator/docs/device.md, "The modelled device").
    assert v["name"] == "CUDA CPU simulator (sm_80 model)"
    assert (v["major"], v["minor"], v["warpSize"]) == ("8", "0", "32")
    assert v["maxThreadsPerBlock"] == "1024"
    assert v["maxThreadsDim"] == "1024,1024,64"
    assert v["maxGridSize"] == "2147483647,65535,65535"
    assert v["sharedMemPerBlock"] == str(48 * 1024)
    assert v["sharedMemPerBlockOptin"] == str(227 * 1024)
    assert v["multiProcessorCount"] == str(cpu_count())
    assert int(v["totalGlobalMem"]) == os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert (v["regsPerBlock"], v["totalConstMem"], v["l2CacheSize"]) == ("65536", "65536", str(40 << 20))
    assert v["maxThreadsPerMultiProcessor"] == "2048"
    assert v["cooperativeLaunch"] == "1"  # cudaLaunchCooperativeKernel keeps every block resident
    assert v["attr_multiProcessorCount"] == v["multiProcessorCount"]
    assert v["attr_warpSize"] == "32"
    assert v["attr_sharedMemPerBlockOptin"] == v["sharedMemPerBlockOptin"]
    assert v["attr_l2CacheSize"] == v["l2CacheSize"]
    assert (v["mem_total_matches"], v["mem_free_le_total"]) == ("1", "1")
    assert (v["device_count_value"], v["device"]) == ("1", "0")
    assert v["copy_default_wrong"] == "0"
    assert v["pitch"] == "512"  # 400 bytes per row, rounded up to 512
    assert v["copy_2d_wrong"] == "0"
    assert v["copy_2d_bad_pitch"] == "cudaErrorInvalidPitchValue"
    assert v["callbacks_run"] == "11"  # the host function once (+1), the callback once (+10)
    # Occupancy (simulator/docs/device.md, "Occupancy"): 2048 threads and 32 blocks per
    # multiprocessor, 228 KiB of shared memory with 1 KiB reserved per block.
    assert v["occupancy_256"] == "8"
    assert v["occupancy_96_smem"] == str((228 * 1024) // (40 * 1024 + 1024))
    assert (v["potential_block"], v["potential_min_grid"]) == ("1024", str(2 * cpu_count()))
    assert v["heap_limit"] == str(64 << 20)
    assert v["runtime_guards"] == "1"
    # The one deliberate bad call (a copy one float past a device allocation) is refused and
    # reported; in fast mode the program saw the error and its own status (0) stands.
    assert proc.returncode == 0, proc.stderr
    assert "simulator: run (fast): 1 report(s) from the runtime" in proc.stderr
    assert "the destination range is not inside one live device allocation" in proc.stderr
    assert "finding" not in proc.stderr


PLANTED_OOB = """\
#include <cstdio>
#include <cuda_runtime.h>
__global__ void scale(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = 2.0f * in[i];  // PLANT: one past the end
}
int main() {
    const int n = 40;
    float h[n], r[n];
    for (int i = 0; i < n; i++) h[i] = (float)i;
    float *din, *dout;
    cudaMalloc(&din, n * sizeof(float));
    cudaMalloc(&dout, n * sizeof(float));
    cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice);
    scale<<<1, 64>>>(din, dout, n);
    cudaMemcpy(r, dout, sizeof r, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += r[i] != 2.0f * i;
    std::printf("%s\\n", bad ? "FAILED" : "PASSED");
    cudaFree(din);
    cudaFree(dout);
    return bad;
}
"""


def test_run_memcheck_finds_what_the_self_check_misses(tmp_path):
    src = tmp_path / "oob.cu"
    src.write_text(PLANTED_OOB)
    fast = run_cli("run", str(src))
    assert fast.returncode == 0, fast.stdout + fast.stderr
    assert fast.stdout.strip() == "PASSED"
    checked = run_cli("run", str(src), "--mode", "memcheck")
    assert checked.returncode != 0
    assert "simulator: run (memcheck):" in checked.stderr
    assert "heap-buffer-overflow" in checked.stderr
    assert f"{src}:5" in checked.stderr
    assert re.search(r"block \(0,0,0\) .*thread \(4[01],0,0\)", checked.stderr)  # thread 40 or 41
    # The faulting launch fails (cudaErrorLaunchFailure) and the program goes on, as under
    # compute-sanitizer; run counts the finding.
    listed = re.search(r"simulator: run \(memcheck\): (\d+) finding\(s\)", checked.stderr)
    assert listed and f"ERROR SUMMARY: {listed.group(1)} error" in checked.stderr, checked.stderr


def test_run_synccheck_reports_a_divergent_barrier_with_status_1(tmp_path):
    src = tmp_path / "diverge.cu"
    src.write_text(
        textwrap.dedent(
            """\
            #include <cuda_runtime.h>
            __global__ void k(int* p) {
                if (threadIdx.x < 16) {
                    __syncthreads();  // PLANT
                }
                __syncthreads();
                p[threadIdx.x] = 1;
            }
            int main() {
                int* d;
                cudaMalloc(&d, 32 * sizeof(int));
                k<<<1, 32>>>(d);
                cudaDeviceSynchronize();  // the error is not checked: the program exits 0
                cudaFree(d);
                return 0;
            }
            """
        )
    )
    proc = run_cli("run", str(src), "--mode", "synccheck")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "divergent __syncthreads" in proc.stderr
    assert f"{src}:4" in proc.stderr
    assert "the program exited with status 0" in proc.stderr


def test_run_links_host_sources_and_translates_headers_from_include_folders(tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "block_sum.cuh").write_text(
        textwrap.dedent(
            """\
            #pragma once
            // A header with device code and static shared memory, found through -I.
            template <int B>
            __device__ float block_sum(float v) {
                __shared__ float s[B];
                s[threadIdx.x] = v;
                __syncthreads();
                for (int k = B / 2; k > 0; k >>= 1) {
                    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
                    __syncthreads();
                }
                return s[0];
            }
            """
        )
    )
    (tmp_path / "kern.cu").write_text(
        textwrap.dedent(
            """\
            #include <cuda_runtime.h>
            #include <block_sum.cuh>
            __global__ void sums(const float* in, float* out) {
                float t = block_sum<64>(in[blockIdx.x * 64 + threadIdx.x]);
                if (threadIdx.x == 0) out[blockIdx.x] = t;
            }
            int row_sums(const float* h, float* r, int rows) {
                float *d, *o;
                cudaMalloc(&d, rows * 64 * sizeof(float));
                cudaMalloc(&o, rows * sizeof(float));
                cudaMemcpy(d, h, rows * 64 * sizeof(float), cudaMemcpyHostToDevice);
                sums<<<rows, 64>>>(d, o);
                cudaError_t e = cudaMemcpy(r, o, rows * sizeof(float), cudaMemcpyDeviceToHost);
                cudaFree(d);
                cudaFree(o);
                return (int)e;
            }
            """
        )
    )
    (tmp_path / "main.cpp").write_text(
        textwrap.dedent(
            """\
            #include <cstdio>
            #include <cstdlib>
            int row_sums(const float* h, float* r, int rows);
            int main(int argc, char** argv) {
                int rows = std::atoi(argv[1]);
                float* h = new float[rows * 64];
                float* r = new float[rows];
                for (int i = 0; i < rows * 64; i++) h[i] = (float)(i % 64);
                int rc = row_sums(h, r, rows);
                for (int i = 0; i < rows; i++) std::printf("%g\\n", r[i]);
                delete[] h;
                delete[] r;
                return rc;
            }
            """
        )
    )
    proc = run_cli(
        "run",
        str(tmp_path / "kern.cu"),
        str(tmp_path / "main.cpp"),
        "-I",
        str(inc),
        "--mode",
        "memcheck",
        "--",
        "3",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == [str(sum(range(64)))] * 3


def test_run_stops_a_program_past_its_time_limit(tmp_path):
    src = tmp_path / "spin.cu"
    src.write_text(
        '#include <cstdio>\nint main() { std::printf("started\\n"); std::fflush(stdout);'
        " volatile int x = 1; while (x) {} return 0; }\n"
    )
    t0 = time.monotonic()
    # The program spins for ever: the limit only decides how long it spins before it is stopped.
    proc = run_cli("run", str(src), "--timeout", "0.5")
    assert proc.returncode == 124, proc.stdout + proc.stderr
    assert time.monotonic() - t0 < 60
    assert proc.stdout == "started\n"
    assert "did not finish within 1 s (--timeout 0.5 per launch, plus 0.5 s) and was stopped" in proc.stderr


def test_check_takes_its_default_limit_from_SIMULATOR_TIMEOUT(tmp_path, monkeypatch):
    src = tmp_path / "spin_entry.cu"
    src.write_text('extern "C" int spin(void) { volatile int x = 1; while (x) {} return 0; }\n')
    monkeypatch.setenv("SIMULATOR_TIMEOUT", "0.5")  # the entry spins for ever: any limit stops it
    t0 = time.monotonic()
    proc = run_cli("check", str(src), "--entry", "spin", "--mode", "synccheck")
    assert proc.returncode == 1
    assert time.monotonic() - t0 < 60
    assert "did not finish within 1 s (--timeout 0.5 per launch, plus 0.5 s)" in proc.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["nothing_here.cu"], "nothing_here.cu: no such source file"),
        (["{tmp}/notes.txt"], "unknown kind of source '.txt'"),
        (["{tmp}/no_main.cu"], "does exactly one source define main()?"),
        (
            ["{tmp}/no_main.cu", "--timeout", "-1"],
            "--timeout -1.0: give the seconds per launch (0 for no limit)",
        ),
    ],
    ids=["missing", "suffix", "no_main", "timeout"],
)
def test_run_build_problems_exit_2_with_the_reason(tmp_path, args, message):
    (tmp_path / "notes.txt").write_text("not a source\n")
    (tmp_path / "no_main.cu").write_text("__global__ void k() {}\n")
    proc = run_cli("run", *[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "simulator: build failed:" in proc.stderr
    assert message in proc.stderr


def test_a_bad_SIMULATOR_TIMEOUT_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "p.cu").write_text("int main() { return 0; }\n")
    monkeypatch.setenv("SIMULATOR_TIMEOUT", "soon")
    proc = run_cli("run", str(tmp_path / "p.cu"))
    assert proc.returncode == 2
    assert "SIMULATOR_TIMEOUT='soon' is not a number of seconds per launch" in proc.stderr


def test_a_program_killed_by_a_signal_exits_128_plus_the_signal_with_its_meaning(tmp_path):
    (tmp_path / "abort.cu").write_text("#include <cstdlib>\nint main() { std::abort(); }\n")
    proc = run_cli("run", str(tmp_path / "abort.cu"))
    assert proc.returncode == 128 + 6
    assert "the program died with signal 6 (an abort: a failed assert() or std::abort)" in proc.stderr


def test_a_segfault_outside_memcheck_says_that_memcheck_names_the_access(tmp_path):
    wild = "int main(int argc, char**) { int* p = (int*)(long)(argc - 1); *p = 1; }\n"
    (tmp_path / "wild.cu").write_text(wild)
    proc = run_cli("run", str(tmp_path / "wild.cu"))
    assert proc.returncode == 128 + 11
    assert (
        "died with signal 11 (a segmentation fault: e.g. a wild pointer or a stack overflow)" in proc.stderr
    )
    assert "; --mode memcheck names the access" in proc.stderr


def test_an_expected_device_assert_leaves_the_programs_status(tmp_path):
    # As on a GPU: the program sees cudaErrorAssert (710) and decides; the report is shown.
    (tmp_path / "asserts.cu").write_text(
        textwrap.dedent(
            """\
            #include <cassert>
            #include <cstdio>
            #include <cuda_runtime.h>
            __global__ void k(int n) { assert(threadIdx.x < n); }
            int main() {
                k<<<1, 4>>>(2);
                cudaError_t e = cudaDeviceSynchronize();
                std::printf("%s\\n", cudaGetErrorName(e));
                return e == cudaErrorAssert ? 0 : 1;
            }
            """
        )
    )
    proc = run_cli("run", str(tmp_path / "asserts.cu"), "--mode", "synccheck")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "cudaErrorAssert"
    assert "report(s) from the runtime, returned to the program as CUDA errors" in proc.stderr


def test_device_code_guarded_by___CUDA_ARCH___runs_with_the_chosen_arch(tmp_path):
    (tmp_path / "arch.cu").write_text(
        textwrap.dedent(
            """\
            #include <cstdio>
            #include <cuda_runtime.h>
            __global__ void k(int* p) {
            #if __CUDA_ARCH__ >= 700
                p[0] = 7;
            #endif
            }
            int main() {
                int* d;
                int h = -1;
                cudaMalloc(&d, sizeof(int));
                cudaMemset(d, 0, sizeof(int));
                k<<<1, 1>>>(d);
                cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
                cudaFree(d);
                std::printf("%d\\n", h);
                return 0;
            }
            """
        )
    )
    proc = run_cli("run", str(tmp_path / "arch.cu"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "7"  # device code sees __CUDA_ARCH__ == 800, as on an sm_80 GPU
    assert "note" not in proc.stderr
    proc = run_cli("run", str(tmp_path / "arch.cu"), "--arch", "600")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0"  # compiled for sm_60 the guarded store is left out


def test_run_translates_each_source_once(tmp_path, monkeypatch):
    # `run` takes everything it needs from the build: a second pass over the sources (to list
    # files or notes) would parse each one again.
    import simulator.source_compile as source_compile
    from simulator.run import run_program

    calls = []
    real = source_compile.translate_preprocessed

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(source_compile, "translate_preprocessed", counting)
    src = tmp_path / "once.cu"  # a fresh path: the build cache cannot hold its object yet
    src.write_text(
        textwrap.dedent(
            """\
            #include <cstdio>
            __global__ void inc(int *x) { x[threadIdx.x] += 1; }
            int main() {
                int *d;
                cudaMalloc(&d, 4 * sizeof(int));
                cudaMemset(d, 0, 4 * sizeof(int));
                inc<<<1, 4>>>(d);
                int h[4];
                cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
                cudaFree(d);
                return h[3] == 1 ? 0 : 5;
            }
            """
        )
    )
    result = run_program([str(src)], "fast")
    assert result.status == 0, result.findings
    assert len(calls) == 1


def test_racecheck_bounds_threadsanitizer_memory_at_half_the_machine():
    # ThreadSanitizer's shadow is 4x what the threads touch: past half the memory it forgets
    # what it recorded instead of the program being killed (llm.c's softmax_forward took 21 GB).
    from simulator.sanitizer_env import CHECK_ENV, RUN_ENV

    with open("/proc/meminfo") as f:
        total_kib = next(int(line.split()[1]) for line in f if line.startswith("MemTotal:"))
    want = total_kib // 2 // 1024
    cgroup = "/sys/fs/cgroup/memory.max"
    if os.path.exists(cgroup) and open(cgroup).read().strip().isdigit():
        want = min(want, int(open(cgroup).read()) // 2 // (1 << 20))
    for env in (CHECK_ENV, RUN_ENV):
        options = dict(kv.split("=") for kv in env["racecheck"]["TSAN_OPTIONS"].split(":"))
        assert abs(int(options["memory_limit_mb"]) - want) <= 1, options


def test_racecheck_holds_the_memory_limit_before_the_first_launch(tmp_path):
    # ThreadSanitizer's background thread (which keeps memory_limit_mb) starts at the first
    # pthread_create; the runtime starts one at load, so buffers filled before any launch count.
    from simulator.build import build_program
    from simulator.sanitizer_env import run_child_env

    src = tmp_path / "fill_first.cu"
    src.write_text(
        textwrap.dedent(
            """
            #include <cstdio>
            #include <unistd.h>
            int main() {
                float* d = nullptr;
                cudaMalloc(&d, 256u << 20);          // 256 MiB, 1 GiB of shadow once written
                cudaMemset(d, 0, 256u << 20);
                usleep(600 * 1000);                   // the limit is checked every 100 ms
                cudaFree(d);
                std::printf("done\\n");
                return 0;
            }
            """
        )
    )
    exe = build_program([str(src)], "racecheck", [], unchecked_host=True)
    env = run_child_env("racecheck", 60)
    options = [o for o in env["TSAN_OPTIONS"].split(":") if not o.startswith("memory_limit_mb=")]
    env["TSAN_OPTIONS"] = ":".join([*options, "memory_limit_mb=200", "verbosity=1"])
    proc = subprocess.run([str(exe)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout == "done\n", proc.stderr[-2000:]
    assert "ThreadSanitizer: flushing memory due to RSS" in proc.stderr, proc.stderr[-2000:]
