// The refusal of a texture gather the simulator does not model (sim_texture_gather.h samples the
// ones it does).
#include "sim_internal.h"

#include <cstdio>

namespace __sim {

void texture_gather_refused(const char* why, int comp, const char* file, int line) {
    char what[320];
    std::snprintf(what, sizeof what,
                  "tex2Dgather (component %d) at %s:%d is %s, which the simulator does not model: it gathers "
                  "components 0-3 of 2-D textures over a CUDA array or pitched memory; see "
                  "simulator/docs/textures.md",
                  comp, file, line, why);
    trap_with(what);
}

}  // namespace __sim
