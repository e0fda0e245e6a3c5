/* verdict.c - a policy's speed-up over even, its interval, its bound and its verdict. */
#include "record/verdict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "record/spill.h"

double tpb_balance_bound(double step, const double *compute, const double *work,
                         const double *p_compute, const double *p_work, int world, int tp)
{
    if (!compute || !work || !p_compute || !p_work || tp < 1 || world < tp || !(step > 0.0))
        return NAN;
    double cmax = 0.0, even = 0.0, balanced = 0.0;
    for (int g = 0; g < world / tp; g++) {
        double w = 0.0, rate = 0.0;
        for (int r = g * tp; r < (g + 1) * tp; r++) {
            if (!(compute[r] > 0.0) || !(work[r] > 0.0) || !(p_compute[r] > 0.0) ||
                !(p_work[r] > 0.0))
                return NAN;
            double rr = p_work[r] / p_compute[r];
            cmax = fmax(cmax, compute[r]);
            even = fmax(even, work[r] / rr);
            w += work[r];
            rate += rr;
        }
        balanced = fmax(balanced, w / rate);
    }
    double x = fmax(step - cmax, 0.0);
    return (even + x) / (balanced + x);
}

/* The balance bound of h over its even config ev, their per-rank figures read back (NaN
 * where either lacks them). */
static double bound_of(const tpb_history_t *ev, const tpb_history_t *h)
{
    double *c = tpb_history_dup(ev, TPB_HIST_COMPUTE), *w = tpb_history_dup(ev, TPB_HIST_WORK);
    double *pc = tpb_history_dup(h, TPB_HIST_COMPUTE), *pw = tpb_history_dup(h, TPB_HIST_WORK);
    double b = ev->world == h->world
                   ? tpb_balance_bound(ev->step_med, c, w, pc, pw, ev->world, ev->tp)
                   : NAN;
    free(c);
    free(w);
    free(pc);
    free(pw);
    return b;
}

double tpb_verdict_conf(int looks)
{
    return looks > 0 ? tpb_seq_conf(0.05, looks) : 0.95;
}

tpb_policy_verdict_t tpb_verdict_of(const tpb_history_t *ev, const tpb_history_t *h, double tol)
{
    tpb_policy_verdict_t v = {.speedup = ev->step_med / h->step_med,
                              .lo = NAN,
                              .hi = NAN,
                              .verdict = TPB_VERDICT_INCONCLUSIVE};
    v.bound = bound_of(ev, h);
    if (ev->steps && h->steps && ev->nsteps > 0 && h->nsteps > 0) {
        v.paired = ev->set >= 0 && ev->set == h->set && ev->rounds >= 3 && ev->nsteps == h->nsteps;
        v.rounds = v.paired ? ev->rounds : 0;
        v.looks = v.paired ? ev->looks : 0;
        v.conf = v.paired ? tpb_verdict_conf(ev->looks) : 0.95;
        tpb_ratio_ci_t ci =
            v.paired
                ? tpb_interval_paired_at(ev->steps, h->steps, (size_t)ev->nsteps, ev->rounds,
                                         v.conf)
                : tpb_interval_ratio(ev->steps, (size_t)ev->nsteps, h->steps, (size_t)h->nsteps);
        if (ci.ratio > 0.0) { /* ci: T_this / T_even, lower is better */
            v.lo = ci.hi > 0.0 && isfinite(ci.hi) ? 1.0 / ci.hi : 0.0;
            v.hi = ci.lo > 0.0 ? 1.0 / ci.lo : INFINITY;
            v.verdict = tpb_interval_decide(ci.ratio, ci.half, tol);
        }
    }
    if (isfinite(v.bound) && v.speedup > v.bound * (1.0 + tol))
        v.verdict = TPB_VERDICT_DISTURBED;
    return v;
}

const tpb_history_t *tpb_verdict_even_of(const tpb_history_t *hist, int n, const tpb_history_t *h)
{
    for (int i = 0; i < n; i++)
        if (!hist[i].comm_only && tpb_history_same_group(&hist[i], h) &&
            tpb_history_same_layer(&hist[i], h) && hist[i].policy == TPB_POLICY_EVEN)
            return &hist[i];
    return NULL;
}

const char *tpb_human_us(char *out, size_t cap, double us)
{
    if (!isfinite(us))
        snprintf(out, cap, "-");
    else if (us < 1e3)
        snprintf(out, cap, "%.0f us", us);
    else if (us < 1e6)
        snprintf(out, cap, "%.3g ms", us / 1e3);
    else
        snprintf(out, cap, "%.3g s", us / 1e6);
    return out;
}

void tpb_verdict_rounds_text(tpb_buf_t *txt, const tpb_policy_verdict_t *v)
{
    if (!v->paired)
        return;
    tpb_buf_printf(txt, " (%d paired rounds", v->rounds); /* even beside it, in turns */
    if (v->looks > 0)
        tpb_buf_printf(txt, ", %d look%s of --budget, at %.1f %%", v->looks,
                       v->looks == 1 ? "" : "s", 100.0 * v->conf);
    tpb_buf_puts(txt, ")");
}

void tpb_verdict_looks_json(tpb_buf_t *js, const tpb_policy_verdict_t *v)
{
    if (v->looks <= 0)
        return;
    tpb_json_kv_int(js, "budget_looks", v->looks);
    tpb_json_kv_num(js, "confidence", v->conf);
}

const char *tpb_alarm_words(char *out, size_t cap, double alpha)
{
    if (alpha > 0.0 && alpha < 1.0)
        snprintf(out, cap, "chance alone names one at most once in %.0f runs", 1.0 / alpha);
    else
        snprintf(out, cap, "chance alone could name one");
    return out;
}
