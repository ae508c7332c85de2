"""memcheck's reports of device faults under ``run``: compute-sanitizer's shape (the access, the
kernel, block and thread, the program's line, the address against the nearest allocation, the
program's frames only), AddressSanitizer's own report only with ``--verbose``; the faulting
launch returns cudaErrorLaunchFailure and the program goes on through its own error handling
(``--stop-on-error`` stops it at the first fault), with every finding counted at exit."""

from __future__ import annotations

import textwrap

import pytest

from simulator.findings import parse_findings, unprinted_errors

from .conftest import KERNELS, line_of, run_cli, run_findings

# One block of 128 threads writes a[threadIdx.x] into a 100-int buffer: thread 100 is the first
# past the end, and 101 to 127 are the rest of its warp. The program checks the launch itself, as
# a CUDA program does.
OOB = textwrap.dedent(
    """\
    #include <cstdio>
    __global__ void write_all(int* a) {
        int i = threadIdx.x;
        a[i] = i;  // PLANT-OOB
        if (i >= 100) printf("ran past the end: %d\\n", i);
    }
    int main() {
        int* a;
        cudaMalloc(&a, 100 * sizeof(int));
        write_all<<<1, 128>>>(a);  // LAUNCH
        cudaError_t e = cudaDeviceSynchronize();
        std::printf("sync: %s\\n", cudaGetErrorString(e));
        std::printf("again: %s\\n", cudaGetErrorName(cudaDeviceSynchronize()));
        std::printf("after\\n");
        return 0;
    }
    """
)

# One thread writes past the end 1000 times at one line.
LOOP = textwrap.dedent(
    """\
    #include <cstdio>
    __global__ void spray(int* a, int n) {
        for (int k = 0; k < 1000; ++k) a[n + k % 4] = k;  // PLANT-LOOP
    }
    int main() {
        int* a;
        cudaMalloc(&a, 16 * sizeof(int));
        spray<<<1, 1>>>(a, 16);
        std::printf("spray: %s\\n", cudaGetErrorName(cudaDeviceSynchronize()));
        return 0;
    }
    """
)

# A kernel reads a buffer freed before its launch.
UAF = textwrap.dedent(
    """\
    #include <cstdio>
    __global__ void read_freed(const int* a, int* out) {
        out[threadIdx.x] = a[3];  // PLANT-UAF
    }
    int main() {
        int *a, *out;
        cudaMalloc(&a, 16 * sizeof(int));
        cudaMalloc(&out, 4 * sizeof(int));
        cudaFree(a);
        read_freed<<<1, 4>>>(a, out);
        std::printf("read: %s\\n", cudaGetErrorName(cudaDeviceSynchronize()));
        return 0;
    }
    """
)


