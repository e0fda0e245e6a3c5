/*
 * golden_model.c - the rules the C code and the Python tools both need, printed as one JSON
 * object for tests/python/test_golden.py to hold tpbal_model.py and tpbal_plan.py against
 * (so that a split, a FLOP count, a collective's factor or a placement lives in one place,
 * the C, and the Python copy is pinned to it):
 *   even      [dim, t, g, shards]            tpb_partition_even
 *   weighted  [dim, g, speeds, shards]       tpb_partition_weighted (over- and under-
 *                                            assignment, ties, the minimum shard)
 *   flops     [m, n, k, split, len, flop]    the orientation's GEMM FLOPs
 *   factor    [collective, t, busbw factor]  the collective table's
 *   collective [split, col_collective, sp, collective]
 *                                            tpb_coll_of over every combination
 *   bytes     [m, n, k, dtype, split, sp, S] the collective table's S
 *   spread    [host_index, order]            tpb_placement_order (spread)
 *   intervals [a, b, rounds, ratio, lo, hi, half, verdict, paired half, paired verdict]
 *                                            base/interval.h on constructed series (noise,
 *                                            slow stretches, drifts, ties, too few samples)
 *   t975      [df, t]                        tpb_interval_t975
 * Not a test itself: it prints, the Python test compares.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/interval.h"
#include "base/partition.h"
#include "base/placement.h"
#include "run/coll.h"
#include "run/orient.h"

static void longs(tpb_buf_t *b, const long *v, int n)
{
    tpb_json_arr_begin(b);
    for (int i = 0; i < n; i++)
        tpb_json_int(b, v[i]);
    tpb_json_arr_end(b);
}

static void even(tpb_buf_t *b)
{
    static const long dims[] = {8, 90, 1000, 4096, 4099, 8192, 14336};
    static const int tps[] = {1, 2, 3, 4, 7, 8};
    static const long gs[] = {1, 16, 64, 128};
    tpb_json_key(b, "even");
    tpb_json_arr_begin(b);
    for (size_t d = 0; d < sizeof(dims) / sizeof(*dims); d++)
        for (size_t t = 0; t < sizeof(tps) / sizeof(*tps); t++)
            for (size_t g = 0; g < sizeof(gs) / sizeof(*gs); g++) {
                long sh[8];
                if (tpb_partition_even(dims[d], tps[t], gs[g], sh) != TPB_OK)
                    continue;
                tpb_json_arr_begin(b);
                tpb_json_int(b, dims[d]);
                tpb_json_int(b, tps[t]);
                tpb_json_int(b, gs[g]);
                longs(b, sh, tps[t]);
                tpb_json_arr_end(b);
            }
    tpb_json_arr_end(b);
}

static void weighted(tpb_buf_t *b)
{
    /* speeds whose rounding over-assigns (a shard held at its minimum), under-assigns, ties
     * in the remainders, and the 1e6 ratio */
    static const double speeds[][4] = {
        {1, 1, 1, 1},   {1, 0.5, 0, 0}, {1, 1, 1, 0.001}, {3, 3, 3, 1},     {1, 2, 3, 4},
        {1e6, 1, 1, 1}, {0.7, 1, 0, 0}, {1, 1, 1, 3},     {2.5, 2.5, 5, 0}, {1, 1e-3, 1e-3, 0}};
    static const int nt[] = {4, 2, 4, 4, 4, 4, 2, 4, 3, 3};
    static const long dims[] = {4, 7, 90, 100, 1000, 4096, 4099, 14336};
    static const long gs[] = {1, 2, 64};
    tpb_json_key(b, "weighted");
    tpb_json_arr_begin(b);
    for (size_t s = 0; s < sizeof(nt) / sizeof(*nt); s++)
        for (size_t d = 0; d < sizeof(dims) / sizeof(*dims); d++)
            for (size_t g = 0; g < sizeof(gs) / sizeof(*gs); g++) {
                long sh[4];
                int t = nt[s];
                if (tpb_partition_weighted(dims[d], t, gs[g], speeds[s], sh, NULL) != TPB_OK)
                    continue;
                tpb_json_arr_begin(b);
                tpb_json_int(b, dims[d]);
                tpb_json_int(b, gs[g]);
                tpb_json_arr_begin(b);
                for (int r = 0; r < t; r++)
                    tpb_json_num(b, speeds[s][r]);
                tpb_json_arr_end(b);
                longs(b, sh, t);
                tpb_json_arr_end(b);
            }
    tpb_json_arr_end(b);
}

