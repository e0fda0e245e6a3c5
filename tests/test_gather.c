/* test_gather.c - the analysis in parts (base/timeline_part.h) against the analysis of all
 * the marks on 64 virtual ranks: cut into parts of uneven sizes, merged in any order, it
 * gives the same figures bit for bit (statistics, steps, spikes, what-if, violations,
 * blocks), and the picked groups hold the straggler's and the step setters'. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "base/timeline_part.h"
#include "base/topo.h"
#include "run/gather.h"
#include "run/sweep.h"
#include "tpb_test.h"

enum { WORLD = 64, ITERS = 200, NB = 5 };

/* Marks with noise, a straggler (rank 13: late in most iterations), stalls of one group,
 * ties (ranks of group 6 identical) and clock skew enough for a few violations. */
static void synth(tpb_mark_t *m, int tp, uint64_t seed)
{
    for (int r = 0; r < WORLD; r++)
        for (int i = 0; i < ITERS; i++) {
            double base = 3000.0 * i, comp = 1000.0 + 50.0 * fabs(tpb_rng_normal(seed, 0, r, i));
            if (r == 13 && i % 4)
                comp += 300.0;
            if (r / tp == 3 && i % 37 == 5)
                comp += 4000.0; /* spikes */
            if (r / tp == 6)
                comp = 1010.0; /* a group of equal ranks: ties everywhere */
            double skew = r % 11 == 0 ? -5500.0 : 0.0;
            tpb_mark_t *k = &m[(size_t)r * ITERS + i];
            k->c0 = base + 10.0 * fabs(tpb_rng_normal(seed, 1, r, i));
            k->c1 = k->c0 + comp;
            k->x1 = base + 6000.0 + 100.0 * fabs(tpb_rng_normal(seed, 2, r, i)) + skew;
        }
}

#define SAME(a, b) ck_assert_msg(memcmp(&(a), &(b), sizeof(a)) == 0, "%s differs", #a)

static void same_ranks(const tpb_rank_stats_t *a, const tpb_rank_stats_t *b)
{
    for (int r = 0; r < WORLD; r++) {
        SAME(a[r].compute_med, b[r].compute_med);
        SAME(a[r].compute_p95, b[r].compute_p95);
        SAME(a[r].wait_med, b[r].wait_med);
        SAME(a[r].wait_p95, b[r].wait_p95);
        SAME(a[r].comm_med, b[r].comm_med);
        SAME(a[r].comm_p95, b[r].comm_p95);
        SAME(a[r].coll_med, b[r].coll_med);
        SAME(a[r].wait_free_med, b[r].wait_free_med);
        SAME(a[r].last_count, b[r].last_count);
        SAME(a[r].lateness_us, b[r].lateness_us);
        SAME(a[r].score, b[r].score);
    }
}

static void same_cfg(const tpb_config_stats_t *a, const tpb_config_stats_t *b)
{
    SAME(a->step_med, b->step_med);
    SAME(a->step_p95, b->step_p95);
    SAME(a->step_min, b->step_min);
    SAME(a->step_max, b->step_max);
    SAME(a->step_mean, b->step_mean);
    SAME(a->xfer_mean, b->xfer_mean);
    SAME(a->comp_mean, b->comp_mean);
    SAME(a->xfer_med, b->xfer_med);
    SAME(a->xfer_free_med, b->xfer_free_med);
    SAME(a->straggler_rank, b->straggler_rank);
    SAME(a->straggler_frac, b->straggler_frac);
    SAME(a->straggler_late_us, b->straggler_late_us);
    SAME(a->nspikes, b->nspikes);
    for (int s = 0; s < a->nspikes && s < TPB_MAX_SPIKES; s++) {
        SAME(a->spikes[s].iter, b->spikes[s].iter);
        SAME(a->spikes[s].rank, b->spikes[s].rank);
        SAME(a->spikes[s].step_us, b->spikes[s].step_us);
    }
}

/* Both ways at tp, the groups cut into parts of the sizes cut[] (summing to the groups),
 * the parts' sums merged last part first. */
