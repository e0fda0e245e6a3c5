/* dryrun.c - the resolved config list of a command line, without a device. */
#include "run/dryrun.h"

#include <math.h>
#include <string.h>

#include "run/estimate.h"
#include "run/plan.h"
#include "run/sweep.h"
#include "run/coll.h"
#include "run/orient.h"

/* "64,64" for the group's shards, or what decides them. */
static void shards_text(const tpb_config_plan_t *p, char *out, size_t cap)
{
    if (p->uses_speeds && !p->speeds) {
        snprintf(out, cap, "%s", "from calibration");
        return;
    }
    size_t used = 0;
    out[0] = '\0';
    for (int r = 0; r < p->tp && used < cap; r++)
        used += (size_t)snprintf(out + used, cap - used, "%s%ld", r ? "," : "", p->shards[r]);
}

/* "42 s", "3.5 min", "2.1 h"; past 1000 h no figure (a shape far beyond any machine) */
static const char *human_s(char *out, size_t cap, double s)
{
    if (s > 3.6e6)
        snprintf(out, cap, "1000+ h");
    else if (s < 60.0)
        snprintf(out, cap, "%.2g s", s);
    else if (s < 3600.0)
        snprintf(out, cap, "%.2g min", s / 60.0);
    else
        snprintf(out, cap, "%.2g h", s / 3600.0);
    return out;
}

/* Seconds plan p's iterations take at `gflops` a rank (its GEMM only; NaN: unknown). */
static double plan_seconds(const tpb_measure_t *m, const tpb_config_plan_t *p, double gflops)
{
    double f = tpb_layer_rank_flop(&p->desc);
    if (p->shape->comm_only || !(f > 0.0) || !(gflops > 0.0))
        return NAN;
    return (double)(m->iters + m->warmup) * f / (gflops * 1e9);
}

/* How a config's timelines reach rank 0 (--gather) and what rank 0 holds of them. */
static void gather_line(const tpb_measure_t *m, int world, FILE *out)
{
    double mib = (double)world * m->iters * sizeof(tpb_mark_t) / 1048576.0;
    if (!tpb_gather_in_parts(m, world, 0)) {
        fprintf(out, "tpbal: dry run: timelines: every rank's marks to rank 0, %.3g MiB a config\n",
                mib);
        return;
    }
    int kept = m->trace_ranks < 0 || m->trace_ranks > world ? world : m->trace_ranks;
    fprintf(out,
            "tpbal: dry run: timelines in parts (--gather %s): each TP group's first rank "
            "analyses its group; rank 0 keeps the marks of about %d rank%s a config (whole "
            "TP groups; %.3g MiB of %.3g)\n",
            m->gather == TPB_GATHER_PARTS ? "parts" : "auto", kept, kept == 1 ? "" : "s",
            mib * kept / world, mib);
}

/* --fleet: what it measures instead of a sweep (fleet.c), and the GEMM rounds' time: each
 * a calibration of 8 to 40 GEMMs within about 0.25 s, 5 rounds (a turn a node-local rank
 * where ranks share a device: times their number). */
static tpb_status_t fleet_dry_run(const tpb_fleet_plan_t *fp, const tpb_topo_t *topo, FILE *out)
{
    if (!out)
        return TPB_OK;
    const tpb_shape_t *sh = &fp->shape;
    char basis[256] = "", t[32], b[32];
    double rate = fp->backend->rate_guess(&fp->cfg, basis, sizeof(basis));
    double g = 2.0 * (double)sh->m * (double)sh->n * (double)sh->k / (rate * 1e9);
    double round = fmin(fmax(8.0 * g, 0.25), 40.0 * g);
    double mib = fp->bytes / 1048576.0;
    snprintf(b, sizeof(b), mib >= 1.0 ? "%.4g MiB" : "%.0f bytes", mib >= 1.0 ? mib : fp->bytes);
    fprintf(out,
            "tpbal: dry run: --fleet on %d rank%s on %d host%s: 5 rounds of every rank's "
            "%ldx%ldx%ld %s GEMM (a calibration each, about %s in all at %.3g GFLOP/s a "
            "rank, x the ranks of a node where they share a device), then 5 rounds of a %s "
            "all-reduce (12 a round, 10 timed) over each node's ranks and over each pair of "
            "neighbouring nodes (with an 8-byte one for the link's latency); scores against "
            "the fleet's median, the nodes below %.2f excluded%s%s; backend %s (no device "
            "opened, nothing written)\n",
            topo->size, topo->size == 1 ? "" : "s", topo->nhosts, topo->nhosts == 1 ? "" : "s",
            sh->m, sh->n, sh->k, tpb_dtype_name(fp->dtype),
            isfinite(round) ? human_s(t, sizeof(t), 5.0 * round) : "?", rate, b, fp->threshold,
            fp->out_dir[0] ? "; fleet.json into " : "", fp->out_dir, fp->backend->name);
    return TPB_OK;
}

