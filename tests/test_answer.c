/* test_answer.c - the closing answer: the fastest config, speed-ups over even with their
 * intervals, bounds and verdicts, stragglers beyond noise, calibration quality, the use
 * lines (latency and throughput). */
#include <math.h>
#include <string.h>

#include "record/answer.h"
#include "record/verdict.h"
#include "tpb_test.h"

#define N 40

/* per config: steps around its median, its ranks' compute and work (2 ranks) */
static double steps[8][N], comp[8][2], work[8][2];

static tpb_history_t cfg(int i, int tp, tpb_split_t split, tpb_policy_t policy, double step,
                         double noise)
{
    for (int j = 0; j < N; j++) /* a fixed pattern of +-noise, median at step */
        steps[i][j] = step * (1.0 + noise * (double)((j * (5 + i)) % 13 - 6) / 6.0);
    comp[i][0] = comp[i][1] = 0.9 * step;
    work[i][0] = work[i][1] = 1e9;
    return (tpb_history_t){.tp = tp,
                           .world = 2,
                           .split = split,
                           .policy = policy,
                           .m = 64,
                           .n = 512,
                           .k = 512,
                           .step_med = step,
                           .steps = steps[i],
                           .nsteps = N,
                           .set = 0,
                           .rounds = 10,
                           .arr = {[TPB_HIST_COMPUTE] = comp[i], [TPB_HIST_WORK] = work[i]},
                           .predicted_speedup = NAN,
                           .straggler_world = -1,
                           .spread_worst = NAN,
                           .spread_world = -1};
}

static int has(const tpb_buf_t *b, const char *s)
{
    return strstr(tpb_buf_str(b), s) != NULL;
}

START_TEST(verdicts_and_bounds)
{
    tpb_history_t ev = cfg(0, 2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 600, 0.01);
    comp[0][0] = 200, comp[0][1] = 560; /* rank 1 at 0.36 of rank 0's rate */
    /* the same rates in the weighted config, balanced: 1.47e9 and 0.53e9 FLOP in 295 us */
    double t = 2e9 / (1e9 / 200 + 1e9 / 560);
    double wc[2] = {t, t}, ww[2] = {t * 1e9 / 200, t * 1e9 / 560};
    ck_assert_double_eq_tol(tpb_balance_bound(600, comp[0], work[0], wc, ww, 2, 2),
                            600.0 / (40.0 + 2.0 / (1.0 / 200 + 1.0 / 560)), 1e-9);
    ck_assert(isnan(tpb_balance_bound(600, comp[0], work[0], NULL, ww, 2, 2)));
    tpb_history_t w = cfg(1, 2, TPB_SPLIT_ROW, TPB_POLICY_WEIGHTED, 400, 0.01);
    comp[1][0] = comp[1][1] = 360, work[1][0] = 1.4e9, work[1][1] = 0.6e9;
    tpb_policy_verdict_t v = tpb_verdict_of(&ev, &w, 0.05);
    ck_assert_int_eq(v.verdict, TPB_VERDICT_BETTER);
    ck_assert(v.paired && v.rounds == 10);
    ck_assert(v.lo < 1.5 && 1.5 < v.hi && v.lo > 1.4);
    /* 2.7x: the even config measured slower than the rates the weighted one ran at (at them
     * it would take 373 us, and balancing buys at most 1.55x) */
    w = cfg(1, 2, TPB_SPLIT_ROW, TPB_POLICY_WEIGHTED, 222, 0.01);
    comp[1][0] = comp[1][1] = 200, work[1][0] = 1.4e9, work[1][1] = 0.6e9;
    v = tpb_verdict_of(&ev, &w, 0.05);
    ck_assert_int_eq(v.verdict, TPB_VERDICT_DISTURBED);
    ck_assert_double_eq_tol(v.bound, (1e9 / 3e6 + 40.0) / (200.0 + 40.0), 1e-9);
    w = cfg(1, 2, TPB_SPLIT_ROW, TPB_POLICY_WEIGHTED, 700, 0.01);
    ck_assert_int_eq(tpb_verdict_of(&ev, &w, 0.05).verdict, TPB_VERDICT_WORSE);
    w = cfg(1, 2, TPB_SPLIT_ROW, TPB_POLICY_WEIGHTED, 606, 0.005);
    ck_assert_int_eq(tpb_verdict_of(&ev, &w, 0.05).verdict, TPB_VERDICT_DRAW);
    w = cfg(1, 2, TPB_SPLIT_ROW, TPB_POLICY_WEIGHTED, 580, 0.2); /* 1.03x, noisy */
    ck_assert_int_eq(tpb_verdict_of(&ev, &w, 0.05).verdict, TPB_VERDICT_INCONCLUSIVE);
    /* measured one after the other: the unpaired interval */
    w = cfg(1, 2, TPB_SPLIT_ROW, TPB_POLICY_WEIGHTED, 400, 0.01);
    comp[1][0] = comp[1][1] = 360, work[1][0] = 1.4e9, work[1][1] = 0.6e9;
    w.set = 1;
    v = tpb_verdict_of(&ev, &w, 0.05);
    ck_assert(!v.paired && v.rounds == 0 && isfinite(v.lo));
    /* no steps (--timeline off): no interval, no verdict but inconclusive */
    w.steps = NULL;
    v = tpb_verdict_of(&ev, &w, 0.05);
    ck_assert(isnan(v.lo) && v.verdict == TPB_VERDICT_INCONCLUSIVE);
    ck_assert(isnan(tpb_balance_bound(600, NULL, work[0], comp[1], work[1], 2, 2)));
}
END_TEST