/* A layer description of one rank (the rest of the group's shards equal). */
static tpb_layer_desc_t desc(long m, long n, long k, tpb_split_t split, tpb_seqpar_t sp,
                             tpb_dtype_t dt, long *shards)
{
    return (tpb_layer_desc_t){.orient = tpb_orient_of(split),
                              .coll = tpb_coll_of(split, TPB_COLL_ALLGATHER, sp),
                              .m = m,
                              .n = n,
                              .k = k,
                              .dtype = dt,
                              .tp = 2,
                              .shards = shards};
}

static void layers(tpb_buf_t *b)
{
    static const long shapes[][3] = {{1, 4096, 4096}, {256, 1024, 512}, {8192, 14336, 4096}};
    static const tpb_dtype_t dts[] = {TPB_DTYPE_FP32, TPB_DTYPE_BF16, TPB_DTYPE_FP64};
    tpb_json_key(b, "flops");
    tpb_json_arr_begin(b);
    for (int s = 0; s < 3; s++)
        for (unsigned sp = TPB_SPLIT_ROW; sp <= TPB_SPLIT_COL; sp <<= 1) {
            long sh[2] = {96, 160};
            tpb_layer_desc_t d = desc(shapes[s][0], shapes[s][1], shapes[s][2], (tpb_split_t)sp,
                                      TPB_SEQPAR_OFF, TPB_DTYPE_FP32, sh);
            tpb_json_arr_begin(b);
            tpb_json_int(b, d.m);
            tpb_json_int(b, d.n);
            tpb_json_int(b, d.k);
            tpb_json_str(b, tpb_split_name((tpb_split_t)sp));
            tpb_json_int(b, 160);
            tpb_json_num(b, d.orient->flop(&d, 160));
            tpb_json_arr_end(b);
        }
    tpb_json_arr_end(b);
    tpb_json_key(b, "bytes");
    tpb_json_arr_begin(b);
    for (int s = 0; s < 3; s++)
        for (int dt = 0; dt < 3; dt++)
            for (unsigned sp = TPB_SPLIT_ROW; sp <= TPB_SPLIT_COL; sp <<= 1)
                for (unsigned q = TPB_SEQPAR_OFF; q <= TPB_SEQPAR_ON; q <<= 1) {
                    long sh[2] = {64, 64};
                    tpb_layer_desc_t d = desc(shapes[s][0], shapes[s][1], shapes[s][2],
                                              (tpb_split_t)sp, (tpb_seqpar_t)q, dts[dt], sh);
                    tpb_json_arr_begin(b);
                    tpb_json_int(b, d.m);
                    tpb_json_int(b, d.n);
                    tpb_json_int(b, d.k);
                    tpb_json_str(b, tpb_dtype_name(dts[dt]));
                    tpb_json_str(b, tpb_split_name((tpb_split_t)sp));
                    tpb_json_str(b, tpb_seqpar_name((tpb_seqpar_t)q));
                    tpb_json_num(b, d.coll->bytes(&d));
                    tpb_json_arr_end(b);
                }
    tpb_json_arr_end(b);
}

static void factors(tpb_buf_t *b)
{
    const tpb_coll_ops_t *colls[] = {&tpb_coll_allreduce, &tpb_coll_allgather,
                                     &tpb_coll_reduce_scatter, &tpb_coll_allgather_x};
    tpb_json_key(b, "factor");
    tpb_json_arr_begin(b);
    for (int c = 0; c < 4; c++)
        for (int t = 1; t <= 16; t *= 2) {
            tpb_json_arr_begin(b);
            tpb_json_str(b, tpb_coll_label(colls[c]->kind));
            tpb_json_int(b, t);
            tpb_json_num(b, colls[c]->busbw_factor(t));
            tpb_json_arr_end(b);
        }
    tpb_json_arr_end(b);
}

static void collectives(tpb_buf_t *b)
{
    tpb_json_key(b, "collective");
    tpb_json_arr_begin(b);
    for (int s = 0; s < 2; s++)
        for (int cc = 0; cc < 2; cc++)
            for (int sp = 0; sp < 2; sp++) {
                tpb_split_t split = s ? TPB_SPLIT_COL : TPB_SPLIT_ROW;
                tpb_coll_t col = cc ? TPB_COLL_ALLREDUCE : TPB_COLL_ALLGATHER;
                tpb_seqpar_t seq = sp ? TPB_SEQPAR_ON : TPB_SEQPAR_OFF;
                tpb_json_arr_begin(b);
                tpb_json_str(b, tpb_split_name(split));
                tpb_json_str(b, tpb_coll_name(col));
                tpb_json_str(b, tpb_seqpar_name(seq));
                tpb_json_str(b, tpb_coll_label(tpb_coll_of(split, col, seq)->kind));
                tpb_json_arr_end(b);
            }
    tpb_json_arr_end(b);
}

