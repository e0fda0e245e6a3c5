/* timeline_part.c - the timeline analysis of a set of groups, merged over sets. */
#include "base/timeline_part.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/stats.h"

void tpb_iter_sum_init(tpb_iter_sum_t *sums, int iters)
{
    for (int i = 0; i < iters; i++)
        sums[i] = (tpb_iter_sum_t){.step = -INFINITY,
                                   .set_group = -1.0,
                                   .set_last = -1.0,
                                   .set_xfer = NAN,
                                   .set_comp = NAN,
                                   .xfer = -INFINITY,
                                   .free_x = INFINITY,
                                   .all_step = -INFINITY,
                                   .none1 = -INFINITY,
                                   .none1_group = -1.0,
                                   .none2 = -INFINITY};
}

/* Whether b's step-setting group wins over a's: the larger step, the least group on ties
 * (tpb_timeline_analyse keeps the first group to reach the largest step). */
static int sets_step(const tpb_iter_sum_t *a, const tpb_iter_sum_t *b)
{
    if (b->set_group < 0.0)
        return 0;
    return a->set_group < 0.0 || b->step > a->step ||
           (b->step == a->step && b->set_group < a->set_group);
}

void tpb_iter_sum_merge(tpb_iter_sum_t *into, const tpb_iter_sum_t *from, int iters)
{
    for (int i = 0; i < iters; i++) {
        tpb_iter_sum_t *a = &into[i];
        const tpb_iter_sum_t *b = &from[i];
        if (sets_step(a, b)) {
            a->step = b->step;
            a->set_group = b->set_group;
            a->set_last = b->set_last;
            a->set_xfer = b->set_xfer;
            a->set_comp = b->set_comp;
        }
        a->xfer = fmax(a->xfer, b->xfer);
        a->free_x = fmin(a->free_x, b->free_x);
        a->all_step = fmax(a->all_step, b->all_step);
        /* the two largest of four, and the group of the largest */
        double lo1 = b->none1 > a->none1 ? a->none1 : b->none1;
        if (b->none1 > a->none1) {
            a->none1 = b->none1;
            a->none1_group = b->none1_group;
        }
        a->none2 = fmax(lo1, fmax(a->none2, b->none2));
    }
}

size_t tpb_part_record_bytes(int tp, int nb)
{
    return (size_t)tp * sizeof(tpb_rank_stats_t) + (size_t)nb * sizeof(tpb_slow_t) +
           ((size_t)nb * (size_t)tp + 1) * sizeof(double);
}

tpb_part_view_t tpb_part_view(void *rec, int tp, int nb)
{
    char *p = rec;
    tpb_part_view_t v;
    v.ranks = (tpb_rank_stats_t *)(void *)p;
    p += (size_t)tp * sizeof(tpb_rank_stats_t);
    v.slow = (tpb_slow_t *)(void *)p;
    p += (size_t)nb * sizeof(tpb_slow_t);
    v.dev = (double *)(void *)p;
    v.violations = v.dev + (size_t)nb * (size_t)tp;
    return v;
}

/* One group's summary of iteration i from its per-iteration figures. */
static void group_sum(const tpb_mark_t *gm, int tp, int iters, int g, int i, double *const grp[3],
                      const double *free_x, double *scratch, tpb_iter_sum_t *s)
{
    double late, none = tpb_whatif_group_step(gm, tp, iters, 0, i, TPB_WHATIF_NONE, scratch);
    *s = (tpb_iter_sum_t){.step = grp[0][i],
                          .set_group = g,
                          .set_last = g * tp + tpb_timeline_last_rank(gm, tp, iters, 0, i, &late),
                          .set_xfer = grp[1][i],
                          .set_comp = grp[2][i],
                          .xfer = grp[1][i],
                          .free_x = free_x[i],
                          .all_step =
                              tpb_whatif_group_step(gm, tp, iters, 0, i, TPB_WHATIF_ALL, scratch),
                          .none1 = none,
                          .none1_group = g,
                          .none2 = -INFINITY};
}