static void both_ways(int tp, const int *cut, int nparts, uint64_t seed)
{
    int groups = WORLD / tp;
    size_t bytes = tpb_part_record_bytes(tp, NB);
    tpb_mark_t *m = malloc((size_t)WORLD * ITERS * sizeof(*m));
    double unc[WORLD], work[WORLD], step[ITERS], full_step[ITERS], scratch[4 * ITERS];
    for (int r = 0; r < WORLD; r++) {
        unc[r] = 20.0 * (r % 3);
        work[r] = 1e9;
    }
    synth(m, tp, seed);
    /* all the marks */
    tpb_rank_stats_t full_r[WORLD], part_r[WORLD];
    tpb_config_stats_t full_c, part_c;
    ck_assert_int_eq(tpb_timeline_analyse(m, WORLD, tp, ITERS, full_r, &full_c), TPB_OK);
    full_c.causality_violations = tpb_timeline_violations(m, WORLD, tp, ITERS, unc);
    tpb_whatif_t full_w, part_w;
    ck_assert_int_eq(
        tpb_whatif_replay(m, WORLD, tp, ITERS, full_c.straggler_rank, full_c.step_med, &full_w),
        TPB_OK);
    tpb_timeline_steps(m, WORLD, tp, ITERS, full_step);
    tpb_slow_t full_s[NB * WORLD], part_s[NB * WORLD];
    double full_d[NB * WORLD], part_d[NB * WORLD];
    tpb_detect_blocks(m, work, WORLD, tp, ITERS, NB, full_s, full_d);
    /* in parts */
    char *rec = malloc((size_t)groups * bytes);
    tpb_iter_sum_t *sums = malloc((size_t)nparts * ITERS * sizeof(*sums));
    for (int p = 0, g = 0; p < nparts; g += cut[p++]) {
        size_t at = (size_t)g * tp * ITERS;
        ck_assert_int_eq(tpb_timeline_part(m + at, cut[p], tp, ITERS, g, unc + g * tp,
                                           work + g * tp, NB, rec + (size_t)g * bytes,
                                           sums + (size_t)p * ITERS),
                         TPB_OK);
    }
    for (int p = nparts - 2; p >= 0; p--) /* merged into the last part's */
        tpb_iter_sum_merge(sums + (size_t)(nparts - 1) * ITERS, sums + (size_t)p * ITERS, ITERS);
    tpb_iter_sum_t *all = sums + (size_t)(nparts - 1) * ITERS;
    tpb_timeline_finish(all, rec, WORLD, tp, ITERS, NB, part_r, part_s, part_d, step, scratch,
                        &part_c);
    int sg = part_c.straggler_rank / tp;
    ck_assert_int_eq(tpb_whatif_from_parts(all, ITERS, tp,
                                           sg >= 0 ? m + (size_t)sg * tp * ITERS : NULL,
                                           part_c.straggler_rank, part_c.step_med, &part_w),
                     TPB_OK);
    same_ranks(full_r, part_r);
    same_cfg(&full_c, &part_c);
    ck_assert_int_eq(full_c.causality_violations, part_c.causality_violations);
    ck_assert_int_gt(part_c.causality_violations, 0); /* the skewed clocks were seen */
    ck_assert(memcmp(step, full_step, sizeof(step)) == 0);
    SAME(full_w.step_us, part_w.step_us);
    ck_assert_msg(memcmp(&full_w.straggler_step_us, &part_w.straggler_step_us, sizeof(double)) == 0,
                  "straggler replay %g vs %g", full_w.straggler_step_us, part_w.straggler_step_us);
    for (int k = 0; k < NB * groups; k++) {
        SAME(full_s[k].rank, part_s[k].rank);
        SAME(full_s[k].deficit, part_s[k].deficit);
    }
    ck_assert(memcmp(full_d, part_d, (size_t)NB * WORLD * sizeof(double)) == 0);
    /* the picked groups: the straggler's and the spikes' setters first */
    int picked[WORLD], n = tpb_timeline_pick_groups(all, ITERS, groups, tp, &part_c, 3, picked);
    ck_assert_int_eq(n, groups < 3 ? groups : 3);
    int has_sg = 0, has_spike = 0;
    for (int j = 0; j < n; j++) {
        has_sg |= picked[j] == sg;
        has_spike |= picked[j] == 3;
        ck_assert(j == 0 || picked[j] > picked[j - 1]);
    }
    ck_assert(sg < 0 || has_sg);
    ck_assert(part_c.nspikes == 0 || has_spike);
    free(m);
    free(rec);
    free(sums);
}

