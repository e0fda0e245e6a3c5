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
static double st[4][N];

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

static Suite *suite(void)
{
    Suite *s = suite_create("block");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, steps_from_marks);
    tcase_add_test(tc, tokens_per_second);
    tcase_add_test(tc, answer_ranks_tp_degrees);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