/* Group g's record: its ranks' statistics and blocks (positions made global). */
static void group_record(const tpb_mark_t *gm, int tp, int iters, int g, const double *unc,
                         const double *work, int nb, tpb_part_view_t v)
{
    *v.violations = tpb_timeline_violations(gm, tp, tp, iters, unc);
    if (nb < 1 || !work)
        return;
    tpb_detect_blocks(gm, work, tp, tp, iters, nb, v.slow, v.dev);
    for (int b = 0; b < nb; b++)
        v.slow[b].rank = v.slow[b].rank < 0 ? -1 : v.slow[b].rank + g * tp;
}

tpb_status_t tpb_timeline_part(const tpb_mark_t *marks, int ngroups, int tp, int iters,
                               int first_group, const double *unc, const double *work, int nb,
                               void *records, tpb_iter_sum_t *sums)
{
    size_t n = (size_t)iters, bytes = tpb_part_record_bytes(tp, nb);
    double *w = malloc((6 * n + 2 * (size_t)tp) * sizeof(double));
    tpb_iter_sum_t *one = malloc(n * sizeof(*one));
    if (!w || !one) {
        free(w);
        free(one);
        return tpb_err_set(TPB_ERR_NOMEM, "timeline analysis: out of memory (%d iterations)",
                           iters);
    }
    double *free_x = w + 2 * n, *grp[3] = {w + 3 * n, w + 4 * n, w + 5 * n}, *scr = w + 6 * n;
    tpb_iter_sum_init(sums, iters);
    for (int j = 0; j < ngroups; j++) {
        const tpb_mark_t *gm = marks + (size_t)j * tp * n;
        int g = first_group + j;
        tpb_part_view_t v = tpb_part_view((char *)records + (size_t)j * bytes, tp, nb);
        memset(v.ranks, 0, (size_t)tp * sizeof(*v.ranks));
        tpb_timeline_group(gm, tp, iters, 0, w, free_x, grp, v.ranks);
        group_record(gm, tp, iters, g, unc ? unc + (size_t)j * tp : NULL,
                     work ? work + (size_t)j * tp : NULL, nb, v);
        for (int i = 0; i < iters; i++)
            group_sum(gm, tp, iters, g, i, grp, free_x, scr, &one[i]);
        tpb_iter_sum_merge(sums, one, iters);
    }
    free(w);
    free(one);
    return TPB_OK;
}

/* The config's figures over the iterations from the merged sums (as tpb_timeline_analyse);
 * w: 4 iters doubles of scratch. */
static void finish_steps(const tpb_iter_sum_t *sums, int iters, double *step, double *w,
                         tpb_config_stats_t *cfg)
{
    double *set_xfer = w, *set_comp = w + iters, *xfer = w + 2 * iters, *free_x = w + 3 * iters;
    for (int i = 0; i < iters; i++) {
        step[i] = sums[i].step;
        set_xfer[i] = sums[i].set_xfer;
        set_comp[i] = sums[i].set_comp;
        xfer[i] = sums[i].xfer;
        free_x[i] = sums[i].free_x;
    }
    tpb_timeline_figures(step, set_xfer, set_comp, xfer, free_x, iters, cfg);
}

void tpb_timeline_finish(const tpb_iter_sum_t *sums, const void *records, int world, int tp,
                         int iters, int nb, tpb_rank_stats_t *ranks, tpb_slow_t *slow, double *dev,
                         double *step, double *scratch, tpb_config_stats_t *cfg)
{
    int groups = world / tp;
    size_t bytes = tpb_part_record_bytes(tp, nb);
    double violations = 0.0;
    memset(cfg, 0, sizeof(*cfg));
    for (int g = 0; g < groups; g++) {
        tpb_part_view_t v = tpb_part_view((char *)records + (size_t)g * bytes, tp, nb);
        memcpy(&ranks[(size_t)g * tp], v.ranks, (size_t)tp * sizeof(*ranks));
        violations += *v.violations;
        for (int b = 0; b < nb && slow && dev; b++) {
            slow[(size_t)b * groups + g] = v.slow[b];
            memcpy(&dev[(size_t)b * world + (size_t)g * tp], &v.dev[(size_t)b * tp],
                   (size_t)tp * sizeof(double));
        }
    }
    cfg->causality_violations = (int)violations;
    finish_steps(sums, iters, step, scratch, cfg);
    tpb_timeline_straggler(ranks, world, tp, iters, cfg);
    for (int i = 0; i < iters; i++) {
        if (!(step[i] > 1.5 * cfg->step_med))
            continue;
        if (cfg->nspikes < TPB_MAX_SPIKES)
            cfg->spikes[cfg->nspikes] =
                (tpb_spike_t){.iter = i, .rank = (int)sums[i].set_last, .step_us = step[i]};
        cfg->nspikes++;
    }
}

