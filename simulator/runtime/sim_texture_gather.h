// Texture gather in device code (included by sim_texture_fetch.h): tex2Dgather returns one
// component of each of the four texels that bilinear filtering would weigh for (x, y), whatever
// the texture's filter mode. The footprint is found as a linear fetch finds it (x_B = x - 0.5
// after normalized coordinates are wrapped or mirrored and scaled, i = floor(x_B)), each texel
// index is resolved by the address mode, and the four come back in PTX tld4's order,
// counter-clockwise from the lower left: .x = (i, j+1), .y = (i+1, j+1), .z = (i+1, j),
// .w = (i, j).
#ifndef SIM_TEXTURE_GATHER_H
#define SIM_TEXTURE_GATHER_H

namespace __sim {

// A gather the simulator does not model (not a 2-D texture, a mipmapped one, a component
// outside 0-3): reported with the call's line, and the launch stops (texture_gather.cpp).
SIM_API __attribute__((noreturn)) void texture_gather_refused(const char* why, int comp, const char* file,
                                                              int line);

// Why a gather of `t` is not modelled, or null when it is: only plain 2-D textures (a CUDA
// array or pitched memory, not linear memory, 3-D, layered or cubemap) and components 0-3.
static inline const char* tex_gather_refusal(const TexData& t, int comp) {
    if (t.linear) return "a gather of a cudaResourceTypeLinear (1-D) texture";
    if (t.layers > 0) return "a gather of a layered or cubemap texture";
    if (t.d > 1) return "a gather of a 3-D texture";
    if (comp < 0 || comp > 3) return "a gather component outside 0-3";
    return nullptr;
}

// Component `comp` of the four footprint texels of (x, y), in tld4 order, in the read mode's
// domain (a border texel gives the border colour's component). Out of line for the reason
// tex_texel gives.
__attribute__((noinline)) static inline void tex_gather_values(const TexData& t, const TexSampler& s, float x,
                                                               float y, int comp, double* v) {
    const int n[2] = {t.w, t.h};
    const float c[2] = {x, y};
    int mode[2], lo[2];
    for (int k = 0; k < 2; k++) {
        mode[k] = tex_mode(s, k);
        lo[k] = tex_floor(tex_coord(c[k], n[k], mode[k], s.normalized) - 0.5f);
    }
    static const int dx[4] = {0, 1, 1, 0}, dy[4] = {1, 1, 0, 0};
    const int nread = s.read == cudaReadModeNormalizedFloat;
    for (int q = 0; q < 4; q++) {
        int xi, yi;
        if (!tex_index(lo[0] + dx[q], n[0], mode[0], &xi) || !tex_index(lo[1] + dy[q], n[1], mode[1], &yi)) {
            v[q] = s.border[comp];
            continue;
        }
        double texel[4];
        tex_texel(t, xi, yi, 0, nread, texel);
        v[q] = texel[comp];
    }
}

// A gather after the checks: refused with the reason, or the four values.
static inline void tex_gather_checked(const TexData& t, const TexSampler& s, int mip_levels, float x, float y,
                                      int comp, double* v, const char* file, int line) {
    const char* why = mip_levels != 0 ? "a gather of a mipmapped texture" : tex_gather_refusal(t, comp);
    if (why != nullptr) texture_gather_refused(why, comp, file, line);
    tex_gather_values(t, s, x, y, comp, v);
}

}  // namespace __sim

#endif  // SIM_TEXTURE_GATHER_H
