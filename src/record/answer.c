/* answer.c - the closing answer of a run (what to use and why), decided from the finished
 * configs into the answer model (record/answer_model.h); answer_text.c and answer_json.c
 * render it. */
#include <math.h>
#include <stdlib.h>

#include "record/answer_model.h"
#include "record/verdict.h"

/* A config the answer may recommend: even, TP 1, a policy without an even config to
 * compare with, or one whose verdict over even is better. */
static int recommendable(const tpb_history_t *hist, int n, const tpb_history_t *h)
{
    const tpb_history_t *ev = tpb_verdict_even_of(hist, n, h);
    return h->policy == TPB_POLICY_EVEN || h->tp == 1 || !ev ||
           tpb_verdict_of(ev, h, TPB_VERDICT_TOL).verdict == TPB_VERDICT_BETTER;
}

/* Whether the run's blocks could have named a persistent straggler at all: enough of them
 * for some rank to be the slowest in the number the test needs. */
int tpb_answer_decidable(const tpb_persistent_t *p)
{
    return isfinite(p->detectable) && p->need <= p->of;
}

/* Layers per second over the whole world: world / tp groups each doing one per step. */
double tpb_answer_layer_rate(const tpb_history_t *h)
{
    return h->world > 0 ? (double)(h->world / h->tp) / (h->step_med * 1e-6) : NAN;
}

/* Per shape, two questions: the shortest step over every TP degree and placement (latency:
 * what one layer takes), and the highest layer rate over the world (throughput: the other
 * world / tp ranks' worth of groups left to data or pipeline parallelism), each among the
 * configs the answer may recommend. */
/* The best of the shape's recommendable configs but `not` by the step (rate 0) or the layer
 * rate (rate 1); NULL where there is none. At TP 1 the split and policy change nothing that
 * runs (one rank, the whole GEMM): a TP 1 pick's runner-up is another TP degree. */
static const tpb_history_t *next_best(const tpb_history_t *hist, int n, const tpb_history_t * not,
                                      int rate)
{
    const tpb_history_t *b = NULL;
    for (int i = 0; i < n; i++) {
        const tpb_history_t *h = &hist[i];
        if (h == not || h->comm_only || !tpb_history_same_shape(h, not ) ||
            !recommendable(hist, n, h) || (h->tp == 1 && not ->tp == 1))
            continue;
        if (!b || (rate ? tpb_answer_layer_rate(h) > tpb_answer_layer_rate(b)
                        : h->step_med < b->step_med))
            b = h;
    }
    return b;
}

/* The --iters that would give the run's configs at tp enough blocks to name a persistent
 * straggler if independent (an interleaved config's blocks are its rounds, 4 iterations a
 * round up to 10 (tpb_interleave_rounds); another's at most 5: tpb_detect_nblocks); 0 where
 * no --iters would do (more configs would). */
static int advice_iters(const tpb_history_t *hist, int n, int tp)
{
    for (int r = 3; r <= 10; r++) {
        int total = 0, grows = 0;
        for (int i = 0; i < n; i++) {
            const tpb_history_t *h = &hist[i];
            if (h->tp != tp || h->comm_only || !h->nslow)
                continue;
            int now = h->nslow / (h->world / tp);
            int then = tpb_detect_nblocks(4 * r, h->rounds > 0 ? r : 0);
            total += then > now ? then : now;
            grows |= then > now;
        }
        if (grows && total && tpb_detect_need(total, tp, TPB_DETECT_ALPHA) <= total)
            return 4 * r;
    }
    return 0;
}

/* The items of the group of hist[first]: its fastest config, the one it may recommend,
 * the policies' verdicts over even and the stragglers its configs named. */
static void group_build(tpb_answer_t *a, const tpb_history_t *hist, int n, int first)
{
    const tpb_history_t *g = &hist[first];
    tpb_answer_group_t *gr = &a->groups[a->ngroups++];
    *gr = (tpb_answer_group_t){.first = g, .best = g, .pol0 = a->npol, .str0 = a->nstr};
    gr->run = g->tp > 1 ? tpb_answer_persistent(hist, n, g->tp) : (tpb_persistent_t){.rank = -1};
    gr->advice_iters = advice_iters(hist, n, g->tp);
    for (int i = first; i < n; i++) {
        const tpb_history_t *h = &hist[i];
        if (h->comm_only || !tpb_history_same_group(h, g))
            continue;
        if (h->step_med < gr->best->step_med)
            gr->best = h;
        if (recommendable(hist, n, h) && (!gr->pick || h->step_med < gr->pick->step_med))
            gr->pick = h;
        const tpb_history_t *ev = tpb_verdict_even_of(hist, n, h);
        if (ev && h->policy != TPB_POLICY_EVEN)
            a->pol[a->npol++] = (tpb_answer_policy_t){h, tpb_verdict_of(ev, h, TPB_VERDICT_TOL)};
        if (h->straggler_world >= 0) {
            int persists = gr->run.persistent && gr->run.rank == h->straggler_world;
            a->str[a->nstr++] =
                (tpb_answer_straggler_t){h, persists                         ? TPB_LATE_PERSISTENT
                                            : tpb_answer_decidable(&gr->run) ? TPB_LATE_TRANSIENT
                                                                             : TPB_LATE_UNDECIDED};
        }
    }
    gr->npol = a->npol - gr->pol0;
    gr->nstr = a->nstr - gr->str0;
    if (!gr->pick)
        gr->pick = gr->best;
}