/* Two picks closer than their intervals: said "not sure", in the text and the JSON; a
 * pick with no steps to compare: "not enough data" (issue 56 item 5) */
START_TEST(picks_not_sure)
{
    tpb_history_t h[2] = {cfg(0, 1, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 500, 0.05),
                          cfg(1, 2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 505, 0.05)};
    tpb_buf_t txt = TPB_BUF_INIT, js = TPB_BUF_INIT;
    tpb_json_arr_begin(&js);
    tpb_answer_write(&txt, &js, h, 2, NULL, 0.05);
    tpb_json_arr_end(&js);
    ck_assert_msg(has(&txt, "#     shortest step: not sure, 1.01x ["), "%s", tpb_buf_str(&txt));
    ck_assert(has(&txt, "] over the next, row even at tp 2 (its interval reaches 1: either will "
                        "do; --iters to tell)\n"));
    ck_assert(has(&js, "\"sure\":\"not sure\",\"runner_up\":\"row even\""));
    tpb_pick_t p = tpb_answer_pick(&h[0], &h[1], 0);
    ck_assert(p.sure == 0 && p.lo < 1.0 && p.hi > 1.0);
    p = tpb_answer_pick(&h[0], &h[1], 1); /* 2 groups at tp 1 against 1 at tp 2: ~2x */
    ck_assert(p.sure == 1 && p.margin > 1.9 && p.margin < 2.1);
    h[1].steps = NULL;
    p = tpb_answer_pick(&h[0], &h[1], 0);
    ck_assert_int_eq(p.sure, -1);
    tpb_buf_free(&txt), tpb_buf_free(&js);
}
END_TEST

