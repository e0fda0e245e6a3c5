/* options_set.c - the values of the flags that take more than a plain parse. */
#include "cli/options_set.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/optparse.h"

tpb_status_t tpb_optset_int(const char *flag, const char *v, long min, long max, int *out)
{
    long x;
    TPB_CHECK_RET(tpb_opt_long(flag, v, min, max, &x));
    *out = (int)x;
    return TPB_OK;
}

tpb_status_t tpb_optset_tp(tpb_options_t *o, const char *flag, const char *v)
{
    long tmp[TPB_MAX_TP];
    int n;
    TPB_CHECK_RET(tpb_opt_long_list(flag, v, 1, TPB_MAX_TP_DEGREE, tmp, TPB_MAX_TP, &n));
    for (int i = 0; i < n; i++)
        o->tp[i] = (int)tmp[i];
    o->ntp = n;
    return TPB_OK;
}

tpb_status_t tpb_optset_chunks(tpb_options_t *o, const char *flag, const char *v)
{
    long tmp[TPB_MAX_CHUNKS];
    int n;
    TPB_CHECK_RET(tpb_opt_long_list(flag, v, 1, TPB_MAX_CHUNKS, tmp, TPB_MAX_CHUNKS, &n));
    for (int i = 0; i < n; i++)
        o->chunks[i] = (int)tmp[i];
    o->nchunks = n;
    return TPB_OK;
}

tpb_status_t tpb_optset_gpu_map(tpb_options_t *o, const char *flag, const char *v)
{
    long tmp[TPB_MAX_SHAPES];
    int n;
    TPB_CHECK_RET(tpb_opt_long_list(flag, v, 0, 65535, tmp, TPB_MAX_SHAPES, &n));
    int *map = malloc((size_t)n * sizeof(*map));
    if (!map)
        return tpb_err_set(TPB_ERR_NOMEM, "%s: out of memory", flag);
    for (int i = 0; i < n; i++)
        map[i] = (int)tmp[i];
    free(o->gpu_map);
    o->gpu_map = map;
    o->ngpu_map = n;
    return TPB_OK;
}

/* Emulation factors in [TPB_MIN_EMULATE, 1], as --help says. */
static tpb_status_t check_factors(const char *flag, const double *f, int n)
{
    for (int i = 0; i < n; i++)
        if (f[i] < TPB_MIN_EMULATE || f[i] > 1.0)
            return tpb_err_set(TPB_ERR_INVALID,
                               "%s: factor %g of rank %d is outside [%g, 1] (1 = full speed)", flag,
                               f[i], i, TPB_MIN_EMULATE);
    return TPB_OK;
}

tpb_status_t tpb_optset_emulate(tpb_options_t *o, const char *flag, const char *v)
{
    TPB_CHECK_RET(tpb_opt_double_list(flag, v, &o->emulate, &o->nemulate));
    return check_factors(flag, o->emulate, o->nemulate);
}

/* ITER:F0,F1,...: the iteration of the run, then one factor per rank. */
tpb_status_t tpb_optset_schedule(tpb_options_t *o, const char *flag, const char *v)
{
    const char *colon = strchr(v, ':');
    char iter[32];
    if (!colon || (size_t)(colon - v) >= sizeof(iter))
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected ITER:F0,F1,... (e.g. 40:1,0.5)",
                           flag, tpb_err_value(v));
    memcpy(iter, v, (size_t)(colon - v));
    iter[colon - v] = '\0';
    TPB_CHECK_RET(tpb_opt_long(flag, iter, 0, LONG_MAX / 4, &o->sched_iter));
    TPB_CHECK_RET(tpb_opt_double_list(flag, colon + 1, &o->sched, &o->nsched));
    return check_factors(flag, o->sched, o->nsched);
}

/* --trace-iters N|all|auto */
tpb_status_t tpb_optset_trace_iters(tpb_options_t *o, const char *flag, const char *v)
{
    if (strcmp(v, "all") == 0 || strcmp(v, "auto") == 0) {
        o->trace_iters = v[1] == 'l' ? -1 : 0;
        return TPB_OK;
    }
    long n;
    if (tpb_opt_long(flag, v, 1, TPB_MAX_ITERS, &n) != TPB_OK)
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s '%s': expected all, auto or an integer from 1 to %ld", flag,
                           tpb_err_value(v), TPB_MAX_ITERS);
    o->trace_iters = (int)n;
    return TPB_OK;
}

tpb_status_t tpb_optset_seconds(const char *flag, const char *v, double min, double max,
                                double *out)
{
    char *end = NULL;
    double x = v && *v ? strtod(v, &end) : NAN, unit = 1.0;
    if (end && *end) {
        unit = strcmp(end, "s") == 0   ? 1.0
               : strcmp(end, "m") == 0 ? 60.0
               : strcmp(end, "h") == 0 ? 3600.0
                                       : NAN;
    }
    x *= unit;
    if (!isfinite(x) || x < min || x > max)
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s '%s': expected seconds from %g to %g (a number, or with s, m or h)",
                           flag, tpb_err_value(v) ? v : "", min, max);
    *out = x;
    return TPB_OK;
}
