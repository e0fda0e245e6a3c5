/* test_clocktree.c - the binomial tree of clock pairs (base/clocktree.h): parents and
 * rounds by hand, and offsets composed from constructed pairs whose errors are known. */
#include <math.h>
#include <stdlib.h>

#include "base/clocktree.h"
#include "tpb_test.h"

/* A uniform number in [0, 1) from a 64-bit LCG (Knuth's MMIX constants). */
static double uniform(unsigned long long *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*x >> 11) / 9007199254740992.0;
}

START_TEST(parents_and_rounds)
{
    static const int parent[] = {-1, 0, 0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 0};
    for (int c = 0; c < (int)(sizeof(parent) / sizeof(parent[0])); c++)
        ck_assert_int_eq(tpb_clock_tree_parent(c), parent[c]);
    ck_assert_int_eq(tpb_clock_tree_round(1), 0);
    ck_assert_int_eq(tpb_clock_tree_round(3), 1);
    ck_assert_int_eq(tpb_clock_tree_round(4), 2);
    ck_assert_int_eq(tpb_clock_tree_round(131071), 16);
    ck_assert_int_eq(tpb_clock_tree_rounds(1), 0);
    ck_assert_int_eq(tpb_clock_tree_rounds(2), 1);
    ck_assert_int_eq(tpb_clock_tree_rounds(3), 2);
    ck_assert_int_eq(tpb_clock_tree_rounds(64), 6);
    ck_assert_int_eq(tpb_clock_tree_rounds(65), 7);
    ck_assert_int_eq(tpb_clock_tree_rounds(131072), 17);
    /* every rank's path to 0 has at most `rounds` pairs, each in an earlier round than the
     * next, and no rank is in two pairs of one round */
    enum { P = 1000 };
    int depth_max = 0;
    for (int c = 1; c < P; c++) {
        int d = 0, last = 99;
        for (int r = c; r > 0; r = tpb_clock_tree_parent(r), d++) {
            ck_assert_int_lt(tpb_clock_tree_round(r), last);
            last = tpb_clock_tree_round(r);
        }
        depth_max = d > depth_max ? d : depth_max;
    }
    ck_assert_int_eq(depth_max, 9); /* 511: nine bits */
    ck_assert_int_le(depth_max, tpb_clock_tree_rounds(P));
    for (int j = 0; j < tpb_clock_tree_rounds(P); j++) {
        static int seen[P];
        for (int r = 0; r < P; r++)
            seen[r] = 0;
        for (int c = 1; c < P; c++)
            if (tpb_clock_tree_round(c) == j) {
                ck_assert_int_eq(seen[c]++, 0);
                ck_assert_int_eq(seen[tpb_clock_tree_parent(c)]++, 0);
            }
    }
}
END_TEST

/* Constructed clocks: rank r's true offset o[r] to rank 0; each pair measured with an error
 * within half its RTT. The composed offset is within half the composed RTT of the truth
 * (the bound the record states), the RTTs add along the path, and a pair's time moves onto
 * rank 0's clock. */
START_TEST(composed_offsets_within_their_uncertainty)
{
    enum { P = 4099 };
    tpb_clock_pair_t *pairs = calloc(P, sizeof(*pairs));
    tpb_clock_sample_t *out = calloc(P, sizeof(*out));
    double *o = calloc(P, sizeof(*o));
    ck_assert(pairs && out && o);
    unsigned long long rng = 42;
    o[0] = 0.0;
    for (int r = 1; r < P; r++)
        o[r] = (uniform(&rng) - 0.5) * 2e6; /* up to +-1 s */
    int worst_sign = 0;
    for (int c = 1; c < P; c++) {
        int p = tpb_clock_tree_parent(c);
        double rtt = 2.0 + 30.0 * uniform(&rng);
        /* errors up to the bound; on even ranks (whose ancestors are all even) all at the
         * bound, of one sign: the worst case, where they add */
        double e = (c % 2 == 0 ? 0.5 : (uniform(&rng) - 0.5)) * rtt;
        worst_sign += c % 2 == 0;
        pairs[c] = (tpb_clock_pair_t){
            .offset_us = o[c] - o[p] + e, .rtt_us = rtt, .at_us = 5000.0 + c + o[p]};
    }
    tpb_clock_tree_compose(pairs, P, 1234.0, out);
    ck_assert(out[0].offset_us == 0.0 && out[0].rtt_us == 0.0 && out[0].at_us == 1234.0);
    double worst = 0.0;
    for (int c = 1; c < P; c++) {
        double rtt = 0.0;
        for (int r = c; r > 0; r = tpb_clock_tree_parent(r))
            rtt += pairs[r].rtt_us;
        ck_assert_double_eq_tol(out[c].rtt_us, rtt, 1e-9);
        double err = fabs(out[c].offset_us - o[c]);
        ck_assert_msg(err <= 0.5 * out[c].rtt_us + 1e-6, "rank %d: error %.3f > %.3f", c, err,
                      0.5 * out[c].rtt_us);
        worst = fmax(worst, err / (0.5 * out[c].rtt_us));
        /* the pair's time, read on its parent's clock, is 5000 + c on rank 0's, up to the
         * parent's own composed error */
        double perr = fabs(out[tpb_clock_tree_parent(c)].offset_us - o[tpb_clock_tree_parent(c)]);
        ck_assert_double_eq_tol(out[c].at_us, 5000.0 + c, perr + 1e-6);
    }
    ck_assert(worst_sign > 0);
    ck_assert_double_gt(worst, 0.999); /* the bound is reached where errors add: it is tight */
    /* a time read on rank c's clock moves back onto rank 0's within the same bound */
    ck_assert_double_eq_tol(tpb_clock_correct(&out[7], NULL, 100.0 + o[7]), 100.0,
                            0.5 * out[7].rtt_us + 1e-6);
    free(pairs);
    free(out);
    free(o);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("clocktree");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parents_and_rounds);
    tcase_add_test(tc, composed_offsets_within_their_uncertainty);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