# The threads of write_all that fault: those past the end in the first faulting thread's warp
# (the rest of a warp runs on after a fault, as its lanes would in lockstep; no other warp does).
OOB_FAULTS = [t for t in range(128) if t >= 100 and t // 32 == 100 // 32]


@pytest.fixture(scope="module")
def oob(tmp_path_factory):
    src = tmp_path_factory.mktemp("memcheck_reports") / "oob.cu"
    src.write_text(OOB)
    return src


def _blocks(stderr: str, header: str, body: str = "=========     ") -> list[list[str]]:
    """The compute-sanitizer-shaped reports in ``stderr`` whose first line starts with ``header``,
    each as its lines (the lines after it that start with ``body``)."""
    blocks, cur = [], None
    for ln in stderr.splitlines():
        if ln.startswith(header):
            cur = [ln]
            blocks.append(cur)
        elif cur is not None and ln.startswith(body):
            cur.append(ln)
        else:
            cur = None
    return blocks


def _fault_blocks(stderr: str) -> list[list[str]]:
    """The device-fault reports in ``stderr``, each as its lines."""
    return _blocks(stderr, "========= Invalid ")


def test_oob_write_reads_as_compute_sanitizer_and_the_program_goes_on(oob):
    proc = run_cli("run", "--mode", "memcheck", str(oob))
    assert proc.returncode == 1, proc.stderr  # the program's own 0, made 1 by the finding
    # The faulting threads ran to their end, and no thread after their warp; the launch failed as
    # on a GPU under compute-sanitizer, and the error is sticky.
    out = proc.stdout.splitlines()
    ran = len(OOB_FAULTS)
    assert out[:ran] == [f"ran past the end: {t}" for t in OOB_FAULTS], proc.stdout
    assert out[ran].startswith("sync: unspecified launch failure"), proc.stdout
    assert out[ran + 1 :] == ["again: cudaErrorLaunchFailure", "after"], proc.stdout
    blocks = _fault_blocks(proc.stderr)
    assert len(blocks) == len(OOB_FAULTS), proc.stderr  # one report per faulting thread
    for block, t in zip(blocks, OOB_FAULTS):
        assert f"=========     by thread ({t},0,0) in block (0,0,0)" in block[2], block
    head, *rest = blocks[0]
    assert head == "========= Invalid __global__ write of size 4 bytes (heap-buffer-overflow)"
    assert rest[0] == f"=========     at write_all(int*) in {oob}:{line_of(oob, 'PLANT-OOB')}", rest
    launch = line_of(oob, "LAUNCH")
    by = "=========     by thread (100,0,0) in block (0,0,0) of kernel 'write_all' launched at "
    assert rest[1] == f"{by}{oob}:{launch}", rest
    after_end = "is 0 bytes after the end of a 400-byte allocation at 0x"
    assert any(ln.startswith("=========     Address 0x") and after_end in ln for ln in rest), rest
    # The program's frames only: nothing of the runtime, the C++ library or AddressSanitizer.
    assert "AddressSanitizer" not in proc.stderr and "Shadow byte" not in proc.stderr
    for noise in ("launch.h", "scheduler.cpp", "std::apply", "invoke.h", "libc", "====================="):
        assert noise not in proc.stderr, noise
    assert run_findings(proc.stderr) == [
        f"memcheck: heap-buffer-overflow: write_all(int*) at {oob}:{line_of(oob, 'PLANT-OOB')}; in kernel "
        f"'write_all' block (0,0,0) (launched at {oob}:{launch}) thread ({t},0,0)"
        for t in OOB_FAULTS
    ]
    assert proc.stderr.rstrip().endswith(f"========= ERROR SUMMARY: {len(OOB_FAULTS)} errors"), proc.stderr


def test_verbose_shows_address_sanitizers_report_too(oob):
    proc = run_cli("run", "--mode", "memcheck", "--verbose", str(oob))
    assert proc.returncode == 1, proc.stderr
    assert "ERROR: AddressSanitizer: heap-buffer-overflow" in proc.stderr
    assert "Shadow byte legend" in proc.stderr
    assert len(_fault_blocks(proc.stderr)) == len(OOB_FAULTS)
    assert len(run_findings(proc.stderr)) == len(OOB_FAULTS), proc.stderr  # a raw report is no second finding
    assert "after" in proc.stdout


def test_stop_on_error_stops_at_the_first_fault(oob):
    proc = run_cli("run", "--mode", "memcheck", "--stop-on-error", str(oob))
    assert proc.returncode == 86, proc.stderr
    assert proc.stdout == ""  # stopped inside the launch: the program's own lines never ran
    assert len(_fault_blocks(proc.stderr)) == 1
    assert "stopped by memcheck" in proc.stderr
    assert len(run_findings(proc.stderr)) == 1


def test_stop_on_error_is_a_memcheck_option(oob):
    proc = run_cli("run", "--mode", "synccheck", "--stop-on-error", str(oob))
    assert proc.returncode == 2
    assert "--stop-on-error" in proc.stderr and "--mode memcheck" in proc.stderr


def test_a_thread_that_faults_in_a_loop_is_one_error(tmp_path):
    src = tmp_path / "spray.cu"
    src.write_text(LOOP)
    proc = run_cli("run", "--mode", "memcheck", str(src))
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == "spray: cudaErrorLaunchFailure\n"
    blocks = _fault_blocks(proc.stderr)
    assert len(blocks) == 1, proc.stderr  # one thread: one error, however often it faulted
    assert blocks[0][1].endswith(f" in {src}:{line_of(src, 'PLANT-LOOP')}"), blocks[0]
    assert "is 0 bytes after the end of a 64-byte allocation" in "\n".join(blocks[0])
    assert proc.stderr.rstrip().endswith("========= ERROR SUMMARY: 1 error"), proc.stderr


# A kernel with a barrier (run with fibers, or as block loops in the fibers' order): after it the
# thread that arrived last runs first, so thread 7 writes past the 16-int buffer before threads
# 4 to 6 fault nearer its end. Its write lands where AddressSanitizer keeps the next heap block's
# header, which the later threads' reports read: the runtime puts such a write back.
SYNCED = textwrap.dedent(
    """\
    #include <cstdio>
    #include <cstdlib>
    __global__ void synced(int* out, int a) {
        __shared__ int s;
        if (threadIdx.x == 0) s = a;
        __syncthreads();
        out[threadIdx.x + a] = s;  // PLANT-SYNCED
    }
    int main(int argc, char** argv) {
        int* out;
        cudaMalloc(&out, 16 * sizeof(int));
        synced<<<1, 8>>>(out, std::atoi(argv[1]));  // LAUNCH
        std::printf("synced: %s\\n", cudaGetErrorName(cudaDeviceSynchronize()));
        return 0;
    }
    """
)


@pytest.mark.parametrize("offset", [12, 16], ids=["half_the_block_faults", "every_thread_faults"])
def test_faults_after_a_barrier_are_reported_and_nothing_else(tmp_path, offset):
    src = tmp_path / "synced.cu"
    src.write_text(SYNCED)
    proc = run_cli("run", "--mode", "memcheck", str(src), "--", str(offset))
    assert proc.returncode == 1, proc.stderr  # the program's own 0, made 1 by the findings
    assert proc.stdout == "synced: cudaErrorLaunchFailure\n"
    for noise in ("AddressSanitizer", "DEADLYSIGNAL", "nested bug", "stopped by memcheck"):
        assert noise not in proc.stderr, proc.stderr
    faulting = [t for t in range(8) if t + offset >= 16]
    blocks = _fault_blocks(proc.stderr)
    assert len(blocks) == len(faulting), proc.stderr  # one report per faulting thread
    by_thread = {}
    for block in blocks:
        t = int(block[2].split("by thread (")[1].split(",")[0])
        by_thread[t] = block
    assert sorted(by_thread) == faulting, proc.stderr
    plant, launch = line_of(src, "PLANT-SYNCED"), line_of(src, "LAUNCH")
    by = "in block (0,0,0) of kernel 'synced' launched at"
    for t, block in by_thread.items():
        assert block[:3] == [
            "========= Invalid __global__ write of size 4 bytes (heap-buffer-overflow)",
            f"=========     at synced(int*, int) in {src}:{plant}",
            f"=========     by thread ({t},0,0) {by} {src}:{launch}",
        ], block
        # Each address is placed against the buffer the write ran past, whichever thread ran first.
        after = f" is {(t + offset - 16) * 4} bytes after the end of a 64-byte allocation at 0x"
        assert block[3].startswith("=========     Address 0x") and after in block[3], block
    assert len(run_findings(proc.stderr)) == len(faulting), proc.stderr
    assert proc.stderr.rstrip().endswith(f"========= ERROR SUMMARY: {len(faulting)} errors"), proc.stderr


def test_a_use_after_free_names_the_freed_block(tmp_path):
    src = tmp_path / "uaf.cu"
    src.write_text(UAF)
    proc = run_cli("run", "--mode", "memcheck", str(src))
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == "read: cudaErrorLaunchFailure\n"
    blocks = _fault_blocks(proc.stderr)
    assert len(blocks) == 4, proc.stderr  # each of the block's 4 threads (one warp) reads a[3]
    head, at, by, *rest = blocks[0]
    assert head == "========= Invalid __global__ read of size 4 bytes (heap-use-after-free)"
    assert at == f"=========     at read_freed(int const*, int*) in {src}:{line_of(src, 'PLANT-UAF')}"
    assert by.startswith("=========     by thread (0,0,0) in block (0,0,0) of kernel 'read_freed'")
    inside = "is 12 bytes inside a 64-byte block at 0x"
    assert any(inside in ln and ln.endswith("that was freed") for ln in rest), rest


def test_the_parser_reads_a_fault_block_once_beside_its_raw_report():
    """A raw AddressSanitizer report followed by the runtime's block (``--verbose``, ``check``) is
    one finding; a raw report with no block after it (host code) stays a finding of its own."""
    out = "\n".join(
        [
            "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x8 at pc 0x3",
            "    #0 0x3 in main /src/a.cu:7",
            "simulator: memcheck: host code: the report above is from host code (not a kernel); it is judged",
            "=" * 65,
            "==1==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x10 at pc 0x1",
            "    #0 0x1 in k(int*) /src/a.cu:4",
            "========= Invalid __global__ write of size 4 bytes (heap-buffer-overflow)",
            "=========     at k(int*) in /src/a.cu:4",
            "=========     by thread (7,0,0) in block (2,0,0) of kernel 'k' launched at /src/a.cu:9",
            "=========     Address 0x10 is 0 bytes after the end of a 4-byte allocation at 0xc",
            "=========",
            "=" * 65,
            "==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x20 at pc 0x2",
            "    #0 0x2 in main /src/a.cu:12",
            "simulator: memcheck: host code: the report above is from host code (not a kernel); it is judged",
        ]
    )
    assert parse_findings("memcheck", out) == [
        "memcheck: host code: heap-use-after-free: main at /src/a.cu:7",
        "memcheck: heap-buffer-overflow: k(int*) at /src/a.cu:4; in kernel 'k' block (2,0,0) "
        "(launched at /src/a.cu:9) thread (7,0,0)",
        "memcheck: host code: heap-use-after-free: main at /src/a.cu:12",
    ]
    note = (
        "simulator: memcheck: note: 3 error(s) past the print limit of 100 were not printed (--print-limit)"
    )
    assert unprinted_errors(out + "\n" + note) == 3 and unprinted_errors(out) == 0


# Thread 1 adds one to INT_MAX; then a second kernel writes past its buffer, so that a device
# fault follows an undefined-behaviour report in one run.
OVERFLOW = textwrap.dedent(
    """\
    #include <cstdio>
    #include <cstdlib>
    __global__ void add_one(int* a) {
        int v = a[threadIdx.x];
        a[threadIdx.x] = v + 1;  // PLANT-OVF
    }
    __global__ void past_end(int* a) { a[4 + threadIdx.x] = 0; }  // PLANT-OOB
    int main() {
        int* a;
        cudaMalloc(&a, 4 * sizeof(int));
        int h[4] = {1, 2147483647, 3, 4};
        cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
        add_one<<<1, 4>>>(a);  // LAUNCH
        std::printf("add: %s\\n", cudaGetErrorName(cudaDeviceSynchronize()));
        cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost);
        std::printf("a[3] = %d\\n", h[3]);
        if (std::getenv("THEN_OOB")) {
            past_end<<<1, 1>>>(a);
            std::printf("oob: %s\\n", cudaGetErrorName(cudaDeviceSynchronize()));
        }
        return 0;
    }
    """
)

# A float4 load from an address 4 bytes into a 16-byte aligned buffer.
MISALIGNED = textwrap.dedent(
    """\
    #include <cstdio>
    __global__ void load4(const char* p, float* out) {
        const float4* v = reinterpret_cast<const float4*>(p + 4);
        float4 x = *v;  // PLANT-MIS
        out[threadIdx.x] = x.x;
    }
    int main() {
        char *p;
        float* out;
        cudaMalloc(&p, 64);
        cudaMalloc(&out, 2 * sizeof(float));
        cudaMemset(p, 0, 64);
        load4<<<1, 2>>>(p, out);  // LAUNCH
        std::printf("load: %s\\n", cudaGetErrorName(cudaDeviceSynchronize()));
        return 0;
    }
    """
)


def _ub_blocks(stderr: str) -> list[list[str]]:
    """The undefined-behaviour reports in ``stderr``, each as its lines (with the closing rule)."""
    return _blocks(stderr, "========= Undefined behaviour: ", body="=========")


@pytest.fixture(scope="module")
def overflow(tmp_path_factory):
    src = tmp_path_factory.mktemp("memcheck_ub") / "overflow.cu"
    src.write_text(OVERFLOW)
    return src


def test_signed_overflow_reads_as_compute_sanitizer_and_the_program_goes_on(overflow):
    proc = run_cli("run", "--mode", "memcheck", str(overflow))
    assert proc.returncode == 1, proc.stderr  # the program's own 0, made 1 by the finding
    # UBSan recovers: every thread ran (a[3] was incremented) and the launch succeeded, as a
    # GPU does not trap on signed overflow.
    assert proc.stdout.splitlines() == ["add: cudaSuccess", "a[3] = 5"], proc.stdout
    blocks = _ub_blocks(proc.stderr)
    assert len(blocks) == 1, proc.stderr
    line, launch = line_of(overflow, "PLANT-OVF"), line_of(overflow, "LAUNCH")
    assert blocks[0] == [
        "========= Undefined behaviour: signed integer overflow: 2147483647 + 1 cannot be represented in "
        "type 'int'",
        f"=========     at add_one(int*) in {overflow}:{line}",
        "=========     by thread (1,0,0) in block (0,0,0) of kernel 'add_one' launched at "
        f"{overflow}:{launch}",
        "=========     Host frames of the launch:",
        f"=========         main in {overflow}:{launch}",
        "=========",
    ], proc.stderr
    # UBSan's own report (its line, its stack through the runtime) is not shown.
    for noise in (
        "runtime error:",
        "    #0 ",
        "launch.h",
        "scheduler.cpp",
        "invoke.h",
        "undefined behaviour below",
    ):
        assert noise not in proc.stderr, noise
    # The finding reads as it did from UBSan's report.
    assert run_findings(proc.stderr) == [
        f"memcheck: undefined behaviour: signed integer overflow: 2147483647 + 1 cannot be represented in "
        f"type 'int' at {overflow}:{line}; in kernel 'add_one' block (0,0,0) "
        f"(launched at {overflow}:{launch}) thread (1,0,0)"
    ]
    assert proc.stderr.rstrip().endswith("========= ERROR SUMMARY: 1 error"), proc.stderr


def test_verbose_shows_ubsans_report_too(overflow):
    proc = run_cli("run", "--mode", "memcheck", "--verbose", str(overflow))
    assert proc.returncode == 1, proc.stderr
    assert f"{overflow}:{line_of(overflow, 'PLANT-OVF')}:" in proc.stderr
    assert "runtime error: signed integer overflow" in proc.stderr
    assert "    #0 " in proc.stderr  # UBSan's stack
    assert len(_ub_blocks(proc.stderr)) == 1
    assert len(run_findings(proc.stderr)) == 1, proc.stderr  # the raw report is not a second finding
    assert "========= ERROR SUMMARY: 1 error" in proc.stderr


def test_a_device_fault_after_undefined_behaviour_has_no_stray_rule(overflow):
    proc = run_cli("run", "--mode", "memcheck", str(overflow), env={"THEN_OOB": "1"})
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines()[-1] == "oob: cudaErrorLaunchFailure", proc.stdout
    assert len(_ub_blocks(proc.stderr)) == 1 and len(_fault_blocks(proc.stderr)) == 1, proc.stderr
    # The fault is named by its own stack, not by the one read for the undefined behaviour.
    at = _fault_blocks(proc.stderr)[0][1]
    assert at == f"=========     at past_end(int*) in {overflow}:{line_of(overflow, 'PLANT-OOB')}", at
    # AddressSanitizer's opening rule of '=' (its report is hidden) does not show.
    assert not [ln for ln in proc.stderr.splitlines() if set(ln) == {"="} and len(ln) > 9], proc.stderr
    assert len(run_findings(proc.stderr)) == 2
    assert "========= ERROR SUMMARY: 2 errors" in proc.stderr


def test_a_misaligned_vector_load_reads_as_compute_sanitizer(tmp_path):
    src = tmp_path / "misaligned.cu"
    src.write_text(MISALIGNED)
    proc = run_cli("run", "--mode", "memcheck", str(src))
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == "load: cudaSuccess\n"  # UBSan recovers; the launch is not failed
    blocks = _ub_blocks(proc.stderr)
    assert len(blocks) == 1, proc.stderr  # UBSan reports a source location once
    head, at, by, *_ = blocks[0]
    assert head.startswith("========= Undefined behaviour: reference binding to misaligned address 0x"), head
    assert head.endswith("for type 'const struct float4', which requires 16 byte alignment"), head
    assert at == f"=========     at load4(char const*, float*) in {src}:{line_of(src, 'PLANT-MIS')}"
    assert by == (
        "=========     by thread (0,0,0) in block (0,0,0) of kernel 'load4' launched at "
        f"{src}:{line_of(src, 'LAUNCH')}"
    )
    assert "pointer points here" not in proc.stderr and "runtime error:" not in proc.stderr
    (finding,) = run_findings(proc.stderr)
    assert finding.startswith("memcheck: undefined behaviour: reference binding to misaligned address")
    assert f"at {src}:{line_of(src, 'PLANT-MIS')}; in kernel 'load4' block (0,0,0)" in finding
    assert "========= ERROR SUMMARY: 1 error" in proc.stderr


def test_the_parser_reads_an_undefined_behaviour_block_once_beside_its_raw_report():
    block = [
        "========= Undefined behaviour: division by zero",
        "=========     at k(int*) in /src/x.cu:7",
        "=========     by thread (2,0,0) in block (1,0,0) of kernel 'k' launched at /src/x.cu:20",
        "=========",
    ]
    raw = ["/src/x.cu:7:9: runtime error: division by zero", "    #0 0x1 in k(int*) /src/x.cu:7"]
    expected = [
        "memcheck: undefined behaviour: division by zero at /src/x.cu:7; in kernel 'k' block (1,0,0) "
        "(launched at /src/x.cu:20) thread (2,0,0)"
    ]
    assert parse_findings("memcheck", "\n".join(block)) == expected
    assert parse_findings("memcheck", "\n".join(block + raw)) == expected
    # Inside a runtime header: the program's frame that called it names the finding.
    inside = [
        block[0],
        block[1],
        "=========     inside the simulator's runtime at /r/simulator/runtime/v.h:3",
        *block[2:],
    ]
    assert parse_findings("memcheck", "\n".join(inside))[0].startswith(
        "memcheck: undefined behaviour: division by zero k(int*) at /src/x.cu:7; in kernel 'k'"
    )


@pytest.mark.parametrize(
    "source,entry,marker,raw",
    [
        (
            "planted_memcheck.cu",
            "planted_offbyone",
            "PLANT: off by one",
            "ERROR: AddressSanitizer: heap-buffer-overflow",
        ),
        # A fixed-size __shared__ array read past its end: UBSan's bounds check, then AddressSanitizer.
        (
            "planted_memcheck.cu",
            "planted_shared_oob",
            "PLANT: static",
            "runtime error: index 64 out of bounds",
        ),
    ],
)
def test_check_shows_the_sanitizers_report_only_with_verbose(source, entry, marker, raw):
    src = KERNELS / source
    findings = {}
    for verbose in (False, True):
        proc = run_cli("check", str(src), "--entry", entry, "--mode", "memcheck", *(["--verbose"] * verbose))
        assert proc.returncode == 1, proc.stdout + proc.stderr
        output = "\n".join(
            ln.removeprefix("  | ") for ln in proc.stdout.splitlines() if ln.startswith("  | ")
        )
        findings[verbose] = [ln for ln in proc.stdout.splitlines() if ln.startswith("  memcheck: ")]
        # One runtime block per finding; the sanitizer's own report only with --verbose.
        assert len(_fault_blocks(output)) + len(_ub_blocks(output)) == len(findings[verbose]), proc.stdout
        assert (raw in output) == verbose, proc.stdout
    # The same findings either way, the first naming the planted line.
    assert findings[False] == findings[True] and findings[False], findings
    assert f"{src}:{line_of(src, marker)}" in findings[False][0]
