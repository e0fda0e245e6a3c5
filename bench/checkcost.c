/*
 * bench/checkcost [TP [CHUNKS]] - what --check's reference costs (run/layer_check.c:
 * the sampled rows and columns drawn again from the generator's global indices, quantised, and
 * their fp64 product), at the largest GEMMs of the presets, through tpbal's own functions and
 * without a device: each preset GEMM at TP degree TP (default 8) with CHUNKS chunks (default
 * 1), bf16, its even shards. Prints the samples and the seconds (best of 3); the generator uses
 * every CPU the process may (taskset -c 0 for one). Goal (issue 55): < 0.5 s at the largest
 * preset. Results: doc/METRICS.md, "Host time".
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "run/coll.h"
#include "run/layer.h"
#include "run/orient.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    const char *name;
    long m, n, k;
    tpb_split_t split;
} gemm_t;

int main(int argc, char **argv)
{
    int tp = argc > 1 ? atoi(argv[1]) : 8, chunks = argc > 2 ? atoi(argv[2]) : 1;
    if (tp < 1 || tp > 64 || chunks < 0 || chunks > 64) {
        fprintf(stderr, "usage: bench/checkcost [TP [CHUNKS]]\n");
        return 2;
    }
    static const gemm_t gemms[] = {
        {"llama3-8b gate_up_proj", 4096, 28672, 4096, TPB_SPLIT_COL},
        {"llama3-70b gate_up_proj", 4096, 57344, 8192, TPB_SPLIT_COL},
        {"llama3-405b gate_up_proj", 4096, 106496, 16384, TPB_SPLIT_COL},
        {"llama3-405b down_proj", 4096, 16384, 53248, TPB_SPLIT_ROW},
        {"8192^3 (gpu-check's timed GEMM)", 8192, 8192, 8192, TPB_SPLIT_COL},
    };
    printf("# --check's reference: tp %d, chunks %d, bf16, even shards; best of 3\n", tp, chunks);
    printf("# %-32s %7s %7s %9s\n", "GEMM", "rows", "columns", "seconds");
    for (size_t g = 0; g < sizeof(gemms) / sizeof(gemms[0]); g++) {
        const gemm_t *G = &gemms[g];
        long total = G->split == TPB_SPLIT_COL ? G->n : G->k, shards[64];
        for (int q = 0; q < tp; q++)
            shards[q] = total / tp + (q < total % tp);
        tpb_layer_desc_t d = {.orient = tpb_orient_of(G->split),
                              .coll = tpb_coll_of(G->split, TPB_COLL_ALLGATHER, TPB_SEQPAR_OFF),
                              .m = G->m,
                              .n = G->n,
                              .k = G->k,
                              .dtype = TPB_DTYPE_BF16,
                              .tp = tp,
                              .shards = shards,
                              .seed = 1,
                              .granularity = 64,
                              .chunks = chunks};
        long *rows = NULL, *cols = NULL;
        int nr = 0, nc = 0;
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            double t0 = now_s();
            if (tpb_check_samples(&d, &rows, &nr, &cols, &nc) != TPB_OK)
                return 1;
            double *ref = malloc((size_t)nr * (size_t)nc * sizeof(double));
            if (!ref || tpb_check_reference(&d, rows, nr, cols, nc, ref) != TPB_OK)
                return 1;
            double t = now_s() - t0;
            best = t < best ? t : best;
            free(ref);
            free(rows);
            free(cols);
        }
        printf("  %-32s %7d %7d %9.3f\n", G->name, nr, nc, best);
    }
    return 0;
}