static void spread(tpb_buf_t *b)
{
    static const int hosts[][8] = {{0, 0, 1, 1, 0, 0, 1, 1},
                                   {0, 1, 2, 0, 1, 2, 0, 1},
                                   {0, 0, 0, 0, 1, 1, 1, 1},
                                   {0, 0, 0, 1, 1, 2, 2, 2}};
    tpb_json_key(b, "spread");
    tpb_json_arr_begin(b);
    for (int h = 0; h < 4; h++) {
        int order[8];
        tpb_placement_order(TPB_PLACE_SPREAD, hosts[h], 8, order);
        tpb_json_arr_begin(b);
        tpb_json_arr_begin(b);
        for (int r = 0; r < 8; r++)
            tpb_json_int(b, hosts[h][r]);
        tpb_json_arr_end(b);
        tpb_json_arr_begin(b);
        for (int r = 0; r < 8; r++)
            tpb_json_int(b, order[r]);
        tpb_json_arr_end(b);
        tpb_json_arr_end(b);
    }
    tpb_json_arr_end(b);
}

static void nums(tpb_buf_t *b, const double *v, int n)
{
    tpb_json_arr_begin(b);
    for (int i = 0; i < n; i++)
        tpb_json_num(b, v[i]);
    tpb_json_arr_end(b);
}

/* Series i of length n: a mix of noise, slow stretches and a drift, by a fixed recipe. */
static void series(int i, int n, double base, double *v)
{
    for (int j = 0; j < n; j++) {
        double noise = (double)((j * (5 + i) + i) % 13 - 6) / 6.0 * 0.02 * (1 + i % 3);
        double stretch = (j / (2 + i % 4)) % 3 == 0 && i % 2 ? 0.15 : 0.0;
        double drift = i % 5 == 4 ? 0.1 * j / n : 0.0;
        v[j] = base * (1.0 + noise + stretch + drift);
    }
}

static void intervals(tpb_buf_t *b)
{
    static const int lens[] = {2, 3, 5, 12, 20, 40, 101};
    tpb_json_key(b, "intervals");
    tpb_json_arr_begin(b);
    for (int i = 0; i < 10; i++)
        for (size_t l = 0; l < sizeof(lens) / sizeof(*lens); l++) {
            int n = lens[l], rounds = n / 4 < 3 ? 3 : n / 4 > 10 ? 10 : n / 4;
            double a[101], c[101];
            series(i, n, 1000.0, a);
            series(i + 3, n, i % 3 ? 800.0 : 1000.0, c);
            if (i == 7)
                memcpy(c, a, sizeof(a)); /* a series against itself */
            tpb_ratio_ci_t u = tpb_interval_ratio(a, (size_t)n, c, (size_t)n);
            tpb_ratio_ci_t p = tpb_interval_paired(a, c, (size_t)n, rounds);
            tpb_json_arr_begin(b);
            nums(b, a, n);
            nums(b, c, n);
            tpb_json_int(b, rounds);
            tpb_json_num(b, u.ratio);
            tpb_json_num(b, u.lo);
            tpb_json_num(b, isinf(u.hi) ? -1.0 : u.hi);
            tpb_json_num(b, isinf(u.half) ? -1.0 : u.half);
            tpb_json_str(b, tpb_verdict_name(tpb_interval_decide(u.ratio, u.half, 0.05)));
            tpb_json_num(b, isinf(p.half) ? -1.0 : p.half);
            tpb_json_str(b, tpb_verdict_name(tpb_interval_decide(p.ratio, p.half, 0.05)));
            tpb_json_arr_end(b);
        }
    tpb_json_arr_end(b);
    tpb_json_key(b, "t975");
    tpb_json_arr_begin(b);
    for (int df = 1; df <= 40; df++) {
        tpb_json_arr_begin(b);
        tpb_json_int(b, df);
        tpb_json_num(b, tpb_interval_t975(df));
        tpb_json_arr_end(b);
    }
    tpb_json_arr_end(b);
}

int main(void)
{
    tpb_buf_t b = TPB_BUF_INIT;
    tpb_json_obj_begin(&b);
    even(&b);
    weighted(&b);
    layers(&b);
    factors(&b);
    collectives(&b);
    spread(&b);
    intervals(&b);
    tpb_json_obj_end(&b);
    if (!tpb_buf_ok(&b))
        return 1;
    puts(tpb_buf_str(&b));
    tpb_buf_free(&b);
    return 0;
}