/* The whole run's estimate, in its parts (run/estimate.h). */
static void whole_run(const tpb_backend_defaults_t *d, const tpb_topo_t *topo,
                      const tpb_plan_list_t *list, double rate, double cpus, const char *basis,
                      FILE *out)
{
    tpb_est_rates_t r = tpb_est_rates_of(list, d, topo->size, rate);
    r.draw_cpus = cpus;
    tpb_estimate_t e;
    char all[32], least[32], g[32], c[32], cal[32], set[32];
    tpb_plans_estimate(list, &r, &e);
    fprintf(out,
            "tpbal: dry run: about %s in all%s%s%s: GEMMs %s at %.3g GFLOP/s a rank (%s), "
            "collectives %s at %.3g GB/s bus bandwidth, calibration %s (%d calibration%s, each to "
            "its budget), set-up and start %s\n",
            human_s(all, sizeof(all), e.total_s), e.calibrations ? " (" : "",
            e.calibrations ? human_s(least, sizeof(least), e.total_least_s) : "",
            e.calibrations ? " if every calibration settles at once)" : "",
            human_s(g, sizeof(g), e.gemm_s), rate, basis, human_s(c, sizeof(c), e.comm_s),
            r.busbw_gbs, human_s(cal, sizeof(cal), e.calib_s), e.calibrations,
            e.calibrations == 1 ? "" : "s", human_s(set, sizeof(set), e.setup_s + e.start_s));
    if (list->m.budget_s > 0.0) /* the later looks of open sets: at most the budget */
        fprintf(out,
                "tpbal: dry run: and up to --budget %s more for sets whose speed-up is still "
                "open after their first look\n",
                human_s(all, sizeof(all), list->m.budget_s));
    const tpb_measure_t *m = &list->m;
    if (m->passes > 1 || m->budget_s > 0.0) { /* the launch as a whole */
        double about, most, settled, unused;
        tpb_estimate_t el = e;
        el.total_s = e.total_least_s; /* every calibration settled at once */
        tpb_estimate_whole(&e, m->passes, m->budget_s, &about, &most);
        tpb_estimate_whole(&el, m->passes, 0.0, &settled, &unused);
        fprintf(out, "tpbal: dry run: in all");
        if (m->passes > 1)
            fprintf(out, " (%d passes)", m->passes);
        fprintf(out, ": about %s", human_s(all, sizeof(all), about));
        if (e.calibrations)
            fprintf(out, " (%s if every calibration settles at once)",
                    human_s(least, sizeof(least), settled));
        if (m->budget_s > 0.0)
            fprintf(out, ", at most %s with --budget%s", human_s(all, sizeof(all), most),
                    m->passes > 1 ? " spent in every pass" : " spent");
        fputs("\n", out);
    }
}

/* One config's line: "config ID: tp T SPLIT POLICY PLACEMENT, MxNxK DTYPE NAME, shards ..." */
static void config_line(const tpb_plan_list_t *list, const tpb_config_plan_t *p, int id,
                        double rate, FILE *out)
{
    const tpb_shape_t *sh = p->shape;
    char shards[256], t[32];
    shards_text(p, shards, sizeof(shards));
    if (sh->comm_only)
        fprintf(out, "config %3d: tp %d %s %s %s, %s", id, p->tp, tpb_coll_name(p->desc.coll->kind),
                tpb_policy_name(p->policy), tpb_placement_name(p->placement), sh->name);
    else
        fprintf(out, "config %3d: tp %d %s %s %s, %ldx%ldx%ld %s%s%s", id, p->tp,
                tpb_split_name(p->desc.orient->split), tpb_policy_name(p->policy),
                tpb_placement_name(p->placement), sh->m, sh->n, sh->k,
                tpb_dtype_name(list->run.dtype), sh->name[0] ? " " : "", sh->name);
    if (*tpb_config_key_variant(&p->key))
        fprintf(out, ",%s (%s)", tpb_config_key_variant(&p->key),
                tpb_coll_label(p->desc.coll->kind));
    if (p->desc.chunks)
        fprintf(out, ", overlap %d chunks", p->desc.chunks);
    double sec = plan_seconds(&list->m, p, rate);
    fprintf(out, ", shards %s%s%s\n", shards, isfinite(sec) ? ", about " : "",
            isfinite(sec) ? human_s(t, sizeof(t), sec) : "");
}

