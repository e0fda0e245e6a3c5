/* fleet.c - a fleet's scores and verdicts (base/fleet.h). Pure. */
#include "base/fleet.h"

#include <math.h>
#include <stdlib.h>

#include "base/stats.h"

const char *tpb_fleet_verdict_name(tpb_fleet_verdict_t v)
{
    return v == TPB_FLEET_EXCLUDE ? "exclude" : v == TPB_FLEET_SUSPECT ? "suspect" : "ok";
}

double tpb_fleet_median(const tpb_fleet_fig_t *f, int n)
{
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    int k = 0;
    for (int i = 0; v && i < n; i++)
        if (isfinite(f[i].value) && f[i].value > 0.0)
            v[k++] = f[i].value;
    double m = k ? tpb_stats_median(v, (size_t)k) : NAN;
    free(v);
    return m;
}

tpb_fleet_score_t tpb_fleet_score(tpb_fleet_fig_t f, double ref)
{
    if (!(f.value > 0.0) || !isfinite(f.value) || !(ref > 0.0) || !isfinite(ref))
        return (tpb_fleet_score_t){NAN, NAN, NAN};
    double s = f.value / ref, h = isfinite(f.half) && f.half >= 0.0 ? f.half : 0.0;
    return (tpb_fleet_score_t){s, s * exp(-h), s * exp(h)};
}

tpb_fleet_verdict_t tpb_fleet_judge(tpb_fleet_score_t s, double threshold)
{
    if (!isfinite(s.score) || s.score >= threshold)
        return TPB_FLEET_OK;
    return s.hi < threshold ? TPB_FLEET_EXCLUDE : TPB_FLEET_SUSPECT;
}

double tpb_fleet_half_from_iqr(double rel_iqr, int n)
{
    if (n < 2 || !isfinite(rel_iqr) || rel_iqr < 0.0)
        return NAN;
    return 1.96 * 1.2533 * (rel_iqr / 1.349) / sqrt((double)n);
}
