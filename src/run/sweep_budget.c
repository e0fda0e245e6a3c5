/*
 * sweep_budget.c - --budget: a set of configs measured side by side is measured
 * again, look after look, while a speed-up against its even config, the persistent
 * straggler, or (--block) the block's TP ranking against the degrees measured before is
 * still inconclusive and the sweep's budget allows another look. Rank 0 decides on the
 * iterations' steps so far (the record's step, on the ranks' own clocks: sweep_measure.c)
 * with the sequential rule (base/sequential.h), and tells every rank. The verdicts the record
 * states are the iterations' own, at the level of the look the set stopped at (record/verdict.c):
 * by the union bound they hold at 95 % whatever made the set stop.
 */
#include <math.h>
#include <stdio.h>

#include "base/sequential.h"
#include "record/verdict.h"
#include "run/agree.h"
#include "run/sweep_state.h"

int tpb_sweep_budget_cap(const tpb_sweep_t *s, const tpb_config_plan_t *const *p, int k, int nl)
{
    const tpb_measure_t *m = &s->plans.m;
    /* a block of one policy too: its TP ranking */
    int on = m->budget_s > 0.0 && (k >= 2 || m->block) && m->interleave &&
             tpb_interleave_rounds(m->iters) >= 3;
    for (int i = 0; on && i < k * nl; i++)
        on = p[i]->chunks == 0; /* a chunked config's marks follow its iterations' */
    return on ? m->iters * TPB_BUDGET_LOOKS : m->iters;
}

/* The unit the others are compared with: the even policy's, else the first. */
static int reference_unit(const tpb_config_run_t *c, int k, int nl)
{
    for (int u = 0; u < k; u++)
        if (c[u * nl].plan->policy == TPB_POLICY_EVEN)
            return u;
    return 0;
}

/* Rank 0: the first unit whose speed-up over unit ref is still open at this look (-1: none),
 * and its look in *out. */
static int open_unit(int ref, int k, const double *steps, int n, int rounds, int look,
                     tpb_seq_look_t *out)
{
    for (int u = 0; u < k; u++) {
        if (u == ref)
            continue;
        *out = tpb_seq_paired(steps + (size_t)ref * (size_t)n, steps + (size_t)u * (size_t)n,
                              (size_t)n, rounds, look, 0.05, TPB_VERDICT_TOL);
        if (!out->stop)
            return u;
    }
    return -1;
}

/* Rank 0: what is open after this look, on stderr (unless --quiet): a speed-up (unit u
 * against ref, its look l) and the persistent straggler (sp, open: sopen). */
