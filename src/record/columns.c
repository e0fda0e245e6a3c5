/*
 * columns.c - the per-config fields of results.jsonl and results.csv from one list.
 *
 * TPB_CONFIG_COLUMNS lists every field once, in results.csv's column order:
 *   X(where, name, kind, value)
 *   where  J (the JSON record only), C (the CSV only), JC (both)
 *   kind   INT, NUM, STR, BYTES (a number the CSV writes without decimals), RINFO / RSTAT
 *          (a per-rank double of tpb_rank_info_t / tpb_rank_stats_t: a JSON array, ';'
 *          joined in the CSV), FN (json_<value>(b, r) writes its key(s) and value;
 *          csv_<value>(b, r) its CSV field(s), the name being their header)
 *   value  an expression of the result r, the field of RINFO / RSTAT, or FN's name
 * The JSON record, the CSV header and the CSV row are all made from it: adding a field
 * is one line here and its derivation (record/result.c). A new field of the config key is
 * written to the JSON record with none (key_rest).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "record/report.h"

#define TPB_CONFIG_COLUMNS(X)                                                                      \
    X(J, "type", STR, "config")                                                                    \
    X(JC, "id", INT, r->id)                                                                        \
    X(JC, "backend", STR, r->backend)                                                              \
    X(JC, "world_size", INT, r->world)                                                             \
    X(JC, "tp", INT, r->tp)                                                                        \
    X(JC, "split", STR, tpb_split_name(r->split))                                                  \
    X(JC, "sequence_parallel", STR, tpb_seqpar_name(r->seqpar))                                    \
    X(JC, "policy", STR, tpb_policy_name(r->policy))                                               \
    X(J, "placement", STR, tpb_placement_name(r->placement))                                       \
    X(J, "group_nodes", INT, r->max_group_nodes)                                                   \
    X(J, "world_ranks", FN, world_ranks)                                                           \
    X(JC, "col_collective", STR, tpb_coll_name(r->col_collective))                                 \
    X(JC, "shape", STR, r->shape_name)                                                             \
    X(JC, "m", INT, r->m)                                                                          \
    X(JC, "n", INT, r->n)                                                                          \
    X(JC, "k", INT, r->k)                                                                          \
    X(JC, "dtype", STR, tpb_dtype_name(r->dtype))                                                  \
    X(JC, "iters", INT, r->iters)                                                                  \
    X(J, "warmup", INT, r->warmup)                                                                 \
    X(J, "interleave_set", INT, r->interleave_set)                                                 \
    X(J, "interleave_rounds", INT, r->interleave_rounds)                                           \
    X(J, "budget_looks", FN, budget_looks)                                                         \
    X(JC, "block", INT, r->block)                                                                  \
    X(JC, "block_pos", INT, r->block_pos)                                                          \
    X(J, "overlap", FN, overlap)                                                                   \
    X(JC, "shards", FN, shards)                                                                    \
    X(JC, "speeds", RINFO, speed)                                                                  \
    X(JC, "speed_source", STR, tpb_speed_source_name(r->speed_source))                             \
    X(J, "speed_spread", RINFO, speed_spread)                                                      \
    X(J, "speed_samples", FN, speed_samples)                                                       \
    X(J, "emulate_mode", STR, tpb_emulate_mode_name(r->emulate_mode))                              \
    X(J, "emulate_asked", FN, emulate_asked)                                                       \
    X(J, "emulate_switch_iter", FN, emulate_switch)                                                \
    X(J, "emulate_achieved", RINFO, emulate_achieved)                                              \
    X(J, "marks_within_us", RINFO, marks_within_us)                                                \
    X(J, "fractions", RINFO, fraction)                                                             \
    X(J, "step_us", FN, step)                                                                      \
    X(C, "step_us_median", NUM, r->stats.step_med)                                                 \
    X(C, "step_us_p95", NUM, r->stats.step_p95)                                                    \
    X(C, "step_us_min", NUM, r->stats.step_min)                                                    \
    X(C, "step_us_max", NUM, r->stats.step_max)                                                    \
    X(JC, "compute_us", RSTAT, compute_med)                                                        \
    X(J, "compute_p95_us", RSTAT, compute_p95)                                                     \
    X(JC, "wait_us", RSTAT, wait_med)                                                              \
    X(JC, "comm_us", RSTAT, comm_med)                                                              \
    X(J, "wait_free_us", RSTAT, wait_free_med)                                                     \
    X(JC, "xfer_us", NUM, r->stats.xfer_med)                                                       \
    X(JC, "xfer_free_us", NUM, r->stats.xfer_free_med)                                             \
    X(JC, "lb", NUM, r->lb)                                                                        \
    X(JC, "u", NUM, r->u)                                                                          \
    X(JC, "e", NUM, r->e)                                                                          \
    X(JC, "e_het", NUM, r->e_het)                                                                  \
    X(J, "t1_us", NUM, r->t1_us)                                                                   \
    X(JC, "r", NUM, r->r)                                                                          \
    X(JC, "tflops", NUM, r->tflops)                                                                \
    X(J, "peak_tflops", FN, peak_tflops)                                                           \
    X(J, "pct_peak_rank", FN, pct_peak_rank)                                                       \
    X(J, "device_shared", INT, tpb_result_device_shared(r))                                        \
    X(J, "host_s", NUM, r->host_s)                                                                 \
    X(J, "inputs_s", NUM, r->inputs_s)                                                             \
    X(J, "trace", STR, r->trace)                                                                   \
    X(J, "disturbed", FN, disturbed)                                                               \
    X(C, "disturbed", STR, tpb_disturb_name(r->disturb.verdict))                                   \
    X(JC, "algbw_gbs", NUM, r->algbw_gbs)                                                          \
    X(JC, "busbw_gbs", NUM, r->busbw_gbs)                                                          \
    X(JC, "predicted_speedup", NUM, r->predicted_speedup)                                          \
    X(JC, "speedup", NUM, r->speedup)                                                              \
    X(JC, "last_most_often", INT, r->stats.straggler_rank)                                         \
    X(JC, "straggler_rank", INT, r->stats.straggler_rank) /* deprecated: last_most_often */        \
    X(J, "straggler", FN, straggler)                                                               \
    X(C, "straggler_last_frac", NUM, straggler_num(r, r->stats.straggler_frac))                    \
    X(C, "straggler_lateness_us", NUM, straggler_num(r, r->stats.straggler_late_us))               \
    X(JC, "nspikes", INT, r->stats.nspikes)                                                        \
    X(J, "spikes", FN, spikes)                                                                     \
    X(JC, "causality_violations", INT, r->stats.causality_violations)                              \
    X(JC, "check", STR, tpb_check_name(r->check))                                                  \
    X(JC, "max_rel_err", NUM, r->max_rel_err)                                                      \
    X(JC, "pct_peak", NUM, r->pct_peak)                                                            \
    X(JC, "whatif_step_us", NUM, r->whatif.step_us)                                                \
    X(JC, "slowdown", NUM, r->whatif.slowdown)                                                     \
    X(J, "whatif_straggler_step_us", NUM, r->whatif.straggler_step_us)                             \
    X(J, "slowdown_straggler", NUM, r->whatif.straggler_slowdown)                                  \
    X(JC, "comm_only", STR, r->comm_only ? "yes" : "no")                                           \
    X(JC, "collective", STR, tpb_coll_label(r->coll))                                              \
    X(JC, "comm_bytes", BYTES, r->coll_bytes)                                                      \
    X(C,                                                                                           \
      "overlap,chunks,t_gemm_us,t_comm_us,t_serial_us,t_overlap_us,exposed_us,"                    \
      "overlap_efficiency,interference,chunking_cost,overlap_speedup",                             \
      FN, overlap)                                                                                 \
    X(J, "rounds", FN, rounds)                                                                     \
    X(J, "step_samples", FN, step_samples)                                                         \
    X(J, "the key's other fields", FN, key_rest)