START_TEST(answer_lines)
{
    tpb_history_t h[5] = {cfg(0, 1, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 900, 0.01),
                          cfg(1, 2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 600, 0.01),
                          cfg(2, 2, TPB_SPLIT_ROW, TPB_POLICY_WEIGHTED, 400, 0.01),
                          cfg(3, 2, TPB_SPLIT_COL, TPB_POLICY_EVEN, 500, 0.01),
                          cfg(4, 2, TPB_SPLIT_COL, TPB_POLICY_WEIGHTED, 625, 0.01)};
    comp[1][0] = 200, comp[1][1] = 560;
    comp[2][0] = comp[2][1] = 360, work[2][0] = 1.4e9, work[2][1] = 0.6e9;
    h[1].straggler_world = 1, h[1].straggler_frac = 1.0, h[1].straggler_late_us = 200;
    tpb_slow_t blocks[28]; /* rank 1 the slowest of every block of the run */
    double dev[28 * 2];
    for (int b = 0; b < 28; b++) {
        blocks[b] = (tpb_slow_t){.rank = 1, .deficit = 0.3};
        dev[b * 2 + 1] = log(0.7) + 0.01 * (b % 3), dev[b * 2] = -dev[b * 2 + 1];
    }
    h[1].arr[TPB_HIST_SLOW] = blocks, h[1].arr[TPB_HIST_DEV] = dev, h[1].nslow = 28;
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
    ck_assert(has(&txt, "row: weighted 1.50x over even ["));
    ck_assert(has(&txt, "(10 paired rounds), at most 1.60x, predicted 1.45x: better\n"));
    ck_assert(has(&txt, "col: weighted 0.80x over even ["));
    ck_assert(has(&txt, ": worse: the even split was faster"));
    ck_assert(has(&txt, "straggler in row even: rank 1 (node-b), last in 100 % of iterations, "
                        "by 200 us (slower over the whole run)\n"));
    ck_assert(has(&txt,
                  "#   straggler at tp 2: rank 1 (node-b), the slowest of its group in 28 "
                  "of 28 windows over the run (22 needed: chance alone names one at most once "
                  "in 100 runs; the windows "
                  "worth 28 independent ones), 30.0 % slower\n"));
    ck_assert(has(&js, "\"kind\":\"stragglers\",\"tp\":2,\"straggler_rank\":1"));
    ck_assert(has(&txt, "worst spread 31.0 % (rank 0 on node-a; goal 5 %): did not settle"));
    ck_assert(has(&txt, "# use for 64x512x512: row weighted at tp 2 (400 us a step; 1.50x ["));
    ck_assert(has(&txt, "the even split's speed, which waits for rank 1 (node-b)); also the "
                        "highest layer rate\n"));
    /* the use line closes the answer, after the calibration line */
    ck_assert(strstr(tpb_buf_str(&txt), "# use") > strstr(tpb_buf_str(&txt), "calibration"));
    ck_assert(has(&js, "\"kind\":\"use\",\"question\":\"latency\""));
    /* each pick with how sure it is against the next best: col even's 500 us over 400 */
    ck_assert(has(&txt, "#     shortest step: sure, 1.25x ["));
    ck_assert(has(&txt, "] over the next, col even at tp 2\n"));
    ck_assert(has(&txt, "#     highest layer rate: sure, 1.1"));
    ck_assert(has(&txt, "] over the next, row even at tp 1\n"));
    ck_assert(has(&js, "\"sure\":\"sure\",\"runner_up\":\"col even\",\"runner_up_tp\":2"));
    ck_assert(has(&js, "\"question\":\"throughput\""));
    ck_assert(has(&js, "\"verdict\":\"better\""));
    ck_assert(has(&js, "\"lost\":\"yes\""));
    ck_assert(has(&js, "\"false_alarm\":0.01,"));
    /* --budget: the set with the blocks took 3 looks (2 later ones, the set counted once):
     * the straggler test is held to 1 % spent over them, 0.01 / (3 x 4) */
    int budget = 0;
    h[1].looks = h[2].looks = 3;
    ck_assert_int_eq(tpb_answer_extensions(h, 5, 2, &budget), 2);
    ck_assert_int_eq(budget, 1);
    ck_assert_int_eq(tpb_answer_extensions(h, 5, 1, &budget), 0); /* no blocks at tp 1 */
    tpb_persistent_t p = tpb_answer_persistent(h, 5, 2);
    ck_assert(p.persistent && fabs(p.alpha - 0.01 / 12.0) < 1e-15);
    ck_assert_int_eq(p.need, tpb_detect_need(28, 2, 0.01 / 12.0));
    ck_assert_int_gt(p.need, 22);
    /* a second config where rank 1 is only 2 % slower (configs differ in how much: a smaller
     * shard, another shape): its blocks after the first's are a level, not dependence in
     * time; each config centred, the 56 blocks count as 56 (end to end they read as a lag-1
     * correlation near 1: a few blocks' worth, and no straggler) */
    tpb_slow_t blocks3[28];
    double dev3[28 * 2];
    for (int b = 0; b < 28; b++) {
        blocks3[b] = (tpb_slow_t){.rank = 1, .deficit = 0.02};
        dev3[b * 2 + 1] = log(0.98) + 0.002 * (b % 3), dev3[b * 2] = -dev3[b * 2 + 1];
    }
    h[3].arr[TPB_HIST_SLOW] = blocks3, h[3].arr[TPB_HIST_DEV] = dev3, h[3].nslow = 28;
    h[1].looks = h[2].looks = 0;
    p = tpb_answer_persistent(h, 5, 2);
    ck_assert(p.persistent && p.slowest == 56 && p.of == 56);
    ck_assert_int_eq(p.effective, 56);
    double x[4] = {1.0, NAN, 3.0, 2.0};
    tpb_detect_center(x, 4); /* around the median of the finite ones */
    ck_assert(x[0] == -1.0 && isnan(x[1]) && x[2] == 1.0 && x[3] == 0.0);
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
}
END_TEST

