/* trace.c - Chrome trace-event JSON output of the timelines. */
#include "record/trace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "record/report.h"

void tpb_trace_name(int id, char *out, size_t cap)
{
    snprintf(out, cap, "trace-%03d.json", id);
}

/* Process (host) and thread (rank) names. Per config (topo: the config's placed view), tid
 * is the rank's position and its name says its TP group; per run (per_run, topo: the run's,
 * res unused), tid is the world rank and the group is in each span's args, since it changes
 * with the config. pid = host + 1 (Perfetto reserves 0). */
static void write_names(FILE *f, const tpb_topo_t *topo, const tpb_result_t *res, int per_run)
{
    int world = per_run ? topo->size : tpb_trace_rows(res);
    for (int h = 0; h < topo->nhosts; h++) {
        for (int j = 0; j < world; j++) {
            int r = per_run ? j : tpb_trace_position(res, j);
            if (topo->host_index[r] != h)
                continue;
            tpb_buf_t b = TPB_BUF_INIT;
            tpb_json_str(&b, topo->hosts[r]);
            fprintf(f,
                    ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                    "\"args\":{\"name\":%s}}",
                    h + 1, tpb_buf_str(&b));
            tpb_buf_free(&b);
            break;
        }
    }
    for (int j = 0; j < world; j++) {
        int r = per_run ? j : tpb_trace_position(res, j), h = topo->host_index[r] + 1;
        if (per_run)
            fprintf(f,
                    ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                    "\"args\":{\"name\":\"rank %d\"}}",
                    h, r, r);
        else
            fprintf(f,
                    ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                    "\"args\":{\"name\":\"rank %d, TP group %d\"}}",
                    h, r, tpb_result_world_rank(res, r), r / res->tp);
        fprintf(f,
                ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                "\"args\":{\"sort_index\":%d}}",
                h, r, r);
    }
}

/* Fast number formatting: a trace at scale holds millions of numbers, and printf's
 * format parsing dominated its writing time. */
