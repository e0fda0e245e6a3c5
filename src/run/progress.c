/* progress.c - rank 0's progress lines on stderr: when a config starts (elapsed, time left)
 * and a heartbeat during a long one (sweep.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/bind.h"
#include "run/estimate.h"
#include "run/layer.h"
#include "run/orient.h"
#include "record/wrap.h"
#include "run/sweep_state.h"

void tpb_sweep_say(const tpb_sweep_t *s, const char *fmt, ...)
{
    const tpb_measure_t *m = &s->plans.m;
    tpb_buf_t line = TPB_BUF_INIT, out = TPB_BUF_INIT;
    tpb_buf_puts(&line, "tpbal: ");
    if (m->passes > 1)
        tpb_buf_printf(&line, "pass %d of %d, ", m->pass, m->passes);
    va_list ap;
    va_start(ap, fmt);
    char text[1024];
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    text[strcspn(text, "\n")] = '\0'; /* one line, folded below */
    tpb_buf_puts(&line, text);
    tpb_wrap_line(tpb_buf_str(&line), strlen(tpb_buf_str(&line)), m->err_width, &out);
    fputs(tpb_buf_str(&out), stderr);
    fflush(stderr);
    tpb_buf_free(&line);
    tpb_buf_free(&out);
}

/* Work of plan p for the ETA: its iterations' FLOPs on a rank plus 64 a byte of its buffers
 * (a comm-only config's messages; a small GEMM's fixed costs). Only ratios matter. */
double tpb_sweep_plan_work(const tpb_sweep_t *s, const tpb_config_plan_t *p)
{
    if (p->skip[0])
        return 0.0;
    const tpb_measure_t *m = &s->plans.m;
    return (double)(m->iters + m->warmup) *
           (tpb_layer_rank_flop(&p->desc) + 64.0 * tpb_layer_bytes(&p->desc));
}

/* "42 s", "3 min 05 s", "1 h 02 min" */
static const char *human_s(char *out, size_t cap, double s)
{
    if (!(s >= 0.0) || s > 1e8)
        snprintf(out, cap, "?");
    else if (s < 60.0)
        snprintf(out, cap, "%.0f s", s);
    else if (s < 3600.0)
        snprintf(out, cap, "%d min %02d s", (int)(s / 60.0), (int)s % 60);
    else
        snprintf(out, cap, "%d h %02d min", (int)(s / 3600.0), (int)(s / 60.0) % 60);
    return out;
}

/* A progress line on stderr (rank 0) when config p starts, or a set of k led by p (work:
 * theirs, plan_work), named by the id the table, the records and its trace file give it
 * (from 0) and its place in the sweep (from 1): the first
 * 5 s are quiet, then one line at most every 5 s, with the elapsed time and the time left
 * (the elapsed time scaled by the work left over the work done). */
void tpb_sweep_progress(tpb_sweep_t *s, const tpb_config_plan_t *p, double work, int k)
{
    if (!s->rec)
        return;
    tpb_recorder_t *r = s->rec;
    double now = tpb_clock_now_us(NULL);
    if (!r->start_at) {
        r->start_at = r->progress_at = now;
        for (int i = 0; i < s->plans.n; i++)
            r->work_all += tpb_sweep_plan_work(s, &s->plans.p[i]);
    }
    r->config_at = r->beat_at = now;
    r->iter0 = s->pos.iter_base;
    r->iters_now = (long)k * (s->plans.m.iters + s->plans.m.warmup);
    double done = r->work_done, elapsed = (now - r->start_at) * 1e-6;
    r->work_done += work;
    if (s->plans.m.quiet || now - r->progress_at < 5e6)
        return;
    r->progress_at = now;
    char el[32], left[32];
    human_s(el, sizeof(el), elapsed);
    human_s(left, sizeof(left), done > 0.0 ? elapsed * (r->work_all - done) / done : NAN);
    tpb_sweep_say(s,
                  "config %d (%d of %d: tp %d, %s, %s, %ldx%ldx%ld): %s elapsed, about %s "
                  "left%s\n",
                  s->acct.nconfigs, s->acct.nconfigs + 1, s->plans.measured, p->tp,
                  tpb_split_name(p->desc.orient->split), tpb_policy_name(p->policy), p->shape->m,
                  p->shape->n, p->shape->k, el, left, s->plans.m.passes > 1 ? " in this pass" : "");
}

