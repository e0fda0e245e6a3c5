/* options.c - the option table and command-line parsing into tpb_options_t (pure). */
#include "optparse.h"

#include <stdlib.h>
#include <string.h>

void tpb_options_init(tpb_options_t *o)
{
    memset(o, 0, sizeof(*o));
    o->backend = TPB_BACKEND_AUTO;
    o->iters = 20;
    o->warmup = 5;
    o->timeline = 1;
    o->inject_delay.rank = -1;
    o->inject_clock.rank = -1;
    o->seed = 42;
    o->timeout_s = 300.0;
}

void tpb_options_free(tpb_options_t *o)
{
    free(o->speeds);
    free(o->emulate);
    free(o->gpu_map);
    o->speeds = o->emulate = NULL;
    o->gpu_map = NULL;
}

/* ---- the option table ---- */

enum {
    OPT_BACKEND,
    OPT_TP,
    OPT_SPLIT,
    OPT_POLICY,
    OPT_M,
    OPT_N,
    OPT_K,
    OPT_SHAPE,
    OPT_PRESET,
    OPT_DTYPE,
    OPT_ITERS,
    OPT_WARMUP,
    OPT_SPEEDS,
    OPT_CALFILE,
    OPT_EMULATE,
    OPT_GRAN,
    OPT_CHECK,
    OPT_OUT,
    OPT_COLCOLL,
    OPT_COMM,
    OPT_GPUMAP,
    OPT_BIND,
    OPT_TIMEOUT,
    OPT_TIMELINE,
    OPT_INJ_DELAY,
    OPT_INJ_CLOCK,
    OPT_SEED,
    OPT_QUIET,
    OPT_HELP,
    OPT_VERSION
};

typedef struct {
    const char *name;
    char short_name;
    int has_arg;
    int id;
} opt_spec;

static const opt_spec opt_table[] = {
    {"backend", 0, 1, OPT_BACKEND},
    {"tp", 't', 1, OPT_TP},
    {"split", 's', 1, OPT_SPLIT},
    {"policy", 'p', 1, OPT_POLICY},
    {"m", 'm', 1, OPT_M},
    {"n", 'n', 1, OPT_N},
    {"k", 'k', 1, OPT_K},
    {"shape", 0, 1, OPT_SHAPE},
    {"preset", 0, 1, OPT_PRESET},
    {"dtype", 'd', 1, OPT_DTYPE},
    {"iters", 'i', 1, OPT_ITERS},
    {"warmup", 'w', 1, OPT_WARMUP},
    {"speeds", 0, 1, OPT_SPEEDS},
    {"calibration-file", 0, 1, OPT_CALFILE},
    {"emulate-speed", 0, 1, OPT_EMULATE},
    {"granularity", 'g', 1, OPT_GRAN},
    {"check", 'c', 0, OPT_CHECK},
    {"out", 'o', 1, OPT_OUT},
    {"col-collective", 0, 1, OPT_COLCOLL},
    {"comm", 0, 1, OPT_COMM},
    {"gpu-map", 0, 1, OPT_GPUMAP},
    {"bind", 0, 1, OPT_BIND},
    {"timeout", 0, 1, OPT_TIMEOUT},
    {"timeline", 0, 1, OPT_TIMELINE},
    {"inject-delay", 0, 1, OPT_INJ_DELAY},
    {"inject-clock-offset", 0, 1, OPT_INJ_CLOCK},
    {"seed", 0, 1, OPT_SEED},
    {"quiet", 'q', 0, OPT_QUIET},
    {"help", 'h', 0, OPT_HELP},
    {"version", 'V', 0, OPT_VERSION},
};

static const char *const backend_names[] = {"auto", "host", "cuda"};
static const char *const split_names[] = {"row", "col"};
static const unsigned split_bits[] = {TPB_SPLIT_ROW, TPB_SPLIT_COL};
static const char *const policy_names[] = {"even", "weighted"};
static const unsigned policy_bits[] = {TPB_POLICY_EVEN, TPB_POLICY_WEIGHTED};
static const char *const colcoll_names[] = {"allgather", "allreduce"};
static const char *const comm_names[] = {"nccl", "mpi"};
static const char *const bind_names[] = {"none", "gpu"};
static const char *const onoff_names[] = {"off", "on"};

static tpb_status_t set_int(const char *flag, const char *v, long min, int *out)
{
    long x;
    TPB_CHECK_RET(tpb_opt_long(flag, v, min, &x));
    if (x > 1000000000L)
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': too large", flag, v);
    *out = (int)x;
    return TPB_OK;
}

static tpb_status_t set_tp(tpb_options_t *o, const char *flag, const char *v)
{
    long tmp[TPB_MAX_TP];
    int n;
    TPB_CHECK_RET(tpb_opt_long_list(flag, v, 1, tmp, TPB_MAX_TP, &n));
    for (int i = 0; i < n; i++)
        o->tp[i] = (int)tmp[i];
    o->ntp = n;
    return TPB_OK;
}

