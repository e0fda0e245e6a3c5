/* test_block.c - a --block's step from its GEMMs' marks, its tokens per second per rank, and
 * the block answer (the fastest policy per TP degree, the ranking by tokens/s per rank, the
 * throughput and latency use lines against the runner-up). */
#include <math.h>
#include <string.h>

#include "base/block.h"
#include "record/answer.h"
#include "tpb_test.h"

/* Two GEMMs on 4 ranks in groups of 2, 2 iterations: group 0's block runs from its earliest
 * c0 of GEMM 0 to its latest x1 of GEMM 1; the step is the slower group's. */
START_TEST(steps_from_marks)
{
    enum { W = 4, I = 2 };
    tpb_mark_t g0[W * I], g1[W * I];
    for (int r = 0; r < W; r++)
        for (int i = 0; i < I; i++) {
            double t0 = 1000.0 * i + r;                  /* rank r starts r us late */
            double late = r == 3 && i == 1 ? 50.0 : 0.0; /* group 1's GEMM 1 ends late once */
            g0[r * I + i] = (tpb_mark_t){.c0 = t0, .c1 = t0 + 100.0, .x1 = t0 + 120.0};
            g1[r * I + i] =
                (tpb_mark_t){.c0 = t0 + 121.0, .c1 = t0 + 300.0, .x1 = t0 + 330.0 + late};
        }
    const tpb_mark_t *m[2] = {g0, g1};
    double steps[I];
    tpb_block_steps(m, 2, W, 2, I, steps);
    /* group 0: 0 .. 331 = 331; group 1: 2 .. 333 = 331, and 1002 .. 1383 = 381 */
    ck_assert_double_eq_tol(steps[0], 331.0, 1e-9);
    ck_assert_double_eq_tol(steps[1], 381.0, 1e-9);
    const tpb_mark_t *one[1] = {g0}; /* a block of one GEMM: that GEMM's step */
    tpb_block_steps(one, 1, W, 2, I, steps);
    ck_assert_double_eq_tol(steps[0], 121.0, 1e-9);
}
END_TEST

START_TEST(tokens_per_second)
{
    /* 512 tokens at tp 2 in 25.6 ms: each group of 2 turns 512 tokens, 10000 a rank a second */
    ck_assert_double_eq_tol(tpb_block_tokens_per_s(512, 2, 25600.0), 10000.0, 1e-9);
    ck_assert_double_eq_tol(tpb_block_tokens_per_s(512, 1, 51200.0), 10000.0, 1e-9);
    ck_assert(isnan(tpb_block_tokens_per_s(512, 2, 0.0)));
    ck_assert(isnan(tpb_block_tokens_per_s(512, 2, NAN)));
}
END_TEST

#define N 40
static double st[16][N];

static tpb_history_t blk(int i, int tp, tpb_policy_t pol, double step)
{
    for (int j = 0; j < N; j++) /* +-1 % around the median */
        st[i][j] = step * (1.0 + 0.01 * (double)((j * 7) % 13 - 6) / 6.0);
    tpb_history_t h = {.id = i,
                       .tp = tp,
                       .world = 2,
                       .policy = pol,
                       .m = 512,
                       .step_med = step,
                       .steps = st[i],
                       .nsteps = N,
                       .set = tp > 1 ? 0 : -1,
                       .rounds = tp > 1 ? 10 : 0,
                       .straggler_world = -1};
    strcpy(h.shape_name, "llama");
    return h;
}

/* blk with its steps spread +-spread around step (a pattern, not a draw) and its set's looks */
static tpb_history_t noisy(int i, int tp, double step, double spread, int looks)
{
    tpb_history_t h = blk(i, tp, TPB_POLICY_EVEN, step);
    for (int j = 0; j < N; j++)
        st[i][j] = step * (1.0 + spread * (double)((j * 7) % 13 - 6) / 6.0);
    h.looks = looks;
    h.set = i;
    return h;
}

static int has(const tpb_buf_t *b, const char *s)
{
    return strstr(tpb_buf_str(b), s) != NULL;
}

/* tp 1 at 50 ms turns 10240 tokens/s a rank, tp 2 at 30 ms 8533: tp 1 for throughput, tp 2
 * for latency; a weighted block 3 % faster than even is a draw, not recommended. */
