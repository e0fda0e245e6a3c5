/* cores.c - cores shared by the ranks of a node (pure). */
#include "base/cores.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS (TPB_CORESET_MAX / 64)

void tpb_coreset_clear(tpb_coreset_t *s)
{
    memset(s, 0, sizeof(*s));
}

void tpb_coreset_add(tpb_coreset_t *s, int c)
{
    if (c >= 0 && c < TPB_CORESET_MAX)
        s->bits[c / 64] |= (uint64_t)1 << (c % 64);
}

int tpb_coreset_has(const tpb_coreset_t *s, int c)
{
    return c >= 0 && c < TPB_CORESET_MAX && (s->bits[c / 64] >> (c % 64) & 1);
}

int tpb_coreset_count(const tpb_coreset_t *s)
{
    int n = 0;
    for (int w = 0; w < WORDS; w++)
        n += __builtin_popcountll(s->bits[w]);
    return n;
}

static int overlaps(const tpb_coreset_t *a, const tpb_coreset_t *b)
{
    for (int w = 0; w < WORDS; w++)
        if (a->bits[w] & b->bits[w])
            return 1;
    return 0;
}

tpb_core_share_t tpb_core_share(const tpb_coreset_t *sets, int n, int me)
{
    tpb_core_share_t s = {0.0, 0, 1};
    if (me < 0 || me >= n)
        return s;
    for (int j = 0; j < n; j++)
        s.sharing += overlaps(&sets[me], &sets[j]);
    for (int w = 0; w < WORDS; w++) {
        uint64_t mine = sets[me].bits[w];
        while (mine) {
            int b = __builtin_ctzll(mine);
            mine &= mine - 1;
            int k = 0;
            for (int j = 0; j < n; j++)
                k += (int)(sets[j].bits[w] >> b & 1);
            s.share += 1.0 / k; /* k >= 1: the core is in its own set */
        }
    }
    if (s.sharing < 1) /* no core at all: alone, one thread */
        s.sharing = 1;
    int t = (int)floor(s.share + 1e-9);
    s.threads = t > 1 ? t : 1;
    return s;
}

static const char *const thread_vars[3] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                           "OMP_NUM_THREADS"};

tpb_threads_choice_t tpb_threads_choose(int asked, const char *const env[3], int auto_threads)
{
    if (asked > 0)
        return (tpb_threads_choice_t){asked, "--threads"};
    for (int i = 0; i < 3; i++) {
        if (!env || !env[i])
            continue;
        char *end;
        long v = strtol(env[i], &end, 10); /* "4" or OpenMP's "4,2": the first level */
        if (end != env[i] && v > 0 && v <= 1 << 20 && (*end == '\0' || *end == ','))
            return (tpb_threads_choice_t){(int)v, thread_vars[i]};
    }
    return (tpb_threads_choice_t){auto_threads > 0 ? auto_threads : 1, "auto"};
}

double tpb_cores_used(const tpb_core_share_t *s, int threads)
{
    return s->share > 0 && s->share < threads ? s->share : (double)threads;
}

void tpb_threads_note(const tpb_core_share_t *s, const tpb_threads_choice_t *c, const char *cpuset,
                      char *out, size_t cap)
{
    int fit = (int)ceil(s->share - 1e-9), mine = strcmp(c->from, "--threads") == 0;
    if (s->share > 0 && c->threads > (fit > 1 ? fit : 1))
        snprintf(out, cap,
                 "%d BLAS threads (%s) on a share of %.2f cores (cpus %s): oversubscribed, GEMMs "
                 "may run many times slower: %s%s%spass --threads %d",
                 c->threads, c->from, s->share, cpuset, mine ? "" : "unset ", mine ? "" : c->from,
                 mine ? "" : " or ", s->threads);
    else if (s->sharing > 1)
        snprintf(out, cap,
                 "cpus %s shared by %d ranks (not bound to cores of their own): %d BLAS "
                 "thread%s each (%s); bind for steadier timings: mpirun --bind-to core, "
                 "srun --cpu-bind=cores or --bind core",
                 cpuset, s->sharing, c->threads, c->threads == 1 ? "" : "s", c->from);
    else
        snprintf(out, cap, "%s", "");
}
