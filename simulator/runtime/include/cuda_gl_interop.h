// Simulator stand-in for <cuda_gl_interop.h>: the runtime header is force-included by the build.
// OpenGL interoperability (cudaGraphicsGLRegisterBuffer, ...) is not provided: a program that
// only includes this header (Rodinia's hybridsort) builds, and one that calls an interop
// function fails the build with that name.
#include "../cuda_sim.h"