/* The configs in the order the run measures them, each with the id the run gives it
 * (tpb_plans_order), then the entries it skips, each with its reason. */
static void config_lines(const tpb_plan_list_t *list, double rate, FILE *out)
{
    int order[list->n + 1], listed[list->n + 1];
    int n = tpb_plans_order(list, order);
    memset(listed, 0, sizeof(listed));
    for (int j = 0; j < n; j++) {
        config_line(list, &list->p[order[j]], j, rate, out);
        listed[order[j]] = 1;
    }
    for (int i = 0; i < list->n; i++) {
        const tpb_config_plan_t *p = &list->p[i];
        if (listed[i])
            continue;
        if (p->skip[0]) /* a skipped entry has no shape or split of its own */
            fprintf(out, "skipped: tp %d %s: %s\n", p->tp, tpb_placement_name(p->placement),
                    p->skip);
        else
            fprintf(out, "skipped: tp %d %s %s: its block's unit has a GEMM that cannot run\n",
                    p->tp, tpb_policy_name(p->policy), tpb_placement_name(p->placement));
    }
}

tpb_status_t tpb_dry_run(MPI_Comm world, const tpb_options_t *o, const tpb_topo_t *topo, FILE *out)
{
    if (o->fleet) {
        tpb_fleet_plan_t fp = tpb_fleet_plan_of(o);
        return fleet_dry_run(&fp, topo, out);
    }
    tpb_plan_list_t list;
    TPB_CHECK_RET(tpb_plans_build(o, topo, &list));
    double avail = list.backend->mem_guess(topo->local_size); /* what the run refuses, refused */
    tpb_status_t st = isfinite(avail) ? tpb_plans_check_memory(&list, avail, topo->rank) : TPB_OK;
    if (st != TPB_OK) {
        tpb_plans_free(&list);
        return st;
    }
    char basis[256] = "";
    double rate = tpb_sweep_rate(world, list.backend, &list, basis, sizeof(basis));
    double cpus = tpb_sweep_draw_cpus(world);
    if (out)
        config_lines(&list, rate, out);
    if (out)
        fprintf(out,
                "tpbal: dry run: %d configs would be measured and %d skipped on %d ranks, "
                "backend %s (no device opened, nothing written; memory %s)\n",
                list.measured, list.n - list.measured, topo->size, list.backend->name,
                isfinite(avail) ? "checked as the run checks it"
                                : "checked by the run, once its device is open");
    if (out && list.m.timeline)
        gather_line(&list.m, topo->size, out);
    if (out && list.m.block && list.nshapes > 0)
        fprintf(out,
                "tpbal: dry run: --block: the configs above run as blocks of %d GEMMs, one "
                "block per TP degree, policy and sequence parallelism\n",
                list.nshapes);
    if (out && isfinite(rate) && list.measured > 0)
        whole_run(&list.backend->defaults, topo, &list, rate, cpus, basis, out);
    else if (out && !isfinite(rate))
        fprintf(out, "tpbal: dry run: no time estimate (%s)\n", basis);
    if (out && list.m.passes > 1)
        fprintf(out,
                "tpbal: dry run: --repeat %d: all of the above %d times, each pass with its own "
                "calibration%s, into --out's pass-1 .. pass-%d\n",
                list.m.passes, list.m.passes, list.m.budget_s > 0.0 ? " and --budget" : "",
                list.m.passes);
    int measured = list.measured;
    tpb_plans_free(&list);
    if (measured == 0) /* the run refuses it */
        return tpb_err_set(TPB_ERR_INVALID,
                           "no config would be measured on the %d ranks: every one is skipped, "
                           "each for the reason its line above gives",
                           topo->size);
    return TPB_OK;
}