START_TEST(answer_ranks_tp_degrees)
{
    tpb_history_t b[3] = {blk(0, 1, TPB_POLICY_EVEN, 50000.0), blk(1, 2, TPB_POLICY_EVEN, 30000.0),
                          blk(2, 2, TPB_POLICY_WEIGHTED, 29100.0)};
    tpb_buf_t txt = TPB_BUF_INIT, js = TPB_BUF_INIT;
    tpb_answer_block(&txt, &js, b, 3);
    ck_assert_msg(has(&txt, "TP degrees by tokens/s per rank: tp 1 10240, tp 2 8533"), "%s",
                  tpb_buf_str(&txt));
    ck_assert(has(&txt, "weighted 1.03x over even"));
    ck_assert(has(&txt, "highest tokens/s per rank (throughput): even at tp 1 (10240 tokens/s "
                        "per rank; 1.20x tp 2's"));
    ck_assert(has(&txt, "shortest step (latency): even at tp 2 (30 ms a step; 1.67x tp 1's"));
    ck_assert(has(&txt, ": sure)"));
    ck_assert(has(&js, "\"kind\":\"block_use\",\"question\":\"throughput\""));
    ck_assert(!has(&txt, "weighted at tp 2"));
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
    /* equal blocks at two degrees: a draw, said so */
    tpb_history_t d[2] = {blk(0, 1, TPB_POLICY_EVEN, 60000.0), blk(1, 2, TPB_POLICY_EVEN, 30300.0)};
    tpb_answer_block(&txt, &js, d, 2);
    ck_assert_msg(has(&txt, "a draw within 5 %"), "%s", tpb_buf_str(&txt));
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
    tpb_answer_block(&txt, &js, d, 0); /* no block, no words */
    ck_assert(tpb_buf_str(&txt)[0] == '\0');
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
}
END_TEST

/* --budget: the use line's interval at the level of the later block's looks (2: 1 - 0.05 / 6),
 * said with the looks; left open, it says --budget measured as long as it could */
START_TEST(answer_at_the_budget_level)
{
    tpb_history_t b[2] = {noisy(0, 1, 60000.0, 0.01, 1), noisy(1, 2, 20000.0, 0.01, 2)};
    tpb_buf_t txt = TPB_BUF_INIT, js = TPB_BUF_INIT;
    tpb_answer_block(&txt, &js, b, 2);
    ck_assert_msg(has(&txt, "at 99.17 % (--budget: 2 looks of tp 2, measured after tp 1): sure)"),
                  "%s", tpb_buf_str(&txt));
    ck_assert_msg(has(&js, "\"confidence\":0.9916"), "%s", tpb_buf_str(&js));
    ck_assert(has(&js, "\"budget_looks\":2,\"measured_after_tp\":1"));
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
    /* 3 % apart at +-8 %: inconclusive after the budget's looks */
    tpb_history_t c[2] = {noisy(0, 1, 60000.0, 0.08, 1), noisy(1, 2, 30900.0, 0.08, 3)};
    tpb_answer_block(&txt, &js, c, 2);
    ck_assert_msg(has(&txt, "not sure: --budget measured as long as it could"), "%s",
                  tpb_buf_str(&txt));
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
    /* without a budget: 95 %, no level said, and measure longer with --iters or --budget */
    c[0].looks = c[1].looks = 0;
    tpb_answer_block(&txt, &js, c, 2);
    ck_assert(has(&txt, "not sure: measure longer (--iters, or --budget)"));
    ck_assert(!has(&txt, "(--budget: ") && !has(&js, "confidence"));
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
}
END_TEST

/* --budget, a block's set after a look: open while a use line involving its degree is
 * inconclusive; decided (a draw, sure) or not involving it: not open */