static void say_open(const tpb_sweep_t *s, const tpb_config_run_t *c, int nl, int ref, int u,
                     const tpb_seq_look_t *l, int sopen, const tpb_persistent_t *sp, int look,
                     const int *decide, const tpb_block_open_t *bo)
{
    const char *then = decide[0]        ? "measuring the set again"
                       : decide[1] == 2 ? "stays open: the most looks a set takes"
                                        : "stays open: the budget is spent";
    const tpb_config_plan_t *p = c[u < 0 ? 0 : u * nl].plan;
    if (s->plans.m.quiet)
        return;
    if (u >= 0)
        tpb_sweep_say(s,
                      "budget: %s vs %s (tp %d, %s, set %d) open after look %d: %.3fx "
                      "[%.3f, %.3f] at %.1f %%; %s\n",
                      tpb_policy_name(p->policy), tpb_policy_name(c[ref * nl].plan->policy), p->tp,
                      tpb_split_name(p->split), s->acct.nsets, look, 1.0 / l->ci.ratio,
                      l->ci.hi > 0.0 ? 1.0 / l->ci.hi : 0.0, l->ci.lo > 0.0 ? 1.0 / l->ci.lo : 0.0,
                      100.0 * l->conf, then);
    char could[64];
    if (isfinite(sp->detectable))
        snprintf(could, sizeof(could), "the smallest slowdown they could name %.1f %%",
                 100.0 * sp->detectable);
    else
        snprintf(could, sizeof(could), "too few to name one");
    char alarm[80];
    if (sopen)
        tpb_sweep_say(s,
                      "budget: the persistent straggler (tp %d, %s, set %d) open after look %d: "
                      "rank %d the slowest in %d of %d windows, %d needed (%s); %s; %s\n",
                      p->tp, tpb_split_name(p->split), s->acct.nsets, look, sp->rank, sp->slowest,
                      sp->of, sp->need, tpb_alarm_words(alarm, sizeof(alarm), sp->alpha), could,
                      then);
    if (bo->thr >= 0)
        tpb_sweep_say(s,
                      "budget: the block's TP ranking (%s, set %d at tp %d) open after look %d: "
                      "tp %d %.3fx tp %d's [%.3f, %.3f] at %.2f %%; %s\n",
                      bo->thr ? "throughput" : "latency", s->acct.nsets, p->tp, look, bo->tp,
                      bo->speedup, bo->other_tp, bo->lo, bo->hi, 100.0 * bo->conf,
                      bo->futile ? "not measured again for it: the degree measured before keeps it "
                                   "open alone at this ratio (a larger --iters decides it)"
                                 : then);
    if (bo->imprecise)
        tpb_sweep_say(s,
                      "budget: the block at tp %d (set %d) after look %d: its step known to "
                      "+-%.1f %% at %.2f %%, wider than the +-%.1f %% that ranking its TP degrees "
                      "within 5 %% needs; %s\n",
                      p->tp, s->acct.nsets, look, 100.0 * (exp(bo->half) - 1.0),
                      100.0 * tpb_seq_conf(0.05, look), 100.0 * (exp(TPB_BLOCK_HALF) - 1.0), then);
}

tpb_status_t tpb_sweep_budget_more(tpb_sweep_t *s, const tpb_config_run_t *c, int k, int nl,
                                   const double *steps, int n, int rounds, int look, double look_us,
                                   const double *rate, int *more)
{
    tpb_record_budget_t *b = &s->acct.budget;
    /* more; why not: 0 decided, 1 budget, 2 looks; for the straggler alone; for the ranking */
    int decide[4] = {0, 0, 0, 0};
    int sopen = 0;
    tpb_persistent_t sp;
    TPB_CHECK_RET(tpb_sweep_straggler_look(s, c, k * nl, rate, k * nl * rounds, look, &sopen, &sp));
    if (s->rec) {
        tpb_seq_look_t l = {0};
        int ref = reference_unit(c, k, nl), u = open_unit(ref, k, steps, n, rounds, look, &l);
        double left_us = (b->budget_s - b->spent_s) * 1e6;
        tpb_block_open_t bo;
        int ropen = tpb_sweep_block_open(s, c, k, nl, steps, n, rounds, look, &bo);
        int open = u >= 0 || sopen || ropen;
        decide[1] = !open ? 0 : look >= TPB_BUDGET_LOOKS ? 2 : left_us < look_us ? 1 : 0;
        decide[0] = open && decide[1] == 0;
        decide[2] = sopen && u < 0 && !ropen; /* extended (or left open) for one reason alone */
        decide[3] = ropen && u < 0 && !sopen;
        say_open(s, c, nl, ref, u, &l, sopen, &sp, look, decide, &bo);
    }
    TPB_MPI_RET(MPI_Bcast(decide, 4, MPI_INT, 0, s->pos.world), "--budget's decision");
    if (look == 1)
        b->sets++;
    b->extended += look == 1 && decide[0];
    b->for_straggler += look == 1 && decide[0] && decide[2];
    b->for_ranking += look == 1 && decide[0] && decide[3];
    b->open_budget += decide[1] == 1;
    b->open_looks += decide[1] == 2;
    *more = decide[0];
    return TPB_OK;
}
