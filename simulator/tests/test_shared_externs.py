"""Two ``extern __shared__`` declarations of one name with different types are refused, as nvcc does."""

from __future__ import annotations

import pytest

from simulator.build import SimBuildError, translate_source

KERNELS = """\
__global__ void sum(float* out) {
    extern __shared__ float s[];
    s[threadIdx.x] = 1.0f;
    out[threadIdx.x] = s[threadIdx.x];
}
__global__ void scan(int* out) {
    extern __shared__ %s s[];
    s[threadIdx.x] = 1;
    out[threadIdx.x] = s[threadIdx.x];
}
"""


def _translate(tmp_path, text: str) -> str:
    src = tmp_path / "externs.cu"
    src.write_text(text)
    return translate_source(src)


def test_one_name_with_two_types_is_refused_with_nvccs_words(tmp_path):
    with pytest.raises(SimBuildError) as refused:
        _translate(tmp_path, KERNELS % "int")
    assert str(refused.value).endswith(
        'externs.cu:7: declaration is incompatible with previous "s" (declared at line 2)'
    )


def test_a_file_scope_declaration_is_the_same_variable(tmp_path):
    text = "extern __shared__ unsigned char s[];\n" + KERNELS % "float"
    with pytest.raises(SimBuildError, match=r'externs.cu:3: declaration is incompatible with previous "s"'):
        _translate(tmp_path, text)


def test_one_type_twice_other_namespaces_and_templates_are_accepted(tmp_path):
    # nvcc 13 compiles this text (an instance of t with another type than float it refuses).
    text = (
        KERNELS % "float"
        + "namespace other { __global__ void k(int* out) { extern __shared__ int s[]; out[0] = s[0]; } }\n"
        + "template <class T> __global__ void t(T* out) { extern __shared__ T s[]; out[0] = s[0]; }\n"
        + "template __global__ void t<float>(float*);\n"
    )
    assert "dynamic_shared()" in _translate(tmp_path, text)
