"""Valid programs the simulator's own names and limits must not refuse: kernels named like the
runtime's internals or a C library function, deeply nested expressions; and a build error's
excerpt always shows the error itself."""

from __future__ import annotations

import textwrap

from simulator.syntax import BRACKET_DEPTH

from .conftest import run_cli


def test_kernels_named_like_the_runtimes_internals_or_a_library_function(tmp_path):
    src = tmp_path / "names.cu"
    src.write_text(
        textwrap.dedent(
            """\
            #include <cstdio>
            #include <cstdlib>
            __global__ void sim(int* p) { p[threadIdx.x] = 1; }
            __global__ void exit(int* p) { p[threadIdx.x] += 10; }  // beside ::exit(int)
            __global__ void sim_a(int* p) { p[threadIdx.x] += 100; }
            int main() {
                int* d;
                cudaMalloc(&d, 32 * sizeof(int));
                sim<<<1, 32>>>(d);
                exit<<<1, 32>>>(d);
                sim_a<<<1, 32>>>(d);
                int h[32];
                cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
                std::printf("%d %d\\n", h[0], h[31]);
                return 0;
            }
            """
        )
    )
    proc = run_cli("run", str(src))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "111 111\n", "")


def _nested(depth: int) -> str:
    return "(" * depth + "1" + ")" * depth


def test_deeply_nested_parentheses_build_and_deeper_than_the_front_end_parses_is_one_line(tmp_path):
    src = tmp_path / "nested.cu"
    src.write_text(
        "#include <cstdio>\n"
        f"__global__ void k(int* p) {{ p[threadIdx.x] = {_nested(300)} + threadIdx.x; }}\n"
        "int main() { int* d; cudaMalloc(&d, 4 * sizeof(int)); k<<<1, 4>>>(d);\n"
        '  int h[4]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost); std::printf("%d\\n", h[3]); }\n'
    )
    proc = run_cli("run", str(src))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "4\n", "")
    too_deep = tmp_path / "too_deep.cu"
    too_deep.write_text(f"__global__ void k(int* p) {{ *p = {_nested(BRACKET_DEPTH + 1)}; }}\n")
    proc = run_cli("build", str(too_deep), "--out", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr == (
        f"simulator: build failed: {too_deep}:1: brackets nest more than {BRACKET_DEPTH} deep here, deeper "
        "than the simulator's C++ front end parses; split the expression\n"
    )


def test_the_build_error_excerpt_shows_the_error_after_many_other_messages(tmp_path):
    src = tmp_path / "noisy.cpp"
    warnings = "".join(f"#warning note {i}\n" for i in range(30))  # three message lines each
    src.write_text(f"{warnings}#error the real problem\nint main() {{ return 0; }}\n")
    proc = run_cli("run", str(src))
    assert proc.returncode == 2
    assert f"{src}:31:2: error: #error the real problem" in proc.stderr, proc.stderr
    assert "lines of compiler messages before these left out]" in proc.stderr
    assert len(proc.stderr.splitlines()) <= 42
