/* test_answer.c - the closing answer: fastest config, weighted speed-ups, lost splits,
 * stragglers beyond noise, calibration quality, the use line. */
#include <math.h>
#include <string.h>

#include "record/answer.h"
#include "tpb_test.h"

static tpb_history_t cfg(int tp, tpb_split_t split, tpb_policy_t policy, double step)
{
    return (tpb_history_t){.tp = tp,
                           .split = split,
                           .policy = policy,
                           .m = 64,
                           .n = 512,
                           .k = 512,
                           .step_med = step,
                           .predicted_speedup = NAN,
                           .straggler_world = -1,
                           .spread_worst = NAN,
                           .spread_world = -1};
}

static int has(const tpb_buf_t *b, const char *s)
{
    return strstr(tpb_buf_str(b), s) != NULL;
}

START_TEST(fastest_speedups_and_lost)
{
    tpb_history_t h[5] = {cfg(1, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 900),
                          cfg(2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 600),
                          cfg(2, TPB_SPLIT_ROW, TPB_POLICY_WEIGHTED, 400),
                          cfg(2, TPB_SPLIT_COL, TPB_POLICY_EVEN, 500),
                          cfg(2, TPB_SPLIT_COL, TPB_POLICY_WEIGHTED, 625)};
    h[1].straggler_world = 1, h[1].straggler_frac = 1.0, h[1].straggler_late_us = 200;
    h[2].predicted_speedup = 1.45;
    h[2].spread_worst = 0.02, h[2].spread_world = 1;
    h[4].spread_worst = 0.31, h[4].spread_world = 0;
    const char *hosts[2] = {"node-a", "node-b"};
    tpb_buf_t txt = TPB_BUF_INIT, js = TPB_BUF_INIT;
    tpb_json_arr_begin(&js);
    tpb_answer_write(&txt, &js, h, 5, hosts, 0.05);
    tpb_json_arr_end(&js);
    ck_assert(has(&txt, "64x512x512 tp 1: fastest row even, 900 us a step"));
    ck_assert(has(&txt, "64x512x512 tp 2: fastest row weighted, 400 us a step"));
    ck_assert(has(&txt, "row: weighted 1.50x over even (predicted 1.45x)\n"));
    ck_assert(has(&txt, "col: weighted 0.80x over even -- LOST"));
    ck_assert(has(&txt, "straggler in row even: rank 1 (node-b), last in 100 % of iterations, "
                        "by 200 us"));
    ck_assert(has(&txt, "worst spread 31.0 % (rank 0 on node-a; goal 5 %): did not settle"));
    ck_assert(has(&txt, "# use for 64x512x512: row weighted at tp 2 (400 us a step; 1.50x the "
                        "even split's speed, which waits for rank 1 (node-b))"));
    /* the use line closes the answer, after the calibration line */
    ck_assert(strstr(tpb_buf_str(&txt), "# use") > strstr(tpb_buf_str(&txt), "calibration"));
    ck_assert(has(&js, "\"kind\":\"use\""));
    ck_assert(has(&js, "\"lost\":\"yes\""));
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
}
END_TEST

START_TEST(draws_noise_and_comm_only)
{
    tpb_history_t h[4] = {cfg(2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 500),
                          cfg(2, TPB_SPLIT_ROW, TPB_POLICY_WEIGHTED, 510),
                          cfg(2, TPB_SPLIT_COL, TPB_POLICY_EVEN, 480), cfg(2, 0, 0, 10)};
    h[3].comm_only = 1;
    tpb_buf_t txt = TPB_BUF_INIT, js = TPB_BUF_INIT;
    tpb_answer_write(&txt, &js, h, 4, NULL, 0.05);
    ck_assert(has(&txt, "weighted 0.98x over even -- a draw (within 5 %)"));
    ck_assert(!has(&txt, "LOST"));
    ck_assert(has(&txt, "no straggler beyond noise"));
    ck_assert(has(&txt, "fastest col even, 480 us a step"));
    ck_assert(!has(&txt, "calibration")); /* no config measured speeds */
    tpb_buf_reset(&txt);
    tpb_answer_write(&txt, &js, &h[3], 1, NULL, 0.05); /* comm-only only: no answer */
    ck_assert_str_eq(tpb_buf_str(&txt), "");
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
}
END_TEST

START_TEST(shapes_and_placements_apart)
{
    tpb_history_t h[4] = {
        cfg(2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 500), cfg(2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 300),
        cfg(2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 2000), cfg(2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 1500)};
    h[1].placement = TPB_PLACE_SPREAD;
    h[2].m = h[3].m = 4096;
    strcpy(h[2].shape_name, "qkv_proj");
    strcpy(h[3].shape_name, "o_proj");
    tpb_buf_t txt = TPB_BUF_INIT, js = TPB_BUF_INIT;
    tpb_answer_write(&txt, &js, h, 4, NULL, 0.05);
    ck_assert(has(&txt, "64x512x512 tp 2 (spread): fastest row even, 300 us"));
    ck_assert(has(&txt, "# use for 64x512x512: row even at tp 2 spread (300 us a step)"));
    ck_assert(has(&txt, "# use for 4096x512x512 qkv_proj: row even at tp 2 (2 ms a step)"));
    ck_assert(has(&txt, "# use for 4096x512x512 o_proj: row even at tp 2 (1.5 ms a step)"));
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("answer");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, fastest_speedups_and_lost);
    tcase_add_test(tc, draws_noise_and_comm_only);
    tcase_add_test(tc, shapes_and_placements_apart);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
