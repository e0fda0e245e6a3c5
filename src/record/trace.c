/* trace.c - Chrome trace-event JSON output of the timelines. */
#include "record/trace.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "base/buf.h"
#include "record/report.h"

void tpb_trace_name(int id, char *out, size_t cap)
{
    snprintf(out, cap, "trace-%03d.json", id);
}

static void write_names(FILE *f, const tpb_topo_t *topo, const tpb_result_t *res)
{
    int world = res->world;
    for (int h = 0; h < topo->nhosts; h++) {
        for (int r = 0; r < world; r++) {
            if (topo->host_index[r] != h)
                continue;
            tpb_buf_t b = TPB_BUF_INIT;
            tpb_json_str(&b, topo->hosts[r]);
            fprintf(f,
                    ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,"
                    "\"args\":{\"name\":%s}}",
                    h, tpb_buf_str(&b));
            tpb_buf_free(&b);
            break;
        }
    }
    for (int r = 0; r < world; r++) {
        int h = topo->host_index[r];
        fprintf(f,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                "\"args\":{\"name\":\"rank %d\"}}",
                h, r, tpb_result_world_rank(res, r)); /* tid: position; name: world rank */
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

static void write_rank(FILE *f, const tpb_result_t *res, const tpb_mark_t *marks, double t0,
                       const tpb_topo_t *topo, int r, const unsigned char *keep)
{
    int iters = res->iters, tp = res->tp, g = r / tp;
    const tpb_rank_info_t *info = &res->info[r];
    char head[96], comp_args[96], line[1024];
    snprintf(head, sizeof(head),
             "\",\"cat\":\"tpbal\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", topo->host_index[r],
             r);
    snprintf(comp_args, sizeof(comp_args), ",\"shard\":%ld,\"flop\":%.6g}}", info->shard,
             info->flop);
    for (int i = 0; i < iters; i++) {
        if (keep && !keep[i])
            continue;
        const tpb_mark_t *mk = &marks[(size_t)r * iters + i];
        double a = tpb_timeline_last_arrival(marks, tp, iters, g, i);
        double wait_end = fmin(a, mk->x1);
        char *p = span(line, "compute", head, mk->c0 - t0, mk->c1 - t0, res->id, i);
        p = put_str(p, comp_args);
        for (int k = 0; k < 2; k++) {
            p = k == 0 ? span(p, "wait", head, mk->c1 - t0, wait_end - t0, res->id, i)
                       : span(p, "comm", head, wait_end - t0, mk->x1 - t0, res->id, i);
            p = put_str(p, ",\"last_arrival_us\":");
            p = put_fix3(p, a - t0);
            p = put_str(p, "}}");
        }
        fwrite(line, 1, (size_t)(p - line), f);
    }
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

tpb_status_t tpb_trace_write(FILE *f, const tpb_result_t *res, const tpb_mark_t *marks,
                             const double *step, double t0_us, const tpb_topo_t *topo,
                             const unsigned char *keep)
{
    fprintf(f,
            "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"tpbal\",\"config\":%d,"
            "\"tp\":%d,\"split\":\"%s\",\"policy\":\"%s\",\"m\":%ld,\"n\":%ld,\"k\":%ld,"
            "\"dtype\":\"%s\",\"iters\":%d,\"placement\":\"%s\",\"world_ranks\":[",
            res->id, res->tp, tpb_split_name(res->split), tpb_policy_name(res->policy), res->m,
            res->n, res->k, tpb_dtype_name(res->dtype), res->iters,
            tpb_placement_name(res->placement));
    for (int r = 0; r < res->world; r++)
        fprintf(f, "%s%d", r ? "," : "", tpb_result_world_rank(res, r));
    int kept = 0;
    for (int i = 0; i < res->iters; i++)
        kept += !keep || keep[i];
    fprintf(f, "],\"iters_kept\":%d", kept);
    if (keep && kept < res->iters) { /* --trace-iters: which ones */
        fprintf(f, ",\"kept\":[");
        for (int i = 0, n = 0; i < res->iters; i++)
            if (keep[i])
                fprintf(f, "%s%d", n++ ? "," : "", i);
        fprintf(f, "]");
    }
    write_steps(f, step, res->iters, keep);
    fprintf(f, "},\n\"traceEvents\":[\n");
    double first = marks[0].c0;
    for (int r = 1; r < res->world; r++)
        first = fmin(first, marks[(size_t)r * res->iters].c0);
    fprintf(f,
            "{\"name\":\"config %d: tp %d %s %s %ldx%ldx%ld\",\"ph\":\"i\",\"s\":\"g\","
            "\"pid\":0,\"tid\":0,\"ts\":%.3f}",
            res->id, res->tp, tpb_split_name(res->split), tpb_policy_name(res->policy), res->m,
            res->n, res->k, first - t0_us);
    write_names(f, topo, res);
    for (int r = 0; r < res->world; r++)
        write_rank(f, res, marks, t0_us, topo, r, keep);
    fprintf(f, "\n]}\n");
    if (ferror(f))
        return tpb_err_set(TPB_ERR_IO, "cannot write the trace of config %d: %s", res->id,
                           strerror(errno));
    return TPB_OK;
}
