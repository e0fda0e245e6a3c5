/* test_repeat.c - --repeat's use lines over the passes (record/repeat_use.c): the pick by
 * the passes' geometric mean step, a TP 1 pick's runner-up at another TP degree, a weighted
 * config recommended only where its verdict over even over the passes is better, how sure
 * each pick is (the passes' combined interval, recomputed here by hand), a block's answer
 * last and a block run's GEMMs as its parts. */
#include <math.h>
#include <string.h>

#include "record/repeat.h"
#include "tpb_test.h"

static int has(const tpb_buf_t *b, const char *s)
{
    return strstr(tpb_buf_str(b), s) != NULL;
}

/* A config of 512x768x512 at tp, split and policy with its steps over two passes, each
 * median known to within half (log). */
static tpb_repeat_cfg_t cfg(int tp, tpb_split_t split, tpb_policy_t policy, double s1, double s2,
                            double half)
{
    tpb_repeat_cfg_t c;
    memset(&c, 0, sizeof(c));
    c.key.m = 512, c.key.n = 768, c.key.k = 512;
    c.key.tp = tp, c.key.split = split, c.key.policy = policy;
    for (int p = 0; p < TPB_PASSES_MAX; p++)
        c.step[p] = c.v[p].speedup = NAN, c.half[p] = INFINITY;
    c.step[0] = s1, c.step[1] = s2;
    c.half[0] = c.half[1] = half;
    return c;
}

START_TEST(picks_and_sureness)
{
    tpb_repeat_cfg_t c[4] = {
        /* pass 2 a uniform 2.5 % slower: the passes agree, pooled */
        cfg(1, TPB_SPLIT_COL, TPB_POLICY_EVEN, 4000, 4100, 0.01),
        cfg(1, TPB_SPLIT_ROW, TPB_POLICY_EVEN, 3990, 4089.75, 0.01), /* the same work as col */
        cfg(2, TPB_SPLIT_COL, TPB_POLICY_EVEN, 2200, 2255, 0.01),
        cfg(2, TPB_SPLIT_COL, TPB_POLICY_WEIGHTED, 2000, 2050, 0.01), /* faster, but a draw */
    };
    for (int p = 0; p < 2; p++) /* its verdict over even: a draw in both passes */
        c[3].v[p] = (tpb_policy_verdict_t){
            .speedup = 1.02, .lo = 1.0, .hi = 1.04, .conf = 0.95, .verdict = TPB_VERDICT_DRAW};
    c[3].has_v = 1;
    tpb_repeat_t r = {.passes = 2, .done = 2, .world = 2, .c = c, .nc = 4, .cap = 4};
    tpb_buf_t txt = TPB_BUF_INIT, js = TPB_BUF_INIT;
    tpb_json_obj_begin(&js);
    tpb_repeat_answer(&r, &txt, &js); /* the whole answer: its use lines among them */
    tpb_json_obj_end(&js);
    /* latency: even at tp 2 (weighted is not recommendable: a draw), sqrt(2200 x 2255) */
    ck_assert_msg(has(&txt, "# use for 512x768x512 over 2 passes, shortest step (latency): col "
                            "even at tp 2 (2.23 ms a step"),
                  "%s", tpb_buf_str(&txt));
    /* its runner-up is tp 1's fastest, row: 3990 / 2200 in both passes, each +-sqrt(2) x 0.01
     * (two medians' half-widths in quadrature); pooled, two equal passes: half 0.01 */
    double m = 3990.0 / 2200;
    char want[160];
    snprintf(want, sizeof(want),
             "shortest step: sure, %.2fx [%.2f, %.2f] over the next, row even at tp 1", m,
             m * exp(-0.01), m * exp(0.01));
    ck_assert_msg(has(&txt, want), "%s\nnot in\n%s", want, tpb_buf_str(&txt));
    /* throughput: tp 1 (2 groups at once) row, 1/(3990 x 4090)^0.5 per group, against tp 2:
     * the runner-up is at tp 2, never tp 1's col (the same work) */
    ck_assert(has(&txt, "highest layer rate (throughput): row even at tp 1"));
    ck_assert(has(&txt, "over the next, col even at tp 2"));
    ck_assert(!has(&txt, "over the next, col even at tp 1"));
    ck_assert(has(&js, "\"kind\":\"use\",\"question\":\"latency\""));
    ck_assert(has(&js, "\"sure\":\"sure\""));
    /* the same decisions as data: latency's pick col even at tp 2, sure over row at tp 1 */
    tpb_repeat_answer_t a;
    ck_assert_int_eq(tpb_repeat_answer_build(&a, &r), 0);
    ck_assert_int_eq(a.nu, 2);
    ck_assert(a.u[0].thr == 0 && a.u[0].pick == &c[2] && a.u[0].next == &c[1]);
    ck_assert_int_eq(a.u[0].sure, TPB_SURE_YES);
    ck_assert_double_eq_tol(a.u[0].margin, m, 1e-9);
    ck_assert(a.u[1].thr == 1 && a.u[1].pick == &c[1] && a.u[1].next->key.tp == 2);
    ck_assert_int_eq(a.nv, 1); /* weighted's verdict over even: a draw over the passes */
    ck_assert_int_eq(a.v[0].verdict, TPB_VERDICT_DRAW);
    tpb_repeat_answer_free(&a);
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
}
END_TEST

START_TEST(not_sure_and_block_last)
{
    tpb_repeat_cfg_t c[4] = {
        cfg(1, TPB_SPLIT_COL, TPB_POLICY_EVEN, 4000, 4000, 0.05),
        cfg(2, TPB_SPLIT_COL, TPB_POLICY_EVEN, 2050, 1950, 0.05), /* 1.95x and 2.05x a pass */
        cfg(1, TPB_SPLIT_COL, TPB_POLICY_EVEN, 40000, 40000, 0.05),
        cfg(2, TPB_SPLIT_COL, TPB_POLICY_EVEN, 20400, 19600, 0.05),
    };
    c[2].block = c[3].block = 1;
    strcpy(c[2].key.shape_name, "blk");
    strcpy(c[3].key.shape_name, "blk");
    tpb_repeat_t r = {.passes = 2, .done = 2, .world = 2, .c = c, .nc = 4, .cap = 4};
    tpb_buf_t txt = TPB_BUF_INIT, js = TPB_BUF_INIT;
    tpb_json_obj_begin(&js);
    tpb_repeat_answer(&r, &txt, &js); /* the whole answer: its use lines among them */
    tpb_json_obj_end(&js);
    /* the GEMM's throughput: tp 1 against tp 2, 4000 x 1 against ~2000 x 2: within noise */
    ck_assert_msg(has(&txt, "# part 512x768x512 alone over 2 passes, highest layer rate"), "%s",
                  tpb_buf_str(&txt));
    ck_assert(has(&txt, "highest rate: not sure"));
    /* the block's lines end the answer */
    const char *s = tpb_buf_str(&txt), *last = strstr(s, "# use for block blk over 2 passes");
    ck_assert_ptr_nonnull(last);
    ck_assert_ptr_null(strstr(last, "# part "));
    ck_assert(has(&js, "\"kind\":\"block_use\""));
    tpb_buf_free(&txt);
    tpb_buf_free(&js);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("repeat");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, picks_and_sureness);
    tcase_add_test(tc, not_sure_and_block_last);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