/* The configs faster than best in its group that the answer does not recommend (their
 * verdict is not better): the first, kept out with its verdict. */
static void kept_even(tpb_answer_shape_t *s, const tpb_history_t *hist, int n)
{
    const tpb_history_t *best = s->best;
    for (int i = 0; i < n; i++) {
        const tpb_history_t *h = &hist[i], *ev = tpb_verdict_even_of(hist, n, h);
        if (h->comm_only || !tpb_history_same_group(h, best) || !ev ||
            h->policy == TPB_POLICY_EVEN || !(h->step_med < best->step_med) ||
            recommendable(hist, n, h))
            continue;
        s->kept = h;
        s->kept_v = tpb_verdict_of(ev, h, TPB_VERDICT_TOL);
        return;
    }
}

/* A shape's use lines: best (the shortest step its groups may recommend) and the highest
 * layer rate, each against its runner-up; best's speed against its even config. */
static void use_build(tpb_answer_shape_t *s, const tpb_history_t *hist, int n)
{
    const tpb_history_t *best = s->best, *thr = best;
    for (int i = 0; i < n; i++)
        if (!hist[i].comm_only && tpb_history_same_shape(&hist[i], best) &&
            recommendable(hist, n, &hist[i]) &&
            tpb_answer_layer_rate(&hist[i]) > tpb_answer_layer_rate(thr))
            thr = &hist[i];
    s->thr = thr;
    s->lat = tpb_answer_pick(best, next_best(hist, n, best, 0), 0);
    s->tput = tpb_answer_pick(thr, next_best(hist, n, thr, 1), 1);
    const tpb_history_t *ev = tpb_verdict_even_of(hist, n, best);
    if (ev && ev != best) {
        s->even = ev;
        s->even_v = tpb_verdict_of(ev, best, TPB_VERDICT_TOL);
    }
    kept_even(s, hist, n);
}

/* Per TP degree > 1 with blocks, in the order measured: the run's persistent straggler. */
static void tps_build(tpb_answer_t *a, const tpb_history_t *hist, int n)
{
    for (int i = 0; i < n; i++) {
        int seen = hist[i].tp < 2 || hist[i].comm_only || !hist[i].nslow;
        for (int j = 0; j < i && !seen; j++)
            seen = hist[j].tp == hist[i].tp && !hist[j].comm_only && hist[j].nslow;
        if (!seen)
            a->tps[a->ntps++] =
                (tpb_answer_tp_t){&hist[i], tpb_answer_persistent(hist, n, hist[i].tp),
                                  advice_iters(hist, n, hist[i].tp)};
    }
}

/* Once for the run: the config with the worst calibration spread of any that measured
 * speeds. */
static const tpb_history_t *worst_calibration(const tpb_history_t *hist, int n)
{
    const tpb_history_t *w = NULL;
    for (int i = 0; i < n; i++)
        if (isfinite(hist[i].spread_worst) && (!w || hist[i].spread_worst > w->spread_worst))
            w = &hist[i];
    return w;
}

/* One shape at a time, in the order measured: its groups, then its use lines. */
static void shapes_build(tpb_answer_t *a, const tpb_history_t *hist, int n)
{
    for (int i = 0; i < n; i++) {
        int seen = hist[i].comm_only;
        for (int j = 0; j < i && !seen; j++)
            seen = !hist[j].comm_only && tpb_history_same_shape(&hist[j], &hist[i]);
        if (seen)
            continue;
        tpb_answer_shape_t *s = &a->shapes[a->nshapes++];
        *s = (tpb_answer_shape_t){.g0 = a->ngroups};
        for (int k = i; k < n; k++) {
            int first = !hist[k].comm_only && tpb_history_same_shape(&hist[k], &hist[i]);
            for (int j = i; j < k && first; j++)
                first = hist[j].comm_only || !tpb_history_same_group(&hist[j], &hist[k]);
            if (!first)
                continue;
            group_build(a, hist, n, k);
            const tpb_history_t *b = a->groups[a->ngroups - 1].pick;
            s->best = !s->best || b->step_med < s->best->step_med ? b : s->best;
        }
        s->g1 = a->ngroups;
        use_build(s, hist, n);
    }
}

int tpb_answer_build(tpb_answer_t *a, const tpb_history_t *hist, int n, const char *const *hosts,
                     double target_spread, int parts)
{
    *a = (tpb_answer_t){.parts = parts, .hosts = hosts, .target = target_spread};
    int any = 0;
    for (int i = 0; i < n; i++) {
        any |= !hist[i].comm_only;
        a->budget |= hist[i].looks > 0;
    }
    if (!any)
        return 0;
    size_t m = (size_t)n;
    a->groups = calloc(m, sizeof(*a->groups));
    a->shapes = calloc(m, sizeof(*a->shapes));
    a->tps = calloc(m, sizeof(*a->tps));
    a->pol = calloc(m, sizeof(*a->pol));
    a->str = calloc(m, sizeof(*a->str));
    if (!a->groups || !a->shapes || !a->tps || !a->pol || !a->str) {
        tpb_answer_free(a);
        return -1;
    }
    shapes_build(a, hist, n);
    tps_build(a, hist, n);
    a->calib = worst_calibration(hist, n);
    return 0;
}

void tpb_answer_free(tpb_answer_t *a)
{
    free(a->groups);
    free(a->shapes);
    free(a->tps);
    free(a->pol);
    free(a->str);
    *a = (tpb_answer_t){0};
}
