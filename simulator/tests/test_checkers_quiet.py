"""memcheck follows compute-sanitizer: correct programs run clean (device memory left allocated
at exit is reported only with ``--leak-check full``; host-code reports only with
``--check-host``, labelled as host code), and every finding names the program's own line."""

from __future__ import annotations

import textwrap

import pytest

from .conftest import KERNELS, line_of, run_cli, run_findings

LEAKS = KERNELS / "program_leak_at_exit.cu"
HOST_BUGS = KERNELS / "program_host_bugs.cu"


def test_device_memory_left_at_exit_is_not_a_finding_by_default():
    for extra in ((), ("--leak-check", "no")):
        proc = run_cli("run", str(LEAKS), "--mode", "memcheck", *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.strip() == "PASSED"
        assert "leak" not in proc.stderr and "finding" not in proc.stderr


@pytest.mark.parametrize("spelling", [("--leak-check", "full"), ("--leak-check=full",)])
def test_leak_check_full_names_each_programs_own_cudamalloc_line(spelling):
    proc = run_cli("run", str(LEAKS), "--mode", "memcheck", *spelling)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "PASSED"
    found = run_findings(proc.stderr)
    assert len(found) == 5, proc.stderr  # the freed buffer is not one of them
    n = 100  # floats per buffer in the program
    expected = {
        "LEAK: typed form": ("main", n * 4),
        "LEAK: void** form": ("keep_buffer", n * 4),
        "LEAK: managed": ("main", 64),
        "LEAK: pitch": ("main", 512 * 3),  # 3 rows of 40 bytes, each padded to 512
        "LEAK: async": ("main", 128),
    }
    for marker, (func, size) in expected.items():
        want = (
            f"memcheck: device memory leak: {size} bytes from cudaMalloc in {func} at "
            f"{LEAKS}:{line_of(LEAKS, marker)} were never freed"
        )
        assert sum(f.startswith(want) for f in found) == 1, (want, found)
    for f in found:
        assert "cuda_sim.h" not in f and "/simulator/runtime/" not in f, f


def test_leak_check_and_check_host_are_memcheck_options():
    for option in (("--leak-check", "full"), ("--check-host",)):
        proc = run_cli("run", str(LEAKS), "--mode", "fast", *option)
        assert proc.returncode == 2
        assert "memcheck options" in proc.stderr


def test_check_reports_a_device_leak_at_the_entry_line(tmp_path):
    # check's entry is a test driver: its contract is to free what it allocates.
    src = tmp_path / "leak.cu"
    src.write_text(
        "#include <cuda_runtime.h>\n"
        'extern "C" int leaks(void) {\n'
        "    float* p;\n"
        "    return (int)cudaMalloc(&p, 64);\n"
        "}\n"
    )
    proc = run_cli("check", str(src), "--entry", "leaks", "--mode", "memcheck")
    assert proc.returncode == 1, proc.stdout
    assert f"device memory leak: 64 bytes from cudaMalloc in leaks at {src}:4 " in proc.stdout


def test_host_code_reports_do_not_fail_memcheck_by_default():
    proc = run_cli("run", str(HOST_BUGS), "--mode", "memcheck")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "PASSED"
    assert "runtime error" not in proc.stderr and "AddressSanitizer" not in proc.stderr
    assert "finding" not in proc.stderr
    # The host code is built uninstrumented, so its negative shift goes unseen; the new[]/delete
    # mismatch is the sanitizer's allocator's own finding, raised and not shown.
    assert "1 sanitizer report(s) from host code were not shown" in proc.stderr


def test_a_host_source_is_built_without_instrumentation_unless_check_host(tmp_path):
    # A host .cpp file linked with the program: by default compiled as in fast mode, so its
    # negative shift raises no report at all; --check-host instruments it and names its line.
    (tmp_path / "host.cpp").write_text(
        "#include <cstdlib>\n"
        "int shift_by(const char* text) {\n"
        "    int bits = std::atoi(text);\n"
        "    return 1 << bits;  // HOST-CPP-UB\n"
        "}\n"
    )
    (tmp_path / "main.cu").write_text(
        "#include <cstdio>\n"
        "int shift_by(const char* text);\n"
        "__global__ void one(int* p) { *p = 1; }\n"
        "int main(int argc, char** argv) {\n"
        "    int* d; int h = 0;\n"
        "    cudaMalloc(&d, sizeof(int)); one<<<1, 1>>>(d);\n"
        "    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost); cudaFree(d);\n"
        '    std::printf("%d %d\\n", h, shift_by(argc > 1 ? argv[1] : "-1") != 0);\n'
        "    return 0;\n"
        "}\n"
    )
    sources = [str(tmp_path / "main.cu"), str(tmp_path / "host.cpp")]
    default = run_cli("run", *sources, "--mode", "memcheck")
    assert default.returncode == 0, default.stdout + default.stderr
    assert default.stdout.startswith("1 "), default.stdout
    assert "sanitizer report" not in default.stderr and "runtime error" not in default.stderr
    checked = run_cli("run", *sources, "--mode", "memcheck", "--check-host")
    shift = line_of(tmp_path / "host.cpp", "HOST-CPP-UB")
    assert any(
        f.startswith("memcheck: host code: undefined behaviour: shift exponent -1 is negative")
        and f.endswith(f"{tmp_path / 'host.cpp'}:{shift}")
        for f in run_findings(checked.stderr)
    ), checked.stderr


def test_check_host_reports_host_code_labelled_as_host_code():
    proc = run_cli("run", str(HOST_BUGS), "--mode", "memcheck", "--check-host")
    assert proc.returncode != 0, proc.stdout + proc.stderr
    found = run_findings(proc.stderr)
    shift = line_of(HOST_BUGS, "HOST-UB")
    mismatch = line_of(HOST_BUGS, "HOST-ASAN")
    assert any(
        f.startswith("memcheck: host code: undefined behaviour: shift exponent -1 is negative")
        and f.endswith(f"{HOST_BUGS}:{shift}")
        for f in found
    ), found
    assert any(
        f.startswith("memcheck: host code: alloc-dealloc-mismatch") and f.endswith(f"{HOST_BUGS}:{mismatch}")
        for f in found
    ), found
    assert not any("kernel '" in f for f in found), found


DEVICE_BUGS = textwrap.dedent(
    """\
    #include <cstdio>
    #include <cuda_runtime.h>
    __global__ void overflow_kernel(int* out, int s) {
        out[threadIdx.x] = ((int)threadIdx.x + s) * 429496730;  // DEVICE-UB
    }
    __global__ void oob_kernel(float* p, int n) {
        p[threadIdx.x + n] = 1.0f;  // DEVICE-OOB
    }
    int main(int argc, char** argv) {
        int* d;
        float* f;
        cudaMalloc(&d, 64 * sizeof(int));
        cudaMalloc(&f, 32 * sizeof(float));
        overflow_kernel<<<1, 4>>>(d, 2);
        if (argc > 1) oob_kernel<<<1, 32>>>(f, 16);
        cudaDeviceSynchronize();
        cudaFree(d);
        cudaFree(f);
        std::printf("done\\n");
        return 0;
    }
    """
)


def test_device_findings_still_fail_memcheck_and_name_the_kernel_line(tmp_path):
    src = tmp_path / "device_bugs.cu"
    src.write_text(DEVICE_BUGS)
    ub_line, oob_line = line_of(src, "DEVICE-UB"), line_of(src, "DEVICE-OOB")
    # Undefined behaviour in a kernel: reported with the CUDA thread; the program goes on.
    proc = run_cli("run", str(src), "--mode", "memcheck")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "done"
    found = run_findings(proc.stderr)
    assert len(found) == 1, found
    # (A shift by a negative count is no longer one: device shifts follow PTX, see the front end.)
    assert found[0].startswith("memcheck: undefined behaviour: signed integer overflow: 5 * 429496730")
    assert f"at {src}:{ub_line}; in kernel 'overflow_kernel' block (0,0,0)" in found[0]
    assert found[0].endswith("thread (3,0,0)")
    # An out-of-bounds write fails its launch (the program goes on, as under compute-sanitizer),
    # naming the kernel's line.
    proc = run_cli("run", str(src), "--mode", "memcheck", "--", "oob")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    found = run_findings(proc.stderr)
    oob = [f for f in found if "heap-buffer-overflow" in f]
    # Threads 16..31 write past the 32 floats (n = 16), all in warp 0: one finding per thread.
    threads = sorted(f.rsplit("thread (", 1)[1] for f in oob)
    assert threads == sorted(f"{t},0,0)" for t in range(16, 32)), found
    for finding in oob:
        assert finding.startswith("memcheck: heap-buffer-overflow: oob_kernel(float*, int) at "), finding
        assert f" at {src}:{oob_line}; in kernel 'oob_kernel' block (0,0,0)" in finding
    assert "host code" not in " ".join(found)
    assert "simulator: the program exited with status 0" in proc.stderr
