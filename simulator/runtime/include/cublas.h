// Simulator stand-in for <cublas.h>: only the v2 API (cublas_api.h) is provided.
#include "cublas_api.h"