/* The config key's fields the list above writes itself (base/config_key.h): a field of the
 * key beyond these (a new dimension's row) is written at the end of the JSON record by
 * json_key_rest, under its JSON name, with no line here (a CSV column is a line above). */
enum {
    KEY_LISTED = TPB_KEY_TP | TPB_KEY_SPLIT | TPB_KEY_SEQPAR | TPB_KEY_POLICY | TPB_KEY_PLACEMENT |
                 TPB_KEY_SHAPE | TPB_KEY_SIZES | TPB_KEY_COMM_ONLY | TPB_KEY_CHUNKS
};

/* A straggler's figure, or NaN without one. */
static double straggler_num(const tpb_result_t *r, double v)
{
    return r->stats.straggler_rank >= 0 ? v : NAN;
}

/* ---- the fields written by a function ---- */

static void json_world_ranks(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_json_key(b, "world_ranks");
    tpb_json_arr_begin(b);
    for (int q = 0; q < r->world; q++)
        tpb_json_int(b, tpb_result_world_rank(r, q));
    tpb_json_arr_end(b);
}

/* --budget: the looks its set took (nothing without a budget). */
/* "disturbed": the steps judged one figure or not, and where two modes the modes (never their
 * midpoint). */
static void json_disturbed(tpb_buf_t *b, const tpb_result_t *r)
{
    const tpb_disturb_t *d = &r->disturb;
    tpb_json_key(b, "disturbed");
    tpb_json_obj_begin(b);
    tpb_json_kv_str(b, "verdict", tpb_disturb_name(d->verdict));
    tpb_json_kv_str(b, "why",
                    d->bimodal && d->spiky ? "bimodal, spiky"
                    : d->bimodal           ? "bimodal"
                    : d->spiky             ? "spiky"
                                           : NULL);
    tpb_json_kv_num(b, "p95_ratio", d->p95_ratio);
    tpb_json_key(b, "modes_us");
    if (d->bimodal) {
        tpb_json_arr_begin(b);
        tpb_json_num(b, d->low_us);
        tpb_json_num(b, d->high_us);
        tpb_json_arr_end(b);
    } else {
        tpb_json_str(b, NULL);
    }
    tpb_json_kv_num(b, "high_share", d->high_share);
    tpb_json_obj_end(b);
}

