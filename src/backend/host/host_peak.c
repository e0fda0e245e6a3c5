/* host_peak.c - CPU peak FLOP/s and the OpenBLAS kernel check (pure). */
#include "backend/host/host_peak.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* 1 if the space-separated list has the word w. */
static int has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; (p = strstr(p, w)); p += n)
        if ((p == list || p[-1] == ' ' || p[-1] == '\t') &&
            (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
            return 1;
    return 0;
}

void tpb_cpu_parse_flags(const char *flags, tpb_cpu_t *c)
{
    c->avx512 = has_word(flags, "avx512f");
    c->avx2 = has_word(flags, "avx2");
    c->fma = has_word(flags, "fma");
    c->avx = has_word(flags, "avx");
}

int tpb_cpu_flop_per_cycle(const tpb_cpu_t *c, tpb_dtype_t dt)
{
    int lanes32 = c->avx512 ? 16 : (c->avx || c->avx2) ? 8 : 4;
    int per_lane = c->avx512 || (c->avx2 && c->fma) ? 2 * 2 : 2; /* FMA x 2 units, or add + mul */
    int f32 = lanes32 * per_lane;
    if (dt == TPB_DTYPE_FP32)
        return f32;
    if (dt == TPB_DTYPE_FP64)
        return f32 / 2;
    return 0;
}

double tpb_cpu_peak_gflops(const tpb_cpu_t *c, double cores, tpb_dtype_t dt, char *basis,
                           size_t cap)
{
    int fpc = tpb_cpu_flop_per_cycle(c, dt);
    double peak = cores * c->ghz * fpc;
    const char *isa = c->avx512           ? "AVX-512, 2 FMA units"
                      : c->avx2 && c->fma ? "AVX2, 2 FMA units"
                      : c->avx            ? "AVX"
                                          : "SSE";
    snprintf(basis, cap, "%.3g core%s x %.2f GHz%s%s%s x %d FLOP/cycle (%s, %s)", cores,
             cores == 1.0 ? "" : "s", c->ghz, c->ghz_from ? " (" : "",
             c->ghz_from ? c->ghz_from : "", c->ghz_from ? ")" : "", fpc, isa, tpb_dtype_name(dt));
    return c->ghz > 0 ? peak : 0.0;
}

int tpb_openblas_core_class(const char *core)
{
    static const struct {
        const char *name;
        int cls;
    } cores[] = {{"SkylakeX", 4},  {"Cooperlake", 4},  {"SapphireRapids", 4}, {"Zen", 3},
                 {"Haswell", 3},   {"Sandybridge", 2}, {"Nehalem", 1},        {"Prescott", 1},
                 {"Core2", 1},     {"Penryn", 1},      {"Dunnington", 1},     {"Atom", 1},
                 {"Barcelona", 1}, {"Bulldozer", 2},   {"Piledriver", 2},     {"Steamroller", 2},
                 {"Excavator", 3}};
    for (size_t i = 0; core && i < sizeof(cores) / sizeof(cores[0]); i++)
        if (strcasecmp(core, cores[i].name) == 0)
            return cores[i].cls;
    return 0;
}

void tpb_openblas_advice(const tpb_cpu_t *c, const char *core, char *out, size_t cap)
{
    int cpu = c->avx512 ? 4 : c->avx2 && c->fma ? 3 : c->avx ? 2 : 1;
    int blas = tpb_openblas_core_class(core);
    out[0] = '\0';
    if (blas == 0 || blas >= cpu)
        return;
    static const char *const best[] = {"", "Nehalem", "Sandybridge", "Haswell", "SkylakeX"};
    static const char *const isa[] = {"", "SSE", "AVX", "AVX2", "AVX-512"};
    snprintf(out, cap,
             "OpenBLAS runs its %s kernels (%s) on a CPU with %s: GEMMs run far below peak; "
             "export OPENBLAS_CORETYPE=%s (and keep --check on)",
             core, isa[blas], isa[cpu], best[cpu]);
}
