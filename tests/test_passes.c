/* test_passes.c - verdicts over --repeat's passes (base/passes.h): the pooled and the
 * by-pass rule on constructed estimates with known answers, the run-to-run spread, the
 * pooled straggler, and the false-verdict rate of the rule on passes that differ by a
 * whole-pass slowdown (deterministic: counter-based normals, so fixed numbers). */
#include <math.h>
#include <stdio.h>

#include "base/passes.h"
#include "base/rng.h"
#include "tpb_test.h"

static const double c95[4] = {0.95, 0.95, 0.95, 0.95};

/* Three passes that agree: the inverse-variance mean and its normal interval. */
START_TEST(pooled)
{
    double r[3] = {0.90, 0.92, 0.91}, h[3] = {0.04, 0.04, 0.08};
    tpb_passes_ratio_t p = tpb_passes_ratio(r, h, c95, 3, 0.05);
    double w[3], sw = 0, swy = 0;
    for (int i = 0; i < 3; i++) {
        double s = h[i] / 1.959964;
        w[i] = 1 / (s * s), sw += w[i], swy += w[i] * log(r[i]);
    }
    ck_assert_int_eq(p.by_pass, 0);
    ck_assert_int_eq(p.n, 3);
    ck_assert_double_eq_tol(p.ratio, exp(swy / sw), 1e-12);
    ck_assert_double_eq_tol(p.half, 1.959964 / sqrt(sw), 1e-6);
    ck_assert(p.q <= 2.0);
    ck_assert_int_eq(p.verdict, TPB_VERDICT_BETTER); /* hi = 0.910 e^0.026 < 1 / 1.05 */
}
END_TEST

/* Three passes whose estimates lie far outside each other's intervals: a pass is the unit,
 * the mean of the logs and a t interval on 2 degrees of freedom: too wide to decide. */
START_TEST(by_pass)
{
    double r[3] = {0.80, 1.00, 0.90}, h[3] = {0.02, 0.02, 0.02};
    tpb_passes_ratio_t p = tpb_passes_ratio(r, h, c95, 3, 0.05);
    double y[3] = {log(0.8), log(1.0), log(0.9)}, m = (y[0] + y[1] + y[2]) / 3, ss = 0;
    for (int i = 0; i < 3; i++)
        ss += (y[i] - m) * (y[i] - m);
    double sd = sqrt(ss / 2);
    ck_assert_int_eq(p.by_pass, 1);
    ck_assert(p.q > 2.0);
    ck_assert_double_eq_tol(p.ratio, exp(m), 1e-12);
    ck_assert_double_eq_tol(p.spread, sd, 1e-12);
    ck_assert_double_eq_tol(p.half, 4.303 * sd / sqrt(3.0), 1e-5); /* the t table */
    ck_assert_int_eq(p.verdict, TPB_VERDICT_INCONCLUSIVE);
}
END_TEST

/* One pass: its own interval at 95 % (a 97.5 % look re-stated); none: NaN, inconclusive;
 * a pass without an interval makes the rule by pass. */
START_TEST(edges)
{
    double r1 = 0.8, h1 = 0.05, c1 = 0.975;
    tpb_passes_ratio_t p = tpb_passes_ratio(&r1, &h1, &c1, 1, 0.05);
    ck_assert_double_eq_tol(p.ratio, 0.8, 1e-12);
    ck_assert_double_eq_tol(p.half, 0.05 * 1.959964 / 2.241403, 1e-5);
    ck_assert_int_eq(p.verdict, TPB_VERDICT_BETTER);
    /* one pass is always pooled: the inverse-variance mean of one log, w y / w, can round
     * an ulp off y, and w times that squared was a Q above 0 = n - 1 for 9.2 % of these
     * (a by-pass rule on one pass: an infinite interval, the repeat.sh flake) */
    int bypass = 0, wrong = 0;
    for (int i = 0; i < 20000; i++) {
        double r = 0.5 + i * 5.3e-5, h = 0.01 + (i % 97) * 5.1e-3, c = 0.95;
        tpb_passes_ratio_t o = tpb_passes_ratio(&r, &h, &c, 1, 0.05);
        bypass += o.by_pass;
        wrong += o.q != 0.0 || fabs(o.half - h) > 1e-12 || fabs(o.ratio - r) > 1e-12 * r;
    }
    ck_assert_int_eq(bypass, 0);
    ck_assert_int_eq(wrong, 0);
    double bad = NAN;
    p = tpb_passes_ratio(&bad, &h1, &c1, 1, 0.05);
    ck_assert(isnan(p.ratio));
    ck_assert_int_eq(p.n, 0);
    ck_assert_int_eq(p.verdict, TPB_VERDICT_INCONCLUSIVE);
    double r[2] = {0.8, 0.82}, h[2] = {0.03, INFINITY};
    p = tpb_passes_ratio(r, h, c95, 2, 0.05);
    ck_assert_int_eq(p.by_pass, 1);
    ck_assert_double_eq_tol(p.half, 12.706205 * p.spread / sqrt(2.0), 1e-4);
    double v[4] = {100, 110, NAN, 0};
    ck_assert_double_eq_tol(tpb_passes_spread(v, 4), fabs(log(1.1)) / sqrt(2.0), 1e-12);
    ck_assert_double_eq(tpb_passes_spread(v, 1), 0.0);
    ck_assert(isnan(tpb_passes_spread(v + 2, 2)));
}
END_TEST