static void json_budget_looks(tpb_buf_t *b, const tpb_result_t *r)
{
    if (r->budget_looks > 0)
        tpb_json_kv_int(b, "budget_looks", r->budget_looks);
}

static void json_overlap(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_report_overlap_json(b, r);
}

static void csv_overlap(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_report_overlap_csv(b, r);
}

static void json_shards(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_json_key(b, "shards");
    tpb_json_arr_begin(b);
    for (int q = 0; q < r->world; q++)
        tpb_json_int(b, r->info[q].shard);
    tpb_json_arr_end(b);
}

static void csv_shards(tpb_buf_t *b, const tpb_result_t *r)
{
    for (int q = 0; q < r->world; q++)
        tpb_buf_printf(b, "%s%ld", q ? ";" : "", r->info[q].shard);
}

static void json_speed_samples(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_json_key(b, "speed_samples");
    tpb_json_arr_begin(b);
    for (int q = 0; q < r->world; q++)
        tpb_json_int(b, r->info[q].speed_samples);
    tpb_json_arr_end(b);
}

static void json_emulate_asked(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_json_key(b, "emulate_asked");
    tpb_json_arr_begin(b);
    for (int q = 0; q < r->world; q++)
        tpb_json_num(b, r->emulate_asked ? r->emulate_asked[tpb_result_world_rank(r, q)] : 1.0);
    tpb_json_arr_end(b);
}