START_TEST(parts_equal_whole)
{
    int c8[] = {1, 3, 2, 2}, c4[] = {5, 1, 1, 9}, c2[] = {32}, c1[] = {7, 25, 32};
    both_ways(8, c8, 4, 1);
    both_ways(4, c4, 4, 2);
    both_ways(2, c2, 1, 3);
    both_ways(1, c1, 3, 4); /* TP 1: no straggler, no straggler replay */
    for (uint64_t seed = 10; seed < 20; seed++)
        both_ways(8, c8, 4, seed);
}
END_TEST

START_TEST(merge_is_order_free)
{
    /* two groups with the same step: the least group sets it, whichever part comes first */
    tpb_iter_sum_t a[1], b[1], x[1], y[1];
    tpb_iter_sum_init(a, 1);
    tpb_iter_sum_init(b, 1);
    a[0].step = b[0].step = 5.0;
    a[0].set_group = 7;
    b[0].set_group = 2;
    a[0].none1 = 9.0;
    a[0].none1_group = 7;
    b[0].none1 = 9.0;
    b[0].none1_group = 2;
    x[0] = a[0];
    tpb_iter_sum_merge(x, b, 1);
    y[0] = b[0];
    tpb_iter_sum_merge(y, a, 1);
    ck_assert(x[0].set_group == 2.0 && y[0].set_group == 2.0);
    ck_assert(x[0].none2 == 9.0 && y[0].none2 == 9.0); /* a tie: without either, still 9 */
    /* the identity changes nothing */
    tpb_iter_sum_t e[1];
    tpb_iter_sum_init(e, 1);
    tpb_iter_sum_merge(x, e, 1);
    ck_assert(x[0].set_group == 2.0 && x[0].step == 5.0 && x[0].none1 == 9.0);
}
END_TEST

START_TEST(pick_bounds)
{
    /* more room than groups: all of them; room for one: the straggler's */
    tpb_iter_sum_t s[4];
    tpb_iter_sum_init(s, 4);
    for (int i = 0; i < 4; i++) {
        s[i].step = 1.0;
        s[i].set_group = i % 2;
    }
    tpb_config_stats_t c;
    memset(&c, 0, sizeof(c));
    c.straggler_rank = 9; /* group 4 at tp 2 */
    int out[8];
    ck_assert_int_eq(tpb_timeline_pick_groups(s, 4, 8, 2, &c, 100, out), 8);
    ck_assert_int_eq(out[7], 7);
    ck_assert_int_eq(tpb_timeline_pick_groups(s, 4, 8, 2, &c, 1, out), 1);
    ck_assert_int_eq(out[0], 4);
    ck_assert_int_eq(tpb_timeline_pick_groups(s, 4, 8, 2, &c, 5, out), 5);
    int seen0 = 0;
    for (int j = 0; j < 5; j++)
        seen0 |= out[j] == 0 || out[j] == 1;
    ck_assert(seen0); /* a step setter is among them */
}
END_TEST

