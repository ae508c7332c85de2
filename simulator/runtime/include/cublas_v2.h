// Simulator stand-in for <cublas_v2.h>: see cublas_api.h.
#include "cublas_api.h"