static void json_emulate_switch(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_json_key(b, "emulate_switch_iter");
    r->emulate_switch_iter >= 0 ? tpb_json_int(b, r->emulate_switch_iter) : tpb_json_str(b, NULL);
}

static void json_step(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_json_key(b, "step_us");
    tpb_json_obj_begin(b);
    tpb_json_kv_num(b, "median", r->stats.step_med);
    tpb_json_kv_num(b, "p95", r->stats.step_p95);
    tpb_json_kv_num(b, "min", r->stats.step_min);
    tpb_json_kv_num(b, "max", r->stats.step_max);
    tpb_json_obj_end(b);
}

static void json_peak_tflops(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_json_key(b, "peak_tflops");
    tpb_json_arr_begin(b);
    for (int q = 0; q < r->world; q++)
        tpb_json_num(b, r->info[q].peak_gflops > 0 ? r->info[q].peak_gflops * 1e-3 : NAN);
    tpb_json_arr_end(b);
}

static void json_pct_peak_rank(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_json_key(b, "pct_peak_rank");
    tpb_json_arr_begin(b);
    for (int q = 0; q < r->world; q++)
        tpb_json_num(b, tpb_result_rank_pct_peak(r, q));
    tpb_json_arr_end(b);
}

static void json_key_rest(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_config_key_json(b, &r->key, TPB_KEY_ALL & ~(unsigned)KEY_LISTED);
}

static void json_straggler(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_json_key(b, "straggler");
    tpb_json_obj_begin(b);
    tpb_json_kv_int(b, "rank", r->stats.straggler_rank);
    tpb_json_kv_num(b, "last_frac", straggler_num(r, r->stats.straggler_frac));
    tpb_json_kv_num(b, "lateness_us", straggler_num(r, r->stats.straggler_late_us));
    tpb_json_obj_end(b);
}

static void json_spikes(tpb_buf_t *b, const tpb_result_t *r)
{
    const tpb_config_stats_t *s = &r->stats;
    tpb_json_key(b, "spikes");
    tpb_json_arr_begin(b);
    for (int i = 0; i < s->nspikes && i < TPB_MAX_SPIKES; i++) {
        tpb_json_obj_begin(b);
        tpb_json_kv_int(b, "iter", s->spikes[i].iter);
        tpb_json_kv_int(b, "rank", s->spikes[i].rank);
        tpb_json_kv_num(b, "step_us", s->spikes[i].step_us);
        tpb_json_obj_end(b);
    }
    tpb_json_arr_end(b);
}

/* The adaptive policy's rounds (empty for the other policies). */
static void json_rounds(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_json_key(b, "rounds");
    tpb_json_arr_begin(b);
    for (int i = 0; i < r->nrounds; i++) {
        const tpb_round_t *d = &r->rounds[i];
        tpb_json_obj_begin(b);
        tpb_json_kv_int(b, "iters", d->iters);
        tpb_json_kv_longs(b, "shards", r->round_shards + (size_t)i * r->world, (size_t)r->world);
        tpb_json_kv_num(b, "lb", d->lb);
        tpb_json_kv_num(b, "step_us", d->step_us);
        tpb_json_kv_num(b, "gain", d->gain);
        tpb_json_kv_str(b, "rebalanced", d->rebalanced ? "yes" : "no");
        tpb_json_obj_end(b);
    }
    tpb_json_arr_end(b);
}

static void json_step_samples(tpb_buf_t *b, const tpb_result_t *r)
{
    double samples[TPB_STEP_SAMPLES];
    int quantiles, n = tpb_result_step_samples(r, samples, &quantiles);
    tpb_json_kv_str(b, "step_samples", !n ? "none" : quantiles ? "quantiles" : "all");
    tpb_json_kv_nums(b, "step_samples_us", samples, (size_t)n);
}

/* ---- the kinds ---- */

