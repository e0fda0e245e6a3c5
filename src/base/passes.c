/* passes.c - verdicts over the passes of --repeat (base/passes.h). */
#include "base/passes.h"

#include <math.h>

#include "base/stats.h"

/* The mean and sample SD of y[n] (sd 0 for one). */
static void mean_sd(const double *y, int n, double *mean, double *sd)
{
    double s = 0.0, ss = 0.0;
    for (int i = 0; i < n; i++)
        s += y[i];
    *mean = n ? s / n : NAN;
    for (int i = 0; i < n; i++)
        ss += (y[i] - *mean) * (y[i] - *mean);
    *sd = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
}

tpb_passes_ratio_t tpb_passes_ratio(const double *ratio, const double *half, const double *conf,
                                    int n, double tol)
{
    tpb_passes_ratio_t r = {.ratio = NAN,
                            .half = INFINITY,
                            .spread = NAN,
                            .q = NAN,
                            .verdict = TPB_VERDICT_INCONCLUSIVE};
    double y[TPB_PASSES_MAX], w[TPB_PASSES_MAX];
    int nw = 0;
    for (int i = 0; i < n && r.n < TPB_PASSES_MAX; i++) {
        if (!(ratio[i] > 0.0) || !isfinite(ratio[i]))
            continue;
        double z = conf[i] > 0.0 && conf[i] < 1.0 ? tpb_interval_z(conf[i]) : NAN;
        double sigma = isfinite(half[i]) && half[i] >= 0.0 ? fmax(half[i] / z, 1e-12) : NAN;
        y[r.n] = log(ratio[i]);
        w[r.n] = isfinite(sigma) ? 1.0 / (sigma * sigma) : NAN;
        nw += isfinite(sigma);
        r.n++;
    }
    if (!r.n)
        return r;
    double mean, sd;
    mean_sd(y, r.n, &mean, &sd);
    r.spread = sd;
    double pooled = INFINITY, ymw = NAN;
    if (nw == r.n) { /* every pass has an interval: the inverse-variance mean and Q */
        double sw = 0.0, swy = 0.0, q = 0.0;
        for (int i = 0; i < r.n; i++)
            sw += w[i], swy += w[i] * y[i];
        ymw = r.n == 1 ? y[0] : swy / sw; /* one pass: its own mean, Q exactly 0 */
        for (int i = 0; i < r.n; i++)
            q += w[i] * (y[i] - ymw) * (y[i] - ymw);
        r.q = q;
        pooled = tpb_interval_z(0.95) / sqrt(sw);
    }
    if (isfinite(r.q) && r.q <= r.n - 1) { /* they agree within their intervals */
        r.ratio = exp(ymw);
        r.half = pooled;
    } else { /* a pass is the unit */
        r.by_pass = 1;
        r.ratio = exp(mean);
        r.half = r.n > 1 ? tpb_interval_t975(r.n - 1) * sd / sqrt(r.n) : INFINITY;
        if (isfinite(pooled)) /* never narrower than what the iterations say */
            r.half = fmax(r.half, pooled);
    }
    r.verdict = tpb_interval_decide(r.ratio, r.half, tol);
    return r;
}

double tpb_passes_spread(const double *v, int n)
{
    double y[TPB_PASSES_MAX];
    int k = 0;
    for (int i = 0; i < n && k < TPB_PASSES_MAX; i++)
        if (v[i] > 0.0 && isfinite(v[i]))
            y[k++] = log(v[i]);
    if (!k)
        return NAN;
    double mean, sd;
    mean_sd(y, k, &mean, &sd);
    return sd;
}

/* A pass's blocks at their effective number (known ones where it named nobody). */
static double effective_of(const tpb_persistent_t *p)
{
    return p->rank >= 0 && p->effective > 0 ? p->effective : p->of;
}

tpb_passes_straggler_t tpb_passes_straggler(const tpb_persistent_t *p, int n, int tp)
{
    tpb_passes_straggler_t s = {.rank = -1, .deficit = NAN, .verdict = TPB_PASSES_UNDECIDABLE};
    double blocks = 0.0, best = 0.0;
    for (int i = 0; i < n; i++)
        blocks += effective_of(&p[i]);
    for (int i = 0; i < n; i++) { /* the rank with the most effective blocks as the slowest */
        if (p[i].rank < 0)
            continue;
        double c = 0.0;
        for (int j = 0; j < n; j++)
            if (p[j].rank == p[i].rank && p[j].of > 0)
                c += p[j].slowest * effective_of(&p[j]) / p[j].of;
        if (c > best)
            best = c, s.rank = p[i].rank;
    }
    s.blocks = (int)floor(blocks);
    s.count = (int)floor(best);
    s.need = tpb_detect_need(s.blocks, tp, TPB_DETECT_ALPHA);
    double d[TPB_PASSES_MAX];
    int nd = 0;
    for (int i = 0; i < n && s.rank >= 0; i++) {
        if (p[i].rank != s.rank)
            continue;
        s.named++;
        s.flagged += p[i].persistent;
        if (isfinite(p[i].deficit) && nd < TPB_PASSES_MAX)
            d[nd++] = p[i].deficit;
    }
    s.deficit = nd ? tpb_stats_median(d, (size_t)nd) : NAN;
    int pooled = s.rank >= 0 && s.need <= s.blocks && s.count >= s.need &&
                 s.deficit >= TPB_DETECT_MIN_DEFICIT;
    if (pooled && 2 * s.named > n)
        s.verdict = TPB_PASSES_PERSISTENT;
    else if (pooled || s.flagged)
        s.verdict = TPB_PASSES_TRANSIENT;
    else
        s.verdict = s.need <= s.blocks ? TPB_PASSES_NONE : TPB_PASSES_UNDECIDABLE;
    return s;
}

const char *tpb_passes_slow_name(tpb_passes_slow_t v)
{
    static const char *const names[] = {"none", "persistent", "transient", "not enough data"};
    return v >= TPB_PASSES_NONE && v <= TPB_PASSES_UNDECIDABLE ? names[v] : "?";
}
