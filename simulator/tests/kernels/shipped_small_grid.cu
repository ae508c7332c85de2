// The shipped kernels with a grid of at most 2 blocks (TL_MAX_GRID), run through
// shipped_entry.cu's cases: every grid-stride loop wraps, so a block takes a second row and a
// second (column tile, row chunk) item of the layer-norm parameter gradients, whose shared tile
// the next item overwrites (racecheck judges the barrier between them).
#define TL_MAX_GRID 2
#include "../../../torchlight/cuda_kernels/softmax_kernel.cu"
#include "../../../torchlight/cuda_kernels/layernorm_kernel.cu"
#include "shipped_entry.cu"