double tpb_sweep_rate(MPI_Comm world, const tpb_backend_class_t *b, const tpb_plan_list_t *list,
                      char *basis, size_t cap)
{
    double rate = b->rate_guess(&list->m.backend, basis, cap);
    double mine = isfinite(rate) ? rate : INFINITY; /* NaN: unknown on every rank alike */
    if (MPI_Allreduce(&mine, &rate, 1, MPI_DOUBLE, MPI_MIN, world) != MPI_SUCCESS)
        return NAN;
    return isfinite(rate) ? rate : NAN;
}

double tpb_sweep_draw_cpus(MPI_Comm world)
{
    tpb_core_share_t share;
    double mine = tpb_bind_share(world, &share) == TPB_OK ? fmax(share.share, 1e-3) : 1.0;
    double all = 1.0;
    if (MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, world) != MPI_SUCCESS)
        return 1.0;
    return fmax(all, 1.0);
}

void tpb_sweep_announce(tpb_sweep_t *s)
{
    if (s->plans.m.quiet || s->plans.measured == 0)
        return;
    char basis[256] = "", all[32], least[32];
    double rate = tpb_sweep_rate(s->pos.world, s->ctx.backend, &s->plans, basis, sizeof(basis));
    double cpus = tpb_sweep_draw_cpus(s->pos.world);
    if (!isfinite(rate) || !s->rec)
        return;
    tpb_est_rates_t r =
        tpb_est_rates_of(&s->plans, &s->ctx.backend->defaults, s->ctx.topo->size, rate);
    r.draw_cpus = cpus;
    tpb_estimate_t e;
    tpb_plans_estimate(&s->plans, &r, &e);
    /* at most 120 columns: the rate's basis is the dry run's to say in full */
    tpb_sweep_say(s, "%d config%s on %d rank%s: about %s (%s%s%sGEMMs at %.3g GFLOP/s, %s)\n",
                  s->plans.measured, s->plans.measured == 1 ? "" : "s", s->ctx.topo->size,
                  s->ctx.topo->size == 1 ? "" : "s", human_s(all, sizeof(all), e.total_s),
                  e.calibrations ? human_s(least, sizeof(least), e.total_least_s) : "",
                  e.calibrations ? " if calibrations settle at once" : "",
                  e.calibrations ? "; " : "", rate,
                  strncmp(basis, "measured", 8) == 0 ? "measured" : "guessed");
    const tpb_measure_t *m = &s->plans.m;
    if (m->pass == 1 && (m->passes > 1 || m->budget_s > 0.0)) { /* what the whole run takes */
        double about, most;
        tpb_estimate_whole(&e, m->passes, m->budget_s, &about, &most);
        char n[24] = "";
        if (m->passes > 1)
            snprintf(n, sizeof(n), " (%d passes)", m->passes);
        if (m->budget_s > 0.0)
            tpb_sweep_say(s, "in all%s: about %s, at most %s with --budget %g s%s spent\n", n,
                          human_s(all, sizeof(all), about), human_s(least, sizeof(least), most),
                          m->budget_s, m->passes > 1 ? " a pass" : "");
        else
            tpb_sweep_say(s, "in all%s: about %s\n", n, human_s(all, sizeof(all), about));
    }
}

void tpb_sweep_beat(tpb_sweep_t *s)
{
    tpb_recorder_t *r = s->rec;
    if (!r || s->plans.m.quiet || !r->config_at)
        return;
    static double every_us = -1.0; /* 10 s; TPBAL_TEST_BEAT_S: the tests' shorter beat */
    if (every_us < 0.0) {
        const char *e = getenv("TPBAL_TEST_BEAT_S");
        every_us = e && *e ? atof(e) * 1e6 : 10e6;
    }
    double now = tpb_clock_now_us(NULL);
    if (now - r->beat_at < every_us)
        return;
    r->beat_at = now;
    char in[32], el[32], look[64] = "";
    /* past its planned iterations a --budget set is in a later look: counted within it */
    long done = s->pos.iter_base - r->iter0, per = r->iters_now > 0 ? r->iters_now : 1;
    if (done >= per)
        snprintf(look, sizeof(look), ", look %ld of its --budget set", done / per + 1);
    tpb_sweep_say(s, "config %d (%d of %d%s): iteration %ld of %ld, %s in it, %s elapsed\n",
                  s->acct.nconfigs, s->acct.nconfigs + 1, s->plans.measured, look, done % per, per,
                  human_s(in, sizeof(in), (now - r->config_at) * 1e-6),
                  human_s(el, sizeof(el), (now - r->start_at) * 1e-6));
}
