#!/usr/bin/env bash
# Build the CUDA C kernel libraries (softmax_kernel.so, layernorm_kernel.so) with nvcc.
#
# Usage: ci/build-kernels.sh [--out DIR]
#   --out DIR               where the .so files go (default: torchlight/cuda_kernels/)
#   TORCHLIGHT_CUDA_ARCHS   semicolon list of SM versions (default "80;90"): SASS for each, plus
#                           PTX for the highest so newer GPUs can JIT-compile it
#   NVCC                    the compiler to run (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc)
# cudart is linked statically, so the libraries need only the NVIDIA driver at run time.
# After building, each library must export its launchers (checked with nm -D).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src_dir="$repo_root/torchlight/cuda_kernels"
out_dir="$src_dir"

usage() {
    echo "usage: $0 [--out DIR]" >&2
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --out)
            if [[ $# -lt 2 ]]; then
                usage
                exit 2
            fi
            out_dir="$2"
            shift 2
            ;;
        --out=*)
            out_dir="${1#--out=}"
            shift
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *)
            echo "build-kernels: unknown argument '$1'" >&2
            usage
            exit 2
            ;;
    esac
done

nvcc_bin="${NVCC:-}"
if [[ -z "$nvcc_bin" ]]; then
    if command -v nvcc > /dev/null 2>&1; then
        nvcc_bin="$(command -v nvcc)"
    elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
        nvcc_bin=/usr/local/cuda/bin/nvcc
    fi
fi
if [[ -z "$nvcc_bin" ]] || ! command -v "$nvcc_bin" > /dev/null 2>&1; then
    echo "build-kernels: nvcc not found (looked at \$NVCC, PATH and /usr/local/cuda/bin)." >&2
    echo "  Install the CUDA toolkit (or use an nvidia/cuda *devel* image), or set NVCC=/path/to/nvcc." >&2
    echo "  Without nvcc, build the CPU version instead: python -m simulator build torchlight/cuda_kernels/*.cu --out DIR" >&2
    exit 1
fi

archs="${TORCHLIGHT_CUDA_ARCHS:-80;90}"
IFS=';' read -r -a arch_list <<< "$archs"
gencode=()
highest=-1
highest_arch=""
for arch in "${arch_list[@]}"; do
    arch="${arch// /}"
    [[ -z "$arch" ]] && continue
    if ! [[ "$arch" =~ ^[0-9]+[a-z]?$ ]]; then
        echo "build-kernels: TORCHLIGHT_CUDA_ARCHS entry '$arch' is not an SM version like 80 or 90" >&2
        exit 2
    fi
    gencode+=("-gencode=arch=compute_${arch},code=sm_${arch}")
    number="${arch//[a-z]/}"
    if ((number > highest)); then
        highest="$number"
        highest_arch="$arch"
    fi
done
if [[ ${#gencode[@]} -eq 0 ]]; then
    echo "build-kernels: TORCHLIGHT_CUDA_ARCHS='$archs' names no architecture" >&2
    exit 2
fi
gencode+=("-gencode=arch=compute_${highest_arch},code=compute_${highest_arch}")

# Checked after the arch list, so a bad TORCHLIGHT_CUDA_ARCHS is refused even without binutils.
if ! command -v nm > /dev/null 2>&1; then
    echo "build-kernels: nm not found; install binutils to check the exported symbols" >&2
    exit 1
fi

mkdir -p "$out_dir"

# Library name -> the symbols it must export.
declare -A exports=(
    [softmax_kernel]="tl_attn_softmax_fw tl_attn_softmax_bw tl_softmax_abi_version"
    [layernorm_kernel]="tl_layernorm_fw tl_layernorm_bw tl_layernorm_abi_version"
)

start=$SECONDS
for name in softmax_kernel layernorm_kernel; do
    src="$src_dir/$name.cu"
    lib="$out_dir/$name.so"
    echo "build-kernels: $src -> $lib (archs: $archs, PTX: compute_$highest_arch)"
    "$nvcc_bin" -O3 -std=c++17 "${gencode[@]}" -cudart static \
        -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -shared \
        -I "$src_dir" -o "$lib.tmp" "$src"
    defined="$(nm -D --defined-only "$lib.tmp" | awk '{print $NF}')"
    for symbol in ${exports[$name]}; do
        if ! grep -qx "$symbol" <<< "$defined"; then
            rm -f "$lib.tmp"
            echo "build-kernels: $lib does not export '$symbol' (nm -D --defined-only)" >&2
            exit 1
        fi
    done
    mv -f "$lib.tmp" "$lib"
done
echo "build-kernels: built softmax_kernel.so and layernorm_kernel.so in $out_dir in $((SECONDS - start)) s"
