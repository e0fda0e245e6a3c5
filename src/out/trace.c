/* trace.c - Chrome trace-event JSON output of the timelines. */
#include "out/trace.h"

#include <math.h>

#include "base/buf.h"
#include "out/report.h"

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

static void span(FILE *f, const char *name, int pid, int tid, double ts, double end,
                 const char *args)
{
    fprintf(f,
            ",\n{\"name\":\"%s\",\"cat\":\"tpbal\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
            "\"ts\":%.3f,\"dur\":%.3f,\"args\":{%s}}",
            name, pid, tid, ts, end > ts ? end - ts : 0.0, args);
}

static void write_rank(FILE *f, const tpb_result_t *res, const tpb_mark_t *marks, double t0,
                       const tpb_topo_t *topo, int r)
{
    int iters = res->iters, tp = res->tp, g = r / tp, pid = topo->host_index[r];
    const tpb_rank_info_t *info = &res->info[r];
    for (int i = 0; i < iters; i++) {
        const tpb_mark_t *mk = &marks[(size_t)r * iters + i];
        double a = tpb_timeline_last_arrival(marks, tp, iters, g, i);
        double wait_end = fmin(a, mk->x1);
        char args[200];
        snprintf(args, sizeof(args), "\"config\":%d,\"iter\":%d,\"shard\":%.0f,\"flop\":%.6g",
                 res->id, i, info->shard, info->flop);
        span(f, "compute", pid, r, mk->c0 - t0, mk->c1 - t0, args);
        snprintf(args, sizeof(args), "\"config\":%d,\"iter\":%d,\"last_arrival_us\":%.3f", res->id,
                 i, a - t0);
        span(f, "wait", pid, r, mk->c1 - t0, wait_end - t0, args);
        span(f, "comm", pid, r, wait_end - t0, mk->x1 - t0, args);
    }
}

tpb_status_t tpb_trace_write(FILE *f, const tpb_result_t *res, const tpb_mark_t *marks,
                             double t0_us, const tpb_topo_t *topo)
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
    fprintf(f, "]},\n\"traceEvents\":[\n");
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
        write_rank(f, res, marks, t0_us, topo, r);
    fprintf(f, "\n]}\n");
    if (ferror(f))
        return tpb_err_set(TPB_ERR_IO, "cannot write the trace of config %d", res->id);
    return TPB_OK;
}