/* A weighted split that measured faster but not surely: the use line keeps even and says
 * why; a draw is a draw; TP 1 wins the throughput question with two groups at once. */
START_TEST(keep_even_and_throughput)
{
    tpb_history_t h[4] = {cfg(0, 1, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 700, 0.01),
                          cfg(1, 2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 500, 0.01),
                          cfg(2, 2, TPB_SPLIT_ROW, TPB_POLICY_WEIGHTED, 485, 0.2),
                          cfg(3, 2, TPB_SPLIT_COL, TPB_POLICY_EVEN, 600, 0.01)};
    h[1].straggler_world = 0, h[1].straggler_frac = 0.97, h[1].straggler_late_us = 300;
    tpb_slow_t blocks[20]; /* rank 0 the slowest in this config's blocks only: turns later */
    double dev[20 * 2];
    for (int b = 0; b < 20; b++) {
        int r = b < 7 ? 0 : b % 2;
        blocks[b] = (tpb_slow_t){.rank = r, .deficit = 0.05};
        dev[b * 2 + r] = log(0.95), dev[b * 2 + 1 - r] = -log(0.95);
    }
    h[1].arr[TPB_HIST_SLOW] = blocks, h[1].arr[TPB_HIST_DEV] = dev, h[1].nslow = 20;
    tpb_buf_t txt = TPB_BUF_INIT, js = TPB_BUF_INIT;
    tpb_answer_write(&txt, &js, h, 4, NULL, 0.05);
    ck_assert(has(&txt, "#     transient in row even: rank 0, last in 97 % of iterations, by 300 "
                        "us (not slower over the run: a passing slowdown, not the rank's)\n"));
    ck_assert(has(&txt, "#   no persistent straggler at tp 2 (most often the slowest: rank 0, in "
                        "13 of 20 windows; "));
    ck_assert(has(&txt, "row: weighted 1.03x over even"));
    ck_assert(has(&txt, ": inconclusive"));
    ck_assert(has(&txt, "# use for 64x512x512, shortest step (latency): row even at tp 2 (500 us "
                        "a step; keep even: row weighted measured 1.03x ["));
    ck_assert(has(&txt, "], inconclusive)\n"));
    ck_assert(has(&txt, "# use for 64x512x512, highest layer rate (throughput): row even at tp 1 "
                        "(2 groups at once, 700 us a step: 2857 layers/s over 2 ranks)\n"));
    ck_assert(!has(&txt, "use for 64x512x512: row weighted"));
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
}
END_TEST

