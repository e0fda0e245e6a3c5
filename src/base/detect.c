/* detect.c - persistent stragglers from blocks of iterations spread over a run. */
#include "base/detect.h"

#include <math.h>
#include <stdlib.h>

#include "base/interval.h"
#include "base/stats.h"

int tpb_detect_nblocks(int iters, int rounds)
{
    if (rounds >= 3)
        return rounds;
    return iters >= 10 ? 5 : iters / 2 > 0 ? iters / 2 : 1;
}

void tpb_detect_rate_blocks(const double *rate, int world, int tp, int blocks, tpb_slow_t *out,
                            double *dev)
{
    int groups = world / tp;
    for (int b = 0; b < blocks; b++)
        for (int g = 0; g < groups; g++) {
            const double *r = rate + (size_t)b * world + (size_t)g * tp;
            tpb_slow_t *o = &out[b * groups + g];
            *o = (tpb_slow_t){.rank = -1, .deficit = NAN};
            int ok = 1;
            for (int q = 0; q < tp; q++) {
                dev[b * world + g * tp + q] = NAN;
                ok = ok && r[q] > 0.0 && isfinite(r[q]);
            }
            if (!ok)
                continue;
            int slow = 0;
            for (int q = 1; q < tp; q++)
                slow = r[q] < r[slow] ? q : slow;
            for (int q = 0; q < tp && tp > 1; q++) { /* each against the others' median */
                double others[tp];
                int k = 0;
                for (int p = 0; p < tp; p++)
                    if (p != q)
                        others[k++] = r[p];
                double ref = tpb_stats_median(others, (size_t)k);
                dev[b * world + g * tp + q] = log(r[q] / ref);
                if (q == slow)
                    *o = (tpb_slow_t){.rank = g * tp + slow, .deficit = 1.0 - r[slow] / ref};
            }
        }
}

double tpb_detect_block_rate(const double *comp, int n, double work)
{
    double med = n > 0 ? tpb_stats_median(comp, (size_t)n) : NAN;
    return med > 0.0 && work > 0.0 ? work / med : NAN;
}

void tpb_detect_blocks(const tpb_mark_t *marks, const double *work, int world, int tp, int iters,
                       int blocks, tpb_slow_t *out, double *dev)
{
    double *rate = malloc((size_t)(blocks > 0 ? blocks : 1) * (size_t)world * sizeof(double));
    for (int b = 0; rate && b < blocks; b++) {
        int lo = b * iters / blocks, hi = (b + 1) * iters / blocks;
        double comp[hi - lo > 0 ? hi - lo : 1];
        for (int r = 0; r < world; r++) {
            for (int i = lo; i < hi; i++)
                comp[i - lo] = marks[(size_t)r * iters + i].c1 - marks[(size_t)r * iters + i].c0;
            rate[(size_t)b * world + r] = tpb_detect_block_rate(comp, hi - lo, work[r]);
        }
    }
    if (rate) {
        tpb_detect_rate_blocks(rate, world, tp, blocks, out, dev);
    } else { /* no memory: every block unknown */
        for (int i = 0; i < blocks * (world / tp); i++)
            out[i] = (tpb_slow_t){.rank = -1, .deficit = NAN};
        for (size_t i = 0; i < (size_t)blocks * world; i++)
            dev[i] = NAN;
    }
    free(rate);
}

/* log P(Bin(n, p) = k) */
static double log_binom(int n, int k, double p)
{
    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) + k * log(p) +
           (n - k) * log1p(-p);
}

int tpb_detect_need(int n, int tp, double alpha)
{
    if (tp < 2 || n < 1)
        return n + 1;
    double p = 1.0 / tp, tail = 0.0;
    for (int k = n; k >= 0; k--) { /* the tail P(X >= k) grows as k falls */
        double t = tail + exp(log_binom(n, k, p));
        if (tp * t > alpha)
            return k + 1;
        tail = t;
    }
    return 0;
}

