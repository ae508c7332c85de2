// Simulator stand-in for <cuda_pipeline.h>: the primitives of <cuda_pipeline_primitives.h>.
#ifndef CUDA_SIM_CUDA_PIPELINE_H
#define CUDA_SIM_CUDA_PIPELINE_H

#include "cuda_pipeline_primitives.h"

#endif  // CUDA_SIM_CUDA_PIPELINE_H