tpb_status_t tpb_whatif_from_parts(const tpb_iter_sum_t *sums, int iters, int tp,
                                   const tpb_mark_t *gmarks, int straggler, double step_med,
                                   tpb_whatif_t *out)
{
    double *steps = malloc(((size_t)iters + 2 * (size_t)tp) * sizeof(double));
    if (!steps)
        return tpb_err_set(TPB_ERR_NOMEM, "what-if replay: out of memory (%d iterations)", iters);
    double *scratch = steps + iters;
    tpb_whatif_t w;
    for (int i = 0; i < iters; i++)
        steps[i] = sums[i].all_step;
    w.step_us = tpb_stats_median(steps, (size_t)iters);
    w.slowdown = w.step_us > 0.0 ? step_med / w.step_us : NAN;
    w.straggler_step_us = w.straggler_slowdown = NAN;
    if (gmarks && straggler >= 0 && tp > 1) {
        int g = straggler / tp;
        for (int i = 0; i < iters; i++) {
            double rest = sums[i].none1_group == g ? sums[i].none2 : sums[i].none1;
            double mine =
                tpb_whatif_group_step(gmarks, tp, iters, 0, i, straggler - g * tp, scratch);
            steps[i] = fmax(rest, mine);
        }
        w.straggler_step_us = tpb_stats_median(steps, (size_t)iters);
        w.straggler_slowdown = w.straggler_step_us > 0.0 ? step_med / w.straggler_step_us : NAN;
    }
    free(steps);
    *out = w;
    return TPB_OK;
}

/* Append group g to out[*n] unless it is there or out is full. */
static void pick(int *out, int *n, int max, int g)
{
    if (g < 0 || *n >= max)
        return;
    for (int j = 0; j < *n; j++)
        if (out[j] == g)
            return;
    out[(*n)++] = g;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* By how many iterations (descending), then by group (ascending). */
static int cmp_count(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[1] != y[1] ? (x[1] < y[1]) - (x[1] > y[1]) : (x[0] > y[0]) - (x[0] < y[0]);
}

int tpb_timeline_pick_groups(const tpb_iter_sum_t *sums, int iters, int groups, int tp,
                             const tpb_config_stats_t *cfg, int max, int *out)
{
    int n = 0;
    if (max >= groups) { /* all of them */
        for (int g = 0; g < groups; g++)
            out[g] = g;
        return groups;
    }
    max = max < 1 ? 1 : max;
    pick(out, &n, max, cfg->straggler_rank >= 0 ? cfg->straggler_rank / tp : -1);
    for (int s = 0; s < cfg->nspikes && s < TPB_MAX_SPIKES; s++)
        pick(out, &n, max, (int)sums[cfg->spikes[s].iter].set_group);
    int *set = malloc((size_t)iters * sizeof(int)), *cnt = malloc(2 * (size_t)iters * sizeof(int));
    int k = 0;
    for (int i = 0; set && cnt && i < iters; i++)
        set[i] = (int)sums[i].set_group;
    if (set && cnt) { /* the setters by how often they set the step */
        qsort(set, (size_t)iters, sizeof(int), cmp_int);
        for (int i = 0; i < iters; i++) {
            if (k && cnt[2 * (k - 1)] == set[i]) {
                cnt[2 * (k - 1) + 1]++;
                continue;
            }
            cnt[2 * k] = set[i];
            cnt[2 * k++ + 1] = 1;
        }
        qsort(cnt, (size_t)k, 2 * sizeof(int), cmp_count);
    }
    int setters = n + (k < (max - n) / 2 ? k : (max - n) / 2); /* half the rest at most */
    for (int j = 0; j < k && n < setters; j++)
        pick(out, &n, max, cnt[2 * j]);
    free(set);
    free(cnt);
    for (int j = 0, room = max - n; j < room && n < max; j++) /* a sample, evenly spread */
        pick(out, &n, max, (int)((long)j * groups / room));
    for (int g = 0; n < max && g < groups; g++) /* (samples that fell on picked groups) */
        pick(out, &n, max, g);
    qsort(out, (size_t)n, sizeof(int), cmp_int);
    return n;
}