/* A per-rank double at byte offset off of each of world entries of stride bytes. */
static double rank_field(const void *base, size_t stride, size_t off, int q)
{
    return *(const double *)((const char *)base + (size_t)q * stride + off);
}

static void json_ranks(tpb_buf_t *b, const char *key, const tpb_result_t *r, const void *base,
                       size_t stride, size_t off)
{
    tpb_json_key(b, key);
    tpb_json_arr_begin(b);
    for (int q = 0; q < r->world; q++)
        tpb_json_num(b, rank_field(base, stride, off, q));
    tpb_json_arr_end(b);
}

static void csv_ranks(tpb_buf_t *b, const tpb_result_t *r, const void *base, size_t stride,
                      size_t off)
{
    for (int q = 0; q < r->world; q++) {
        if (q)
            tpb_buf_puts(b, ";");
        tpb_csv_num(b, rank_field(base, stride, off, q));
    }
}

#define INFO_ARGS(f) r->info, sizeof(tpb_rank_info_t), offsetof(tpb_rank_info_t, f)
#define STAT_ARGS(f) r->ranks, sizeof(tpb_rank_stats_t), offsetof(tpb_rank_stats_t, f)

#define JSON_INT(name, v) tpb_json_kv_int(b, name, (long long)(v));
#define JSON_NUM(name, v) tpb_json_kv_num(b, name, (double)(v));
#define JSON_BYTES(name, v) tpb_json_kv_num(b, name, (double)(v));
#define JSON_STR(name, v) tpb_json_kv_str(b, name, v);
#define JSON_RINFO(name, f) json_ranks(b, name, r, INFO_ARGS(f));
#define JSON_RSTAT(name, f) json_ranks(b, name, r, STAT_ARGS(f));
#define JSON_FN(name, f) json_##f(b, r);
#define JSON_J(name, kind, v) JSON_##kind(name, v)
#define JSON_JC(name, kind, v) JSON_##kind(name, v)
#define JSON_C(name, kind, v)
#define JSON_COL(where, name, kind, v) JSON_##where(name, kind, v)

void tpb_report_json(tpb_buf_t *b, const tpb_result_t *r)
{
    tpb_json_obj_begin(b);
    TPB_CONFIG_COLUMNS(JSON_COL)
    tpb_json_obj_end(b);
    tpb_buf_puts(b, "\n");
}

#define CSV_SEP() tpb_buf_puts(b, first++ ? "," : "");
#define CSV_INT(v) tpb_buf_printf(b, "%lld", (long long)(v));
#define CSV_NUM(v) tpb_csv_num(b, (double)(v));
#define CSV_BYTES(v) tpb_buf_printf(b, "%.0f", (double)(v));
#define CSV_STR(v) tpb_csv_field(b, v);
#define CSV_RINFO(f) csv_ranks(b, r, INFO_ARGS(f));
#define CSV_RSTAT(f) csv_ranks(b, r, STAT_ARGS(f));
#define CSV_FN(f) csv_##f(b, r);
#define CSV_C(name, kind, v) CSV_SEP() CSV_##kind(v)
#define CSV_JC(name, kind, v) CSV_SEP() CSV_##kind(v)
#define CSV_J(name, kind, v)
#define CSV_COL(where, name, kind, v) CSV_##where(name, kind, v)

#define HEAD_C(name) tpb_buf_puts(b, first++ ? "," name : name);
#define HEAD_JC(name) HEAD_C(name)
#define HEAD_J(name)
#define HEAD_COL(where, name, kind, v) HEAD_##where(name)

void tpb_report_csv_header(tpb_buf_t *b)
{
    int first = 0;
    TPB_CONFIG_COLUMNS(HEAD_COL)
    tpb_buf_puts(b, "\n");
}

void tpb_report_csv_row(tpb_buf_t *b, const tpb_result_t *r)
{
    int first = 0;
    TPB_CONFIG_COLUMNS(CSV_COL)
    tpb_buf_puts(b, "\n");
}