static char *put_uint(char *p, unsigned long long v)
{
    char tmp[24];
    int n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* v with three decimals, as %.3f (0 for a non-finite value). */
static char *put_fix3(char *p, double v)
{
    if (!isfinite(v) || fabs(v) > 9e15)
        v = 0.0;
    long long t = llround(v * 1000.0);
    if (t < 0) {
        *p++ = '-';
        t = -t;
    }
    p = put_uint(p, (unsigned long long)(t / 1000));
    int f = (int)(t % 1000);
    *p++ = '.';
    *p++ = (char)('0' + f / 100);
    *p++ = (char)('0' + f / 10 % 10);
    *p++ = (char)('0' + f % 10);
    return p;
}

static char *put_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

/* One span event; args is the text inside the args object, after "config":ID,"iter":I. */
static char *span(char *p, const char *name, const char *head, double ts, double end, int id,
                  int iter)
{
    p = put_str(p, ",\n{\"name\":\"");
    p = put_str(p, name);
    p = put_str(p, head); /* ","cat":"tpbal","ph":"X","pid":P,"tid":T,"ts": */
    p = put_fix3(p, ts);
    p = put_str(p, ",\"dur\":");
    p = put_fix3(p, end > ts ? end - ts : 0.0);
    p = put_str(p, ",\"args\":{\"config\":");
    p = put_uint(p, (unsigned long long)id);
    p = put_str(p, ",\"iter\":");
    return put_uint(p, (unsigned long long)iter);
}

/* Where position r's spans go: pid (host + 1) and tid (see write_names). */
static void ids_of(const tpb_topo_t *topo, const tpb_result_t *res, int r, int per_run, int *pid,
                   int *tid)
{
    int w = tpb_result_world_rank(res, r);
    *pid = topo->host_index[per_run ? w : r] + 1;
    *tid = per_run ? w : r;
}

/* A flow arrow from the last arrival (inside its compute span) to a rank that waited for
 * it (inside its wait span), both 1 ns before A so that each binds to its slice. */
static char *flow(char *p, char ph, unsigned long long id, int pid, int tid, double ts)
{
    p = put_str(p, ",\n{\"name\":\"waited for\",\"cat\":\"wait\",\"ph\":\"");
    *p++ = ph;
    p = put_str(p, ph == 'f' ? "\",\"bp\":\"e\",\"id\":" : "\",\"id\":");
    p = put_uint(p, id);
    p = put_str(p, ",\"pid\":");
    p = put_uint(p, (unsigned long long)pid);
    p = put_str(p, ",\"tid\":");
    p = put_uint(p, (unsigned long long)tid);
    p = put_str(p, ",\"ts\":");
    return put_fix3(p, ts);
}

/* Waits worth an arrow: at least 1 us and 1 % of the iteration's step. */
static int worth_arrow(double wait, double step)
{
    return wait >= 1.0 && wait >= 0.01 * step;
}

/* The arrows of group g in iteration i from its last arrival to every rank that waited. */
static char *group_flows(char *p, const tpb_result_t *res, const tpb_mark_t *gm, double t0,
                         const tpb_topo_t *topo, int g, int i, int per_run)
{
    int iters = res->iters, tp = res->tp, last = g * tp, pid, tid;
    double a = tpb_timeline_last_arrival(gm, tp, iters, 0, i), c0 = INFINITY, x1 = -INFINITY;
    for (int q = g * tp; q < (g + 1) * tp; q++) {
        const tpb_mark_t *mk = &gm[(size_t)(q - g * tp) * iters + i];
        last = mk->c1 >= a ? q : last;
        c0 = fmin(c0, mk->c0);
        x1 = fmax(x1, mk->x1);
    }
    ids_of(topo, res, last, per_run, &pid, &tid);
    for (int q = g * tp; q < (g + 1) * tp; q++) {
        const tpb_mark_t *mk = &gm[(size_t)(q - g * tp) * iters + i];
        if (q == last || !worth_arrow(fmin(a, mk->x1) - mk->c1, x1 - c0))
            continue;
        unsigned long long id = ((unsigned long long)res->id * (unsigned long long)iters + i) *
                                    (unsigned long long)res->world +
                                q + 1;
        int qpid, qtid;
        ids_of(topo, res, q, per_run, &qpid, &qtid);
        p = flow(p, 's', id, pid, tid, a - t0 - 0.001);
        p = put_str(p, "}");
        p = flow(p, 'f', id, qpid, qtid, fmin(a, mk->x1) - t0 - 0.001);
        p = put_str(p, "}");
    }
    return p;
}

/* --overlap chunked: chunk j's GEMM inside the compute span (the rank's lane) and its
 * collective from its start to its completion on the rank's comm lane (tid + 1000000). */
static char *chunk_spans(char *p, const tpb_result_t *res, int pid, int tid, int r, int i,
                         double t0)
{
    const double *cm =
        res->chunk_marks + tpb_chunk_marks_at((size_t)res->iters, res->chunks, r, (size_t)i);
    char head[96], chead[96];
    snprintf(head, sizeof(head),
             "\",\"cat\":\"chunk\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
    snprintf(chead, sizeof(chead),
             "\",\"cat\":\"chunk\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid + 1000000);
    for (int j = 0; j < res->chunks; j++, cm += 3) {
        char args[32];
        snprintf(args, sizeof(args), ",\"chunk\":%d}}", j);
        p = span(p, "gemm chunk", head, cm[0] - t0, cm[1] - t0, res->id, i);
        p = put_str(p, args);
        p = span(p, "comm chunk", chead, cm[1] - t0, cm[2] - t0, res->id, i);
        p = put_str(p, args);
    }
    return p;
}

/* Position r's spans; gm: the marks of its group (tp ranks). */
static int write_rank(FILE *f, const tpb_result_t *res, const tpb_mark_t *gm, double t0,
                      const tpb_topo_t *topo, int r, const unsigned char *keep, int per_run)
{
    int iters = res->iters, tp = res->tp, g = r / tp, pid, tid;
    const tpb_rank_info_t *info = &res->info[r];
    char head[96], comp_args[96], comm_args[128], grp[32], *line;
    ids_of(topo, res, r, per_run, &pid, &tid);
    snprintf(head, sizeof(head),
             "\",\"cat\":\"tpbal\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
    snprintf(grp, sizeof(grp), per_run ? ",\"group\":%d" : "", g);
    snprintf(comp_args, sizeof(comp_args), ",\"shard\":%ld,\"flop\":%.6g%s}}", info->shard,
             info->flop, grp);
    snprintf(comm_args, sizeof(comm_args), ",\"collective\":\"%s\",\"bytes\":%.0f%s",
             tpb_coll_label(res->coll), res->coll_bytes, grp);
    /* three spans, two events per arrow, two spans per chunk */
    size_t cap = 1024 + (size_t)tp * 512 + (size_t)res->chunks * 512;
    if (!(line = malloc(cap)))
        return -1;
    for (int i = 0; i < iters; i++) {
        if (keep && !keep[i])
            continue;
        const tpb_mark_t *mk = &gm[(size_t)(r - g * tp) * iters + i];
        double a = tpb_timeline_last_arrival(gm, tp, iters, 0, i);
        double wait_end = fmin(a, mk->x1);
        char *p = span(line, "compute", head, mk->c0 - t0, mk->c1 - t0, res->id, i);
        p = put_str(p, comp_args);
        for (int k = 0; k < 2; k++) {
            p = k == 0 ? span(p, "wait", head, mk->c1 - t0, wait_end - t0, res->id, i)
                       : span(p, "comm", head, wait_end - t0, mk->x1 - t0, res->id, i);
            p = put_str(p, k == 0 ? grp : comm_args);
            p = put_str(p, ",\"last_arrival_us\":");
            p = put_fix3(p, a - t0);
            p = put_str(p, "}}");
        }
        if (res->chunks && res->chunk_marks)
            p = chunk_spans(p, res, pid, tid, r, i, t0);
        if (r == g * tp && tp > 1) /* the group's arrows, once */
            p = group_flows(p, res, gm, t0, topo, g, i, per_run);
        fwrite(line, 1, (size_t)(p - line), f);
    }
    free(line);
    return 0;
}

/* otherData's slowest iteration and the step of every iteration written. */
static void write_steps(FILE *f, const double *step, int iters, const unsigned char *keep)
{
    int slowest = 0;
    for (int i = 1; i < iters; i++)
        slowest = step[i] > step[slowest] ? i : slowest;
    fprintf(f, ",\"slowest_iter\":%d,\"steps_us\":[", slowest);
    char line[32];
    for (int i = 0, n = 0; i < iters; i++) {
        if (keep && !keep[i])
            continue;
        char *p = line;
        if (n++)
            *p++ = ',';
        p = put_fix3(p, step[i]);
        fwrite(line, 1, (size_t)(p - line), f);
    }
    fprintf(f, "]");
}

/* A config's facts (otherData per config; one entry of otherData.configs per run). */
static void write_info(FILE *f, const tpb_result_t *res, const double *step,
                       const unsigned char *keep)
{
    fprintf(f,
            "{\"tool\":\"tpbal\",\"config\":%d,\"tp\":%d,\"split\":\"%s\",\"policy\":\"%s\","
            "\"m\":%ld,\"n\":%ld,\"k\":%ld,\"dtype\":\"%s\",\"iters\":%d,\"placement\":\"%s\","
            "\"collective\":\"%s\",\"bytes\":%.0f,\"world_ranks\":[",
            res->id, res->tp, tpb_config_key_split(&res->key), tpb_policy_name(res->policy), res->m,
            res->n, res->k, tpb_dtype_name(res->dtype), res->iters,
            tpb_placement_name(res->placement), tpb_coll_label(res->coll), res->coll_bytes);
    for (int r = 0; r < res->world; r++)
        fprintf(f, "%s%d", r ? "," : "", tpb_result_world_rank(res, r));
    int kept = 0;
    for (int i = 0; i < res->iters; i++)
        kept += !keep || keep[i];
    fprintf(f, "]");
    if (res->kept_groups) { /* --gather parts: the positions written */
        fprintf(f, ",\"ranks_kept\":[");
        for (int j = 0; j < tpb_trace_rows(res); j++)
            fprintf(f, "%s%d", j ? "," : "", tpb_trace_position(res, j));
        fprintf(f, "]");
    }
    fprintf(f, ",\"iters_kept\":%d", kept);
    if (keep && kept < res->iters) { /* --trace-iters: which ones */
        fprintf(f, ",\"kept\":[");
        for (int i = 0, n = 0; i < res->iters; i++)
            if (keep[i])
                fprintf(f, "%s%d", n++ ? "," : "", i);
        fprintf(f, "]");
    }
    write_steps(f, step, res->iters, keep);
    fprintf(f, "}");
}

/* The config's instant event (named by its identity) and every rank's spans. */
static tpb_status_t write_config(FILE *f, const tpb_result_t *res, const tpb_mark_t *marks,
                                 double t0_us, const tpb_topo_t *topo, const unsigned char *keep,
                                 int per_run)
{
    int rows = tpb_trace_rows(res);
    double first = marks[0].c0;
    for (int j = 1; j < rows; j++)
        first = fmin(first, marks[(size_t)j * res->iters].c0);
    fprintf(f,
            "%s{\"name\":\"config %d: tp %d %s %s %ldx%ldx%ld\",\"ph\":\"i\",\"s\":\"g\","
            "\"pid\":1,\"tid\":0,\"ts\":%.3f}",
            per_run ? ",\n" : "", res->id, res->tp, tpb_config_key_split(&res->key),
            tpb_policy_name(res->policy), res->m, res->n, res->k, first - t0_us);
    if (!per_run)
        write_names(f, topo, res, 0);
    for (int j = 0; j < rows; j++) /* row j: position r, its group's marks from row j - q */
        if (write_rank(f, res, marks + (size_t)(j - j % res->tp) * res->iters, t0_us, topo,
                       tpb_trace_position(res, j), keep, per_run) != 0)
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the trace of config %d", res->id);
    return TPB_OK;
}

static tpb_status_t stream_status(FILE *f, const char *what)
{
    if (ferror(f))
        return tpb_err_set(TPB_ERR_IO, "cannot write %s: %s", what, strerror(errno));
    return TPB_OK;
}

tpb_status_t tpb_trace_write(FILE *f, const tpb_result_t *res, const tpb_mark_t *marks,
                             const double *step, double t0_us, const tpb_topo_t *topo,
                             const unsigned char *keep)
{
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":");
    write_info(f, res, step, keep);
    fprintf(f, ",\n\"traceEvents\":[\n");
    TPB_CHECK_RET(write_config(f, res, marks, t0_us, topo, keep, 0));
    fprintf(f, "\n]}\n");
    char what[64];
    snprintf(what, sizeof(what), "the trace of config %d", res->id);
    return stream_status(f, what);
}

void tpb_trace_run_begin(FILE *f, const tpb_topo_t *topo)
{
    fprintf(f, "{\"traceEvents\":[\n{\"name\":\"tpbal run\",\"ph\":\"i\",\"s\":\"g\",\"pid\":1,"
               "\"tid\":0,\"ts\":0.000}");
    write_names(f, topo, NULL, 1);
}

tpb_status_t tpb_trace_run_config(FILE *f, const tpb_result_t *res, const tpb_mark_t *marks,
                                  double t0_us, const tpb_topo_t *topo, const unsigned char *keep)
{
    TPB_CHECK_RET(write_config(f, res, marks, t0_us, topo, keep, 1));
    return stream_status(f, "the run's trace");
}

void tpb_trace_info(FILE *f, const tpb_result_t *res, const double *step, const unsigned char *keep)
{
    write_info(f, res, step, keep);
}

tpb_status_t tpb_trace_run_end(FILE *f, const char *infos)
{
    fprintf(
        f,
        "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"tpbal\",\"trace_per\":\"run\","
        "\"configs\":[%s]}}\n",
        infos);
    return stream_status(f, "the run's trace");
}