static tpb_persistent_t pass(int rank, int slowest, int of, int persistent, double deficit)
{
    return (tpb_persistent_t){.rank = rank,
                              .slowest = slowest,
                              .of = of,
                              .effective = of,
                              .persistent = persistent,
                              .deficit = deficit};
}

/* tp 2, 12 blocks a pass: 10 of 12 is the pass's own threshold (2 P(Bin(12, 1/2) >= 10)
 * = 0.039 > 1 %: 11 then); pooled over three passes 36 blocks need 27. */
START_TEST(straggler)
{
    ck_assert_int_eq(tpb_detect_need(36, 2, TPB_DETECT_ALPHA), 27);
    tpb_persistent_t three[3] = {pass(1, 9, 12, 0, 0.1), pass(1, 10, 12, 0, 0.12),
                                 pass(1, 9, 12, 0, 0.08)};
    tpb_passes_straggler_t s = tpb_passes_straggler(three, 3, 2);
    ck_assert_int_eq(s.rank, 1);
    ck_assert_int_eq(s.count, 28);
    ck_assert_int_eq(s.blocks, 36);
    ck_assert_int_eq(s.named, 3);
    ck_assert_double_eq_tol(s.deficit, 0.1, 1e-12);
    ck_assert_int_eq(s.verdict, TPB_PASSES_PERSISTENT); /* no pass alone could say so */
    /* one pass slow, the others name another rank or nobody: transient */
    tpb_persistent_t once[3] = {pass(1, 12, 12, 1, 0.3), pass(0, 7, 12, 0, 0.02),
                                pass(-1, 0, 12, 0, NAN)};
    s = tpb_passes_straggler(once, 3, 2);
    ck_assert_int_eq(s.rank, 1);
    ck_assert_int_eq(s.named, 1);
    ck_assert_int_eq(s.flagged, 1);
    ck_assert_int_eq(s.verdict, TPB_PASSES_TRANSIENT);
    /* equal ranks: the slowest alternates */
    tpb_persistent_t eq[3] = {pass(0, 7, 12, 0, 0.02), pass(1, 6, 12, 0, 0.02),
                              pass(0, 6, 12, 0, 0.03)};
    s = tpb_passes_straggler(eq, 3, 2);
    ck_assert_int_eq(s.verdict, TPB_PASSES_NONE);
    /* too few blocks even pooled */
    tpb_persistent_t few[2] = {pass(1, 3, 3, 0, 0.2), pass(1, 3, 3, 0, 0.2)};
    s = tpb_passes_straggler(few, 2, 2);
    ck_assert_int_eq(s.need, 7);
    ck_assert_int_eq(s.verdict, TPB_PASSES_UNDECIDABLE);
    ck_assert_str_eq(tpb_passes_slow_name(s.verdict), "not enough data");
}
END_TEST

/* Passes of equal configs, each with a whole-pass offset of the ratio (a pass that ran the
 * weighted config on a slower vCPU) of SD tau on top of its interval's noise sigma: the
 * rule's false better or worse over 4000 launches of 3 passes. Pooling them all as if they
 * agreed would be wrong often once tau exceeds sigma; the rule stays near its 5 %. */
START_TEST(false_rate)
{
    const double sigma = 0.02, tol = 0.05, taus[3] = {0.0, 0.02, 0.05};
    for (int t = 0; t < 3; t++) {
        int wrong = 0, naive = 0, bypass = 0;
        for (int run = 0; run < 4000; run++) {
            double r[3], h[3];
            for (int i = 0; i < 3; i++) {
                double e = taus[t] * tpb_rng_normal(7, 1, (uint64_t)run, (uint64_t)i) +
                           sigma * tpb_rng_normal(7, 2, (uint64_t)run, (uint64_t)i);
                r[i] = exp(0.04 + e); /* equal within the tolerance: 4 % slower */
                h[i] = 1.959964 * sigma;
            }
            tpb_passes_ratio_t p = tpb_passes_ratio(r, h, c95, 3, tol);
            wrong += p.verdict == TPB_VERDICT_WORSE || p.verdict == TPB_VERDICT_BETTER;
            bypass += p.by_pass;
            double m = (log(r[0]) + log(r[1]) + log(r[2])) / 3; /* everything pooled */
            naive +=
                tpb_interval_decide(exp(m), 1.959964 * sigma / sqrt(3.0), tol) == TPB_VERDICT_WORSE;
        }
        printf("tau %.2f: false %d naive %d by pass %d of 4000\n", taus[t], wrong, naive, bypass);
        ck_assert_int_le(wrong, 200); /* <= 5 %: 0.3 %, 1.1 %, 2.3 % here */
        if (t == 2)
            ck_assert_int_gt(naive, 4 * wrong); /* pooling regardless: 15 % here */
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("passes");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, pooled);
    tcase_add_test(tc, by_pass);
    tcase_add_test(tc, edges);
    tcase_add_test(tc, straggler);
    tcase_add_test(tc, false_rate);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
