// cublasLt on the CPU: handle, matmul descriptor, column-order layouts, preference, heuristic
// and cublasLtMatmul with the bias / ReLU / GELU epilogues (blas_core.h holds the GEMM loop).
#include "blas_core.h"
#include "graphs_internal.h"

using namespace __sim::blas;

struct cublasLtContext {};

namespace {
struct LtDesc {
    cublasComputeType_t compute;
    cudaDataType_t scale;
    cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    const void* bias = nullptr;
    cudaDataType_t bias_type = CUDA_R_32F;
    bool bias_type_set = false;
    void* aux = nullptr;
    int64_t aux_ld = 0;
    long long bias_batch_stride = 0, aux_batch_stride = 0;
};
struct LtLayout {
    cudaDataType type;
    uint64_t rows, cols;
    int64_t ld;
    cublasLtOrder_t order = CUBLASLT_ORDER_COL;
    int batch = 1;
    long long stride = 0;
};
struct LtPreference {
    size_t max_workspace = 0;
};

// cuBLASLt's descriptors are semi-opaque structs of 64-bit words (a program may declare one and
// initialize it with cublasLt*Init): the simulator's state lives in those words.
static_assert(sizeof(LtDesc) <= sizeof(cublasLtMatmulDescOpaque_t), "the matmul descriptor fits cuBLASLt's");
static_assert(sizeof(LtLayout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "the layout fits cuBLASLt's");
static_assert(sizeof(LtPreference) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "the preference fits cuBLASLt's");
LtDesc* lt(cublasLtMatmulDesc_t d) { return d == nullptr ? nullptr : reinterpret_cast<LtDesc*>(d->data); }
LtLayout* lt(cublasLtMatrixLayout_t l) { return l == nullptr ? nullptr : reinterpret_cast<LtLayout*>(l->data); }
LtPreference* lt(cublasLtMatmulPreference_t p) {
    return p == nullptr ? nullptr : reinterpret_cast<LtPreference*>(p->data);
}
}  // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
    if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *handle = new cublasLtContext;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
    cudaDataType s;
    int bits;
    if (desc == nullptr || !compute_types(compute, &s, &bits)) return CUBLAS_STATUS_INVALID_VALUE;
    *desc = new cublasLtMatmulDescOpaque_t;
    new (lt(*desc)) LtDesc{compute, scale};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t desc, size_t size, cublasComputeType_t compute,
                                               cudaDataType_t scale) {
    cudaDataType s;
    int bits;
    if (desc == nullptr || size < sizeof(LtDesc) || !compute_types(compute, &s, &bits)) return CUBLAS_STATUS_INVALID_VALUE;
    new (lt(desc)) LtDesc{compute, scale};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
    delete desc;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t size) {
    LtDesc* d = lt(desc);
    if (d == nullptr || buf == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    auto take = [&](auto& field) {
        if (size != sizeof(field)) return false;
        std::memcpy(&field, buf, size);
        return true;
    };
    bool ok;
    switch (attr) {
        case CUBLASLT_MATMUL_DESC_TRANSA: ok = take(d->transa); break;
        case CUBLASLT_MATMUL_DESC_TRANSB: ok = take(d->transb); break;
        case CUBLASLT_MATMUL_DESC_EPILOGUE: ok = take(d->epilogue); break;
        case CUBLASLT_MATMUL_DESC_BIAS_POINTER: ok = take(d->bias); break;
        case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: ok = take(d->bias_type) && (d->bias_type_set = true); break;
        case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER: ok = take(d->aux); break;
        case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD: ok = take(d->aux_ld); break;
        case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: ok = take(d->bias_batch_stride); break;
        case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE: ok = take(d->aux_batch_stride); break;
        case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: ok = take(d->compute); break;
        case CUBLASLT_MATMUL_DESC_SCALE_TYPE: ok = take(d->scale); break;
        case CUBLASLT_MATMUL_DESC_POINTER_MODE:
        case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET: ok = size == sizeof(int32_t); break;  // no effect here
        default:
            say("cublasLtMatmulDescSetAttribute: attribute %d is not supported", (int)attr);
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              void* buf, size_t size, size_t* written) {
    const LtDesc* d = lt(desc);
    if (d == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    auto give = [&](const auto& field) {
        if (written != nullptr) *written = sizeof(field);
        if (buf == nullptr && size == 0) return CUBLAS_STATUS_SUCCESS;  // a size query
        if (buf == nullptr || size < sizeof(field)) return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(buf, &field, sizeof(field));
        return CUBLAS_STATUS_SUCCESS;
    };
    switch (attr) {
        case CUBLASLT_MATMUL_DESC_TRANSA: return give(d->transa);
        case CUBLASLT_MATMUL_DESC_TRANSB: return give(d->transb);
        case CUBLASLT_MATMUL_DESC_EPILOGUE: return give(d->epilogue);
        case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return give(d->bias);
        case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return give(d->compute);
        case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return give(d->scale);
        default: return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
    if (layout == nullptr || type_size(type) == 0) return CUBLAS_STATUS_INVALID_VALUE;
    *layout = new cublasLtMatrixLayoutOpaque_t;
    new (lt(*layout)) LtLayout{type, rows, cols, ld};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t layout, size_t size, cudaDataType type,
                                                 uint64_t rows, uint64_t cols, int64_t ld) {
    if (layout == nullptr || size < sizeof(LtLayout) || type_size(type) == 0) return CUBLAS_STATUS_INVALID_VALUE;
    new (lt(layout)) LtLayout{type, rows, cols, ld};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
    delete layout;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t size) {
    LtLayout* l = lt(layout);
    if (l == nullptr || buf == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    auto take = [&](auto& field) {
        if (size != sizeof(field)) return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(&field, buf, size);
        return CUBLAS_STATUS_SUCCESS;
    };
    switch (attr) {
        case CUBLASLT_MATRIX_LAYOUT_TYPE: return take(l->type);
        case CUBLASLT_MATRIX_LAYOUT_ORDER: return take(l->order);
        case CUBLASLT_MATRIX_LAYOUT_ROWS: return take(l->rows);
        case CUBLASLT_MATRIX_LAYOUT_COLS: return take(l->cols);
        case CUBLASLT_MATRIX_LAYOUT_LD: return take(l->ld);
        case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return take(l->batch);
        case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return take(l->stride);
    }
    say("cublasLtMatrixLayoutSetAttribute: attribute %d is not supported", (int)attr);
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
    if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *pref = new cublasLtMatmulPreferenceOpaque_t;
    new (lt(*pref)) LtPreference;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t pref, size_t size) {
    if (pref == nullptr || size < sizeof(LtPreference)) return CUBLAS_STATUS_INVALID_VALUE;
    new (lt(pref)) LtPreference;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
    delete pref;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    size_t size) {
    if (pref == nullptr || buf == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (attr == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) {
        if (size != sizeof(uint64_t)) return CUBLAS_STATUS_INVALID_VALUE;
        std::memcpy(&lt(pref)->max_workspace, buf, size);
        return CUBLAS_STATUS_SUCCESS;
    }
    return size == sizeof(uint32_t) || size == sizeof(uint64_t) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* returned) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (desc == nullptr || a == nullptr || b == nullptr || c == nullptr || d == nullptr || pref == nullptr ||
        requested < 1 || results == nullptr || returned == nullptr)
        return CUBLAS_STATUS_INVALID_VALUE;
    std::memset(&results[0], 0, sizeof(results[0]));  // one algorithm, needing no workspace
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1.0f;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc_in, const void* alpha, const void* A,
                              cublasLtMatrixLayout_t al_in, const void* B, cublasLtMatrixLayout_t bl_in,
                              const void* beta, const void* C, cublasLtMatrixLayout_t cl_in, void* D,
                              cublasLtMatrixLayout_t dl_in,
                              const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
                              cudaStream_t stream) {
    (void)algo;
    (void)workspace;
    (void)workspace_bytes;
    const char* call = "cublasLtMatmul";
    const LtDesc* desc = lt(desc_in);
    const LtLayout *al = lt(al_in), *bl = lt(bl_in), *cl = lt(cl_in), *dl = lt(dl_in);
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (desc == nullptr || al == nullptr || bl == nullptr || cl == nullptr || dl == nullptr || alpha == nullptr ||
        beta == nullptr || D == nullptr)
        return CUBLAS_STATUS_INVALID_VALUE;
    for (const LtLayout* l : {al, bl, cl, dl}) {
        if (l->order != CUBLASLT_ORDER_COL) {
            say("%s: only CUBLASLT_ORDER_COL layouts are supported (order %d given)", call, (int)l->order);
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
    }
    Epilogue ep;
    switch (desc->epilogue) {
        case CUBLASLT_EPILOGUE_DEFAULT: break;
        case CUBLASLT_EPILOGUE_RELU: ep.act = Act::kRelu; break;
        case CUBLASLT_EPILOGUE_BIAS: ep.bias = desc->bias; break;
        case CUBLASLT_EPILOGUE_RELU_BIAS: ep.act = Act::kRelu; ep.bias = desc->bias; break;
        case CUBLASLT_EPILOGUE_GELU: ep.act = Act::kGelu; break;
        case CUBLASLT_EPILOGUE_GELU_BIAS: ep.act = Act::kGelu; ep.bias = desc->bias; break;
        case CUBLASLT_EPILOGUE_GELU_AUX: ep.act = Act::kGelu; ep.aux = desc->aux; break;
        case CUBLASLT_EPILOGUE_GELU_AUX_BIAS: ep.act = Act::kGelu; ep.aux = desc->aux; ep.bias = desc->bias; break;
        default:
            say("%s: epilogue %d is not supported (DEFAULT, RELU, BIAS, RELU_BIAS, GELU, GELU_BIAS, GELU_AUX and "
                "GELU_AUX_BIAS are)",
                call, (int)desc->epilogue);
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    const bool wants_bias = desc->epilogue == CUBLASLT_EPILOGUE_BIAS || desc->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
                            desc->epilogue == CUBLASLT_EPILOGUE_GELU_BIAS ||
                            desc->epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    if ((wants_bias && ep.bias == nullptr) || (ep.aux == nullptr && (desc->epilogue & 128) != 0)) {
        say("%s: the epilogue needs a %s pointer (cublasLtMatmulDescSetAttribute)", call,
            ep.bias == nullptr && wants_bias ? "bias" : "aux");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    ep.bias_type = desc->bias_type_set ? desc->bias_type : dl->type;
    ep.bias_stride = desc->bias_batch_stride;
    ep.aux_type = dl->type;
    ep.aux_ld = desc->aux_ld != 0 ? desc->aux_ld : (int64_t)dl->rows;
    ep.aux_stride = desc->aux_batch_stride;
    const long long m = (long long)dl->rows, n = (long long)dl->cols;
    const long long k = desc->transa == CUBLAS_OP_N ? (long long)al->cols : (long long)al->rows;
    const long long a_rows = desc->transa == CUBLAS_OP_N ? m : k, b_rows = desc->transb == CUBLAS_OP_N ? k : n;
    const long long b_cols = desc->transb == CUBLAS_OP_N ? n : k;
    if ((long long)al->rows != a_rows || (long long)bl->rows != b_rows || (long long)bl->cols != b_cols ||
        (long long)cl->rows != m || (long long)cl->cols != n || al->batch != dl->batch || bl->batch != dl->batch ||
        cl->batch != dl->batch) {
        say("%s: the layouts do not fit together: A %llux%llu, B %llux%llu, C %llux%llu, D %llux%llu (transa %d, "
            "transb %d)",
            call, (unsigned long long)al->rows, (unsigned long long)al->cols, (unsigned long long)bl->rows,
            (unsigned long long)bl->cols, (unsigned long long)cl->rows, (unsigned long long)cl->cols,
            (unsigned long long)dl->rows, (unsigned long long)dl->cols, (int)desc->transa, (int)desc->transb);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    cudaDataType scalar;
    int acc_bits;
    compute_types(desc->compute, &scalar, &acc_bits);
    const Operand a{A, al->type, (long long)al->rows, (long long)al->cols, al->ld, al->stride};
    const Operand b{B, bl->type, (long long)bl->rows, (long long)bl->cols, bl->ld, bl->stride};
    const Operand c{C, cl->type, m, n, cl->ld, cl->stride};
    const Operand d{D, dl->type, m, n, dl->ld, dl->stride};
    const int batch = dl->batch;
    const double be = load(beta, desc->scale, 0);
    if (!inside(call, "A", a, batch) || !inside(call, "B", b, batch) || !inside(call, "D", d, batch) ||
        (be != 0.0 && !inside(call, "C", c, batch)))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    const double alv = load(alpha, desc->scale, 0);
    // Everything the call reads (descriptors, layouts, host scalars) is read now; the product
    // is computed now, or at each replay of a graph when a stream capture records the call.
    auto run = [=, ta = desc->transa, tb = desc->transb, dt = dl->type, ld = dl->ld, st = dl->stride] {
        if (acc_bits == 64)
            gemm<double>(ta, tb, m, n, k, alv, a, b, be, c, D, dt, ld, st, batch, ep);
        else
            gemm<float>(ta, tb, m, n, k, alv, a, b, be, c, D, dt, ld, st, batch, ep);
    };
    if (!__sim::capture_library_call(stream, run)) run();
    return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