START_TEST(counts_in_groups)
{
    /* 8 ranks holding 2^27 groups each at TP 1: a world of 2^30 ranks, whose marks at 1000
     * iterations are 3 x 2^40 doubles; every count and displacement is at most 2^30 */
    enum { SIZE = 8 };
    int have[2 * SIZE], picks[] = {5, 134217728, 134217729, 1073741823};
    int rc[SIZE], rd[SIZE], mc[SIZE], md[SIZE];
    for (int r = 0; r < SIZE; r++) {
        have[2 * r] = 1 << 27;
        have[2 * r + 1] = r << 27;
    }
    tpb_gather_counts(have, SIZE, picks, 4, rc, rd, mc, md);
    ck_assert_int_eq(rd[SIZE - 1], 7 << 27);
    ck_assert_int_eq(rc[SIZE - 1], 1 << 27);
    ck_assert_int_eq(mc[0], 1);
    ck_assert_int_eq(md[0], 0);
    ck_assert_int_eq(mc[1], 2);
    ck_assert_int_eq(md[1], 1);
    for (int r = 2; r < SIZE - 1; r++)
        ck_assert_int_eq(mc[r], 0);
    ck_assert_int_eq(mc[SIZE - 1], 1); /* the last group of all: first + n would pass INT_MAX
                                        * at a world of 2^31 - 1 */
    ck_assert_int_eq(md[SIZE - 1], 3);
    /* ranks with nothing (tpbal's non-leaders) and ranges out of rank order */
    int h2[] = {0, 1, 2, 4, 0, 0, 3, 0}, p2[] = {0, 1, 4, 5}; /* (0, 1): a non-leader */
    tpb_gather_counts(h2, 4, p2, 4, rc, rd, mc, md);
    ck_assert(mc[0] == 0 && mc[2] == 0 && rc[0] == 0);
    ck_assert(mc[1] == 2 && md[1] == 2 && rd[1] == 4);
    ck_assert(mc[3] == 2 && md[3] == 0 && rd[3] == 0);
}
END_TEST

START_TEST(hosts_at_scale)
{
    /* 131,072 ranks, 8 a node, the nodes' names out of order (rank 0 on the last node):
     * and one rank of each node named as a neighbour: indices in first-seen order, equal
     * exactly where the names are (the index was quadratic: 40 s here) */
    enum { N = 131072 };
    char(*hosts)[TPB_HOST_LEN] = malloc((size_t)N * TPB_HOST_LEN);
    int *idx = malloc((size_t)N * sizeof(int)), seen = 0;
    for (int r = 0; r < N; r++)
        snprintf(hosts[r], TPB_HOST_LEN, "node%05d", (N / 8 - 1 - r / 8) ^ (r % 8 == 7));
    ck_assert_int_eq(tpb_topo_index_hosts(hosts, N, idx), N / 8);
    for (int r = 0; r < N; r++) {
        if (idx[r] == seen) { /* a new host: no earlier rank has its name */
            seen++;
            continue;
        }
        ck_assert_int_lt(idx[r], seen);
    }
    for (int r = 8; r < N; r += 997) /* equal names, equal indices; different, different */
        ck_assert_int_eq(strcmp(hosts[r], hosts[r - 8]) == 0, idx[r] == idx[r - 8]);
    ck_assert_int_eq(idx[0], 0);
    ck_assert_int_eq(idx[1], 0);
    ck_assert(idx[7] != idx[6]);
    free(hosts);
    free(idx);
}
END_TEST

START_TEST(auto_takes_parts_at_scale)
{
    /* auto: in parts once the marks pass 256 MiB on rank 0 (11,185 ranks at 1,000
     * iterations); never where rank 0 needs every mark */
    tpb_measure_t m = {.iters = 1000, .timeline = 1, .gather = TPB_GATHER_AUTO};
    ck_assert(!tpb_gather_in_parts(&m, 4, 0));
    ck_assert(!tpb_gather_in_parts(&m, 11184, 0));
    ck_assert(tpb_gather_in_parts(&m, 11185, 0));
    ck_assert(!tpb_gather_in_parts(&m, 131072, 4)); /* --overlap chunked */
    m.block = 1;
    ck_assert(!tpb_gather_in_parts(&m, 131072, 0));
    m.block = 0;
    m.timeline = 0; /* --timeline off: one span, nothing to gather in parts */
    ck_assert(!tpb_gather_in_parts(&m, 131072, 0));
    m.timeline = 1;
    m.gather = TPB_GATHER_PARTS;
    m.iters = 10;
    ck_assert(tpb_gather_in_parts(&m, 2, 0));
    m.gather = TPB_GATHER_FULL;
    m.iters = 1000;
    ck_assert(!tpb_gather_in_parts(&m, 131072, 0));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gather");
    TCase *t = tcase_create("parts");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, parts_equal_whole);
    tcase_add_test(t, merge_is_order_free);
    tcase_add_test(t, pick_bounds);
    tcase_add_test(t, counts_in_groups);
    tcase_add_test(t, hosts_at_scale);
    tcase_add_test(t, auto_takes_parts_at_scale);
    suite_add_tcase(s, t);
    return s;
}

TPB_TEST_MAIN(suite)