/* Phi^-1(q) for q in (0.5, 1): a rational approximation (Abramowitz-Stegun 26.2.23). */
static double z_of(double q)
{
    double t = sqrt(-2.0 * log(1.0 - q));
    return t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                   (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
}

/* The rank slowest in most of the n entries (a world rank, or -1: none), the first of them
 * in s's order on a tie, and how often: counted per world rank, O(n + world) (the pairwise
 * count it replaces took 6.6 s of a 131,072-rank run's summary: bench/gather). */
static void most_often(const tpb_slow_t *s, int n, int world, int *best, int *count)
{
    int *c = calloc((size_t)(world > 0 ? world : 1), sizeof(*c));
    *best = -1;
    *count = 0;
    for (int i = 0; i < n && c; i++)
        if (s[i].rank >= 0 && s[i].rank < world)
            c[s[i].rank]++;
    for (int i = 0; i < n; i++) {
        int r = s[i].rank, k = 0;
        if (r < 0)
            continue;
        if (c && r < world) {
            k = c[r];
        } else { /* no memory for the counts (or a rank outside the world): pairwise */
            for (int j = 0; j < n; j++)
                k += s[j].rank == r;
        }
        if (k > *count)
            *best = r, *count = k;
    }
    free(c);
}

tpb_persistent_t tpb_detect_persistent_of(int best, int count, int known, const double *d, int k,
                                          const double *x, int m, int tp)
{
    return tpb_detect_persistent_of_at(best, count, known, d, k, x, m, tp, TPB_DETECT_ALPHA);
}

tpb_persistent_t tpb_detect_persistent_of_at(int best, int count, int known, const double *d, int k,
                                             const double *x, int m, int tp, double alpha)
{
    tpb_persistent_t p = {.rank = -1, .deficit = NAN, .detectable = NAN, .alpha = alpha};
    p.of = known;
    p.need = tpb_detect_need(known, tp, alpha);
    if (best < 0)
        return p;
    p.rank = best;
    p.slowest = count;
    p.deficit = d ? tpb_stats_median(d, (size_t)k) : NAN; /* NaN: out of memory, not named */
    /* blocks close in time are alike (a core slower for seconds): the test counts them at
     * the AR(1) effective number of that rank's series, n (1 - rho) / (1 + rho) */
    double rho = fmin(fmax(tpb_interval_lag1(x, (size_t)m), 0.0), 0.95);
    int eff = (int)fmax(1.0, floor(known * (1.0 - rho) / (1.0 + rho)));
    p.effective = eff < known ? eff : known;
    int need = tpb_detect_need(p.effective, tp, alpha);
    p.need = need > p.effective ? known + 1 : (int)ceil((double)need * known / p.effective);
    p.persistent = count >= p.need && p.deficit >= TPB_DETECT_MIN_DEFICIT;
    double q = p.need <= known && known ? (double)p.need / known : 1.0;
    if (m < 3 || q >= 1.0) {
        p.detectable = INFINITY; /* too few blocks: nothing is ever persistent */
        return p;
    }
    double mid = tpb_stats_median(x, (size_t)m), ad[m];
    for (int i = 0; i < m; i++)
        ad[i] = fabs(x[i] - mid);
    double sigma = 1.4826 * tpb_stats_median(ad, (size_t)m);
    p.detectable =
        q > 0.5 ? fmax(TPB_DETECT_MIN_DEFICIT, -expm1(-sigma * z_of(q))) : TPB_DETECT_MIN_DEFICIT;
    return p;
}

tpb_persistent_t tpb_detect_persistent(const tpb_slow_t *s, const double *dev, int nb, int world,
                                       int tp)
{
    return tpb_detect_persistent_at(s, dev, nb, world, tp, TPB_DETECT_ALPHA);
}

tpb_persistent_t tpb_detect_persistent_at(const tpb_slow_t *s, const double *dev, int nb, int world,
                                          int tp, double alpha)
{
    int groups = tp > 0 ? world / tp : 0, n = nb * groups, known = 0, best = -1, count = 0;
    for (int i = 0; i < n; i++)
        known += s[i].rank >= 0;
    most_often(s, n, world, &best, &count); /* the rank most often slowest (ties: the first) */
    if (best < 0)
        return tpb_detect_persistent_of_at(-1, 0, known, NULL, 0, NULL, 0, tp, alpha);
    double *d = malloc((size_t)count * sizeof(*d)), x[nb > 0 ? nb : 1];
    int k = 0, m = 0;
    for (int i = 0; i < n && d; i++)
        if (s[i].rank == best)
            d[k++] = s[i].deficit;
    for (int b = 0; b < nb; b++) /* that rank's log rate against the others', every block */
        if (isfinite(dev[b * world + best]))
            x[m++] = dev[b * world + best];
    tpb_persistent_t p = tpb_detect_persistent_of_at(best, count, known, d, k, x, m, tp, alpha);
    free(d);
    return p;
}

int tpb_detect_open(const tpb_persistent_t *p)
{
    return !p->persistent && !(p->detectable <= TPB_DETECT_BUDGET_TARGET);
}

void tpb_detect_center(double *x, int n)
{
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    int k = 0;
    for (int i = 0; v && i < n; i++)
        if (isfinite(x[i]))
            v[k++] = x[i];
    double mid = k ? tpb_stats_median(v, (size_t)k) : 0.0;
    for (int i = 0; i < n; i++)
        x[i] -= mid;
    free(v);
}