/* Too few blocks for any rank to be named persistent: the config's rank last most often is
 * said as not enough data (with how long would tell), not as a passing slowdown. */
START_TEST(straggler_not_enough_data)
{
    tpb_history_t h[2] = {cfg(0, 2, TPB_SPLIT_COL, TPB_POLICY_EVEN, 500, 0.01),
                          cfg(1, 2, TPB_SPLIT_COL, TPB_POLICY_WEIGHTED, 400, 0.01)};
    h[0].straggler_world = 1, h[0].straggler_frac = 1.0, h[0].straggler_late_us = 300;
    tpb_slow_t blocks[3]; /* rank 1 the slowest in all 3 blocks: too few to tell */
    double dev[3 * 2];
    for (int b = 0; b < 3; b++) {
        blocks[b] = (tpb_slow_t){.rank = 1, .deficit = 0.3};
        dev[b * 2 + 1] = log(0.7), dev[b * 2] = -log(0.7);
    }
    h[0].arr[TPB_HIST_SLOW] = blocks, h[0].arr[TPB_HIST_DEV] = dev, h[0].nslow = 3;
    tpb_buf_t txt = TPB_BUF_INIT, js = TPB_BUF_INIT;
    tpb_answer_write(&txt, &js, h, 2, NULL, 0.05);
    ck_assert(has(&txt, "#     last most often in col even: rank 1, last in 100 % of iterations, "
                        "by 300 us: not enough data to tell a persistent straggler from a "
                        "passing slowdown (3 windows worth 3 independent ones, "));
    /* 8 rounds (32 iterations) give 8 blocks, the fewest a TP 2 rank can be slowest in all
     * of at 1 %: 2 x 2^-8 = 0.8 % (7: 1.6 %) */
    ck_assert(has(&txt, "4 needed: measure longer: at least --iters 32)"));
    tpb_buf_reset(&txt);
    h[0].rounds = 0, h[0].nslow = 3; /* not interleaved, alone: 5 blocks at most (2 x 2^-5 > 1 %) */
    tpb_answer_write(&txt, &js, h, 1, NULL, 0.05);
    ck_assert(has(&txt, " needed: more configs at tp 2 would: more iterations add no windows)"));
    tpb_buf_reset(&txt);
    tpb_answer_write(&txt, &js, h, 2, NULL, 0.05);
    ck_assert(!has(&txt, "transient"));
    ck_assert(has(&js, "\"verdict\":\"not enough data\""));
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
}
END_TEST

START_TEST(draws_noise_and_comm_only)
{
    tpb_history_t h[4] = {cfg(0, 2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 500, 0.005),
                          cfg(1, 2, TPB_SPLIT_ROW, TPB_POLICY_WEIGHTED, 510, 0.005),
                          cfg(2, 2, TPB_SPLIT_COL, TPB_POLICY_EVEN, 480, 0.01),
                          cfg(3, 2, 0, 0, 10, 0.01)};
    h[3].comm_only = 1;
    tpb_buf_t txt = TPB_BUF_INIT, js = TPB_BUF_INIT;
    tpb_answer_write(&txt, &js, h, 4, NULL, 0.05);
    ck_assert(has(&txt, "weighted 0.98x over even ["));
    ck_assert(has(&txt, ": a draw (within 5 %): keep even\n"));
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
    tpb_history_t h[4] = {cfg(0, 2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 500, 0.01),
                          cfg(1, 2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 300, 0.01),
                          cfg(2, 2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 2000, 0.01),
                          cfg(3, 2, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 1500, 0.01)};
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
    tcase_add_test(tc, verdicts_and_bounds);
    tcase_add_test(tc, answer_lines);
    tcase_add_test(tc, picks_not_sure);
    tcase_add_test(tc, keep_even_and_throughput);
    tcase_add_test(tc, straggler_not_enough_data);
    tcase_add_test(tc, draws_noise_and_comm_only);
    tcase_add_test(tc, shapes_and_placements_apart);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