static tpb_status_t set_gpu_map(tpb_options_t *o, const char *flag, const char *v)
{
    long tmp[TPB_MAX_SHAPES];
    int n;
    TPB_CHECK_RET(tpb_opt_long_list(flag, v, 0, tmp, TPB_MAX_SHAPES, &n));
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

static tpb_status_t apply(tpb_options_t *o, int id, const char *flag, const char *v)
{
    int x = 0;
    switch (id) {
    case OPT_BACKEND:
        TPB_CHECK_RET(tpb_opt_choice(flag, v, backend_names, 3, "auto, host or cuda", &x));
        o->backend = (tpb_backend_kind_t)x;
        return TPB_OK;
    case OPT_TP: return set_tp(o, flag, v);
    case OPT_SPLIT:
        return tpb_opt_name_set(flag, v, split_names, split_bits, 2,
                                "row and/or col (e.g. row,col)", &o->splits);
    case OPT_POLICY:
        return tpb_opt_name_set(flag, v, policy_names, policy_bits, 2,
                                "even and/or weighted (e.g. even,weighted)", &o->policies);
    case OPT_M: return tpb_opt_long_list(flag, v, 1, o->m_list, TPB_MAX_SHAPES, &o->nm);
    case OPT_N: return tpb_opt_long_list(flag, v, 1, o->n_list, TPB_MAX_SHAPES, &o->nn);
    case OPT_K: return tpb_opt_long_list(flag, v, 1, o->k_list, TPB_MAX_SHAPES, &o->nk);
    case OPT_SHAPE: return tpb_opt_shapes(flag, v, o->shapes, &o->nshapes);
    case OPT_PRESET: return tpb_opt_string(flag, v, o->preset, sizeof(o->preset));
    case OPT_DTYPE: o->dtype_set = 1; return tpb_dtype_parse(v, &o->dtype);
    case OPT_ITERS: return set_int(flag, v, 1, &o->iters);
    case OPT_WARMUP: return set_int(flag, v, 0, &o->warmup);
    case OPT_SPEEDS: return tpb_opt_double_list(flag, v, &o->speeds, &o->nspeeds);
    case OPT_CALFILE:
        return tpb_opt_string(flag, v, o->calibration_file, sizeof(o->calibration_file));
    case OPT_EMULATE: return tpb_opt_double_list(flag, v, &o->emulate, &o->nemulate);
    case OPT_GRAN: return tpb_opt_long(flag, v, 1, &o->granularity);
    case OPT_CHECK: o->check = 1; return TPB_OK;
    case OPT_OUT: return tpb_opt_string(flag, v, o->out_dir, sizeof(o->out_dir));
    case OPT_COLCOLL:
        TPB_CHECK_RET(tpb_opt_choice(flag, v, colcoll_names, 2, "allgather or allreduce", &x));
        o->col_collective = (tpb_colcoll_t)x;
        return TPB_OK;
    case OPT_COMM:
        TPB_CHECK_RET(tpb_opt_choice(flag, v, comm_names, 2, "nccl or mpi", &x));
        o->comm = (tpb_comm_kind_t)x;
        return TPB_OK;
    case OPT_GPUMAP: return set_gpu_map(o, flag, v);
    case OPT_BIND: return tpb_opt_choice(flag, v, bind_names, 2, "none or gpu", &o->bind_gpu);
    case OPT_TIMEOUT:
        TPB_CHECK_RET(tpb_opt_double(flag, v, &o->timeout_s));
        if (o->timeout_s < 0)
            return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected seconds >= 0", flag, v);
        return TPB_OK;
    case OPT_TIMELINE: return tpb_opt_choice(flag, v, onoff_names, 2, "on or off", &o->timeline);
    case OPT_INJ_DELAY: return tpb_opt_inject(flag, v, 1, &o->inject_delay);
    case OPT_INJ_CLOCK: return tpb_opt_inject(flag, v, 0, &o->inject_clock);
    case OPT_SEED: {
        long s;
        TPB_CHECK_RET(tpb_opt_long(flag, v, 0, &s));
        o->seed = (uint64_t)s;
        return TPB_OK;
    }
    case OPT_QUIET: o->quiet = 1; return TPB_OK;
    case OPT_HELP: o->help = 1; return TPB_OK;
    case OPT_VERSION: o->version = 1; return TPB_OK;
    }
    return tpb_err_set(TPB_ERR_INVALID, "%s: internal error (unhandled option)", flag);
}

static const opt_spec *find_long(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(opt_table) / sizeof(opt_table[0]); i++)
        if (strlen(opt_table[i].name) == len && strncmp(opt_table[i].name, name, len) == 0)
            return &opt_table[i];
    return NULL;
}

static const opt_spec *find_short(char c)
{
    for (size_t i = 0; i < sizeof(opt_table) / sizeof(opt_table[0]); i++)
        if (opt_table[i].short_name == c)
            return &opt_table[i];
    return NULL;
}

tpb_status_t tpb_options_parse(tpb_options_t *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const opt_spec *spec = NULL;
        const char *value = NULL;
        char flag[80];
        if (strncmp(arg, "--", 2) == 0 && arg[2]) {
            const char *eq = strchr(arg + 2, '=');
            size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
            spec = find_long(arg + 2, len);
            value = eq ? eq + 1 : NULL;
        } else if (arg[0] == '-' && arg[1] && !arg[2]) {
            spec = find_short(arg[1]);
        }
        if (!spec)
            return tpb_err_set(TPB_ERR_INVALID, "unknown option '%s': see tpbal --help", arg);
        snprintf(flag, sizeof(flag), "%s%s", spec->name[1] ? "--" : "-", spec->name);
        if (spec->has_arg && !value) {
            if (i + 1 >= argc)
                return tpb_err_set(TPB_ERR_INVALID, "%s needs a value: see tpbal --help", flag);
            value = argv[++i];
        } else if (!spec->has_arg && value) {
            return tpb_err_set(TPB_ERR_INVALID, "%s takes no value", flag);
        }
        TPB_CHECK_RET(apply(o, spec->id, flag, value));
    }
    return TPB_OK;
}
