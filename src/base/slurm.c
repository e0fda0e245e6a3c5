/* slurm.c - Slurm's environment and hostlists (pure). */
#include "base/slurm.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char empty[] = "";

/* A copy of variable name ("" if unset), whole, its control characters (ESC, BEL, ...) as
 * '?': it is printed in the header and written in the record; 0 without memory. */
static int copy_env(tpb_env_fn env, const char *name, char **dst)
{
    const char *v = env(name);
    *dst = v && *v ? strdup(v) : empty;
    for (char *p = *dst; *dst != empty && p && *p; p++)
        if ((unsigned char)*p < 32 || *p == 127)
            *p = '?';
    return *dst != NULL;
}

static int int_env(tpb_env_fn env, const char *name)
{
    const char *v = env(name);
    long x = v ? strtol(v, NULL, 10) : 0;
    return x > 0 && x < 1 << 30 ? (int)x : 0;
}

void tpb_slurm_free(tpb_slurm_t *s)
{
    char **f[] = {&s->job_id,   &s->step_id,        &s->cluster,       &s->partition,
                  &s->nodelist, &s->tasks_per_node, &s->gpus_per_task, &s->gpus_per_node};
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        if (*f[i] && *f[i] != empty)
            free(*f[i]);
        *f[i] = empty;
    }
}

tpb_status_t tpb_slurm_from_env(tpb_slurm_t *s, tpb_env_fn env)
{
    memset(s, 0, sizeof(*s));
    tpb_slurm_free(s);
    if (!env("SLURM_JOB_ID"))
        return TPB_OK;
    s->present = 1;
    int ok = copy_env(env, "SLURM_JOB_ID", &s->job_id) &
             copy_env(env, "SLURM_STEP_ID", &s->step_id) &
             copy_env(env, "SLURM_CLUSTER_NAME", &s->cluster) &
             copy_env(env, "SLURM_JOB_PARTITION", &s->partition) &
             copy_env(env, "SLURM_JOB_NODELIST", &s->nodelist) &
             copy_env(env, "SLURM_TASKS_PER_NODE", &s->tasks_per_node) &
             copy_env(env, "SLURM_GPUS_PER_TASK", &s->gpus_per_task) &
             copy_env(env, "SLURM_GPUS_PER_NODE", &s->gpus_per_node);
    if (!ok) {
        tpb_slurm_free(s);
        s->present = 0;
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for Slurm's environment");
    }
    s->ntasks = int_env(env, "SLURM_STEP_NUM_TASKS");
    if (!s->ntasks)
        s->ntasks = int_env(env, "SLURM_NTASKS");
    s->cpus_per_task = int_env(env, "SLURM_CPUS_PER_TASK");
    return TPB_OK;
}

/* The numbers of one range "03-07" (zero padding kept): lo, hi and the width; 0 if it is
 * not a range of at most TPB_SLURM_MAX_NODES numbers. */
static int parse_range(const char *range, size_t len, long *lo, long *hi, int *width)
{
    char buf[64];
    if (len == 0 || len >= sizeof(buf))
        return 0;
    memcpy(buf, range, len);
    buf[len] = '\0';
    char *dash = strchr(buf, '-');
    const char *a = buf, *b = dash ? dash + 1 : buf;
    if (dash)
        *dash = '\0';
    for (const char *p = a; *p; p++)
        if (!isdigit((unsigned char)*p))
            return 0;
    for (const char *p = b; *p; p++)
        if (!isdigit((unsigned char)*p))
            return 0;
    if (!*a || !*b || strlen(a) > 18 || strlen(b) > 18)
        return 0;
    *lo = strtol(a, NULL, 10);
    *hi = strtol(b, NULL, 10);
    *width = (int)strlen(a);
    return *hi >= *lo && *hi - *lo <= TPB_SLURM_MAX_NODES;
}

/* prefix followed by every expansion of item[len] (any number of bracket groups, as
 * "rack[1-2]-n[01-04]": the first group outermost, as scontrol show hostnames orders them;
 * like Slurm, no text after the last group)
 * into names from n on; the new count, or -1 if malformed, too long or more than max. */
static int expand_from(const char *prefix, const char *item, size_t len,
                       char (*names)[TPB_SLURM_NAME_LEN], int n, int max)
{
    size_t plen = strlen(prefix);
    const char *open = memchr(item, '[', len);
    if (!open) {
        if (plen + len == 0 || plen + len >= TPB_SLURM_NAME_LEN || n >= max)
            return -1;
        memcpy(names[n], prefix, plen);
        memcpy(names[n] + plen, item, len);
        names[n][plen + len] = '\0';
        return n + 1;
    }
    const char *close = memchr(open, ']', len - (size_t)(open - item));
    size_t hlen = (size_t)(open - item);
    if (!close || close == open + 1 || plen + hlen >= TPB_SLURM_NAME_LEN)
        return -1;
    const char *rest = close + 1;
    size_t rlen = len - (size_t)(rest - item);
    if (rlen && !memchr(rest, '[', rlen))
        return -1; /* text after the last group: Slurm's hostlists refuse it too */
    for (const char *p = open + 1; p < close && n >= 0;) {
        const char *comma = memchr(p, ',', (size_t)(close - p));
        const char *end = comma ? comma : close;
        long lo, hi;
        int width;
        if (!parse_range(p, (size_t)(end - p), &lo, &hi, &width))
            return -1;
        for (long v = lo; v <= hi && n >= 0; v++) {
            char head[TPB_SLURM_NAME_LEN];
            if (snprintf(head, sizeof(head), "%s%.*s%0*ld", prefix, (int)hlen, item, width, v) >=
                (int)sizeof(head))
                return -1;
            n = expand_from(head, rest, rlen, names, n, max);
        }
        p = end + 1;
    }
    return n;
}

int tpb_hostlist_expand(const char *list, char (*names)[TPB_SLURM_NAME_LEN], int max)
{
    int n = 0, depth = 0;
    const char *start = list;
    if (!list || !*list)
        return -1;
    for (const char *p = list;; p++) {
        if (*p == '[')
            depth++;
        else if (*p == ']')
            depth--;
        if (depth < 0 || depth > 1)
            return -1;
        if ((*p == ',' && depth == 0) || *p == '\0') {
            n = expand_from("", start, (size_t)(p - start), names, n, max);
            if (n < 0)
                return -1;
            if (*p == '\0')
                break;
            start = p + 1;
        }
    }
    return depth == 0 ? n : -1;
}

int tpb_slurm_missing_pmi(tpb_env_fn env, int *tasks)
{
    int n = int_env(env, "SLURM_STEP_NUM_TASKS");
    *tasks = n;
    if (n < 2 || !env("SLURM_PROCID"))
        return 0; /* not a multi-task srun step */
    static const char *const pmi[] = {"PMIX_RANK", "PMI_RANK", "PMI_FD", "PMI_ID",
                                      "OMPI_COMM_WORLD_RANK"};
    for (size_t i = 0; i < sizeof(pmi) / sizeof(pmi[0]); i++)
        if (env(pmi[i]))
            return 0;
    return 1;
}

int tpb_slurm_world_mismatch(const tpb_slurm_t *s, int world_size)
{
    return s->present && s->step_id[0] && s->ntasks > 1 && world_size == 1;
}