START_TEST(ranking_open)
{
    tpb_block_open_t o;
    /* tp 1 recorded at +-1 %, tp 2 now 3 % behind on tokens/s per rank at +-8 %:
     * throughput open, and more of tp 2 may decide it */
    tpb_history_t rec[2] = {noisy(0, 1, 60000.0, 0.01, 1), noisy(1, 2, 30000.0, 0.01, 1)};
    tpb_history_t cur = noisy(2, 2, 30900.0, 0.08, 1);
    ck_assert(tpb_answer_block_open(rec, 1, &cur, 1, 1, &o) == 1);
    ck_assert_int_eq(o.thr, 1);
    ck_assert(o.tp == 1 && o.other_tp == 2 && !o.futile);
    ck_assert(o.lo < 1.05 && o.hi > 1.05 && o.speedup > 1.0);
    ck_assert_double_eq_tol(o.conf, 0.975, 1e-12); /* tp 2's look 1: the later set's */
    /* the other way round, tp 1 the noisy one: its own interval keeps 1.03x open whatever
     * tp 2 does, so the set is not measured again for it */
    tpb_history_t f0 = noisy(3, 1, 60000.0, 0.08, 1), f1 = noisy(4, 2, 30900.0, 0.01, 1);
    ck_assert(tpb_answer_block_open(&f0, 1, &f1, 1, 1, &o) == 0);
    ck_assert(o.thr == 1 && o.futile);
    /* quiet: 1.03x within 5 % is a draw; the latency line is sure: nothing open */
    tpb_history_t q0 = noisy(5, 1, 60000.0, 0.01, 1), q1 = noisy(6, 2, 30900.0, 0.01, 1);
    ck_assert(tpb_answer_block_open(&q0, 1, &q1, 1, 1, &o) == 0);
    ck_assert_int_eq(o.thr, -1);
    /* the latency line open: tp 2's step 3 % shorter at +-8 %, throughput sure (tp 1) */
    tpb_history_t l0 = noisy(7, 1, 60000.0, 0.01, 1), l1 = noisy(8, 2, 58200.0, 0.08, 1);
    ck_assert(tpb_answer_block_open(&l0, 1, &l1, 1, 1, &o) == 1);
    ck_assert_int_eq(o.thr, 0);
    ck_assert(o.tp == 2 && o.other_tp == 1 && !o.futile);
    /* the open pair is tp 1 against tp 2, both recorded; tp 4 now far behind on both: more
     * of tp 4 changes nothing */
    tpb_history_t two[2] = {noisy(9, 1, 60000.0, 0.08, 1), noisy(10, 2, 30900.0, 0.08, 1)};
    tpb_history_t t4 = noisy(11, 4, 59000.0, 0.01, 1);
    ck_assert(tpb_answer_block_open(two, 2, &t4, 1, 1, &o) == 0);
    /* three degrees: throughput tp 1 (noisy) against tp 2 now, 3 % apart: futile; latency
     * tp 4 (steady, 30 ms) against tp 2 now (30.9 ms at +-8 %): open, and that is said */
    tpb_history_t three[2] = {noisy(12, 1, 60000.0, 0.08, 1), noisy(13, 4, 30000.0, 0.01, 1)};
    tpb_history_t now = noisy(14, 2, 30900.0, 0.08, 1);
    ck_assert(tpb_answer_block_open(three, 2, &now, 1, 1, &o) == 1);
    ck_assert(o.thr == 0 && !o.futile && o.tp == 4 && o.other_tp == 2);
    /* the first degree measured has no ranking yet; where the block has another degree,
     * its own interval is kept to +-2.4 % (at +-20 % not, at +-1 % it is) */
    ck_assert(tpb_answer_block_open(two, 0, &cur, 1, 1, &o) == 0);
    tpb_history_t wide = noisy(1, 2, 30900.0, 0.20, 1);
    ck_assert(tpb_answer_block_open(two, 0, &wide, 1, 1, &o) == 0);
    ck_assert(tpb_answer_block_open(NULL, 0, &wide, 1, 2, &o) == 1); /* none recorded yet */
    ck_assert(o.imprecise && o.thr == -1 && o.half > TPB_BLOCK_HALF);
    ck_assert(tpb_answer_block_open(two, 0, &f1, 1, 2, &o) == 0);
    ck_assert(!o.imprecise && o.half > 0.0 && o.half <= TPB_BLOCK_HALF);
    ck_assert_double_eq_tol(TPB_BLOCK_HALF, 0.5 * log(1.05), 1e-15);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("block");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, steps_from_marks);
    tcase_add_test(tc, tokens_per_second);
    tcase_add_test(tc, answer_ranks_tp_degrees);
    tcase_add_test(tc, answer_at_the_budget_level);
    tcase_add_test(tc, ranking_open);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
