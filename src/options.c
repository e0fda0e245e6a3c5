/* options.c - command-line parsing into tpb_options_t (pure: no MPI, no files). */
#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tpb_config.h"

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

/* ---- value parsers: each names the flag and the accepted values on error ---- */

static tpb_status_t parse_long(const char *flag, const char *s, long min, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < min)
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected an integer >= %ld", flag, s, min);
    *out = v;
    return TPB_OK;
}

static tpb_status_t parse_double(const char *flag, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v))
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected a number", flag, s);
    *out = v;
    return TPB_OK;
}

/* Count the comma-separated items of s (an empty item is an error for the caller). */
static int count_items(const char *s)
{
    int n = 1;
    for (; *s; s++)
        n += *s == ',';
    return n;
}

/* Call fn(flag, item, ctx, index) for each comma-separated item of s. */
typedef tpb_status_t (*item_fn)(const char *flag, const char *item, void *ctx, int index);

static tpb_status_t for_each_item(const char *flag, const char *s, item_fn fn, void *ctx)
{
    char buf[4096];
    if (strlen(s) >= sizeof(buf))
        return tpb_err_set(TPB_ERR_INVALID, "%s: list too long", flag);
    strcpy(buf, s);
    int idx = 0;
    char *save = NULL;
    if (buf[0] == '\0' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': empty item in the list", flag, s);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        TPB_CHECK_RET(fn(flag, tok, ctx, idx++));
    return TPB_OK;
}

static tpb_status_t positive_double_item(const char *flag, const char *item, void *ctx, int i)
{
    double v;
    TPB_CHECK_RET(parse_double(flag, item, &v));
    if (v <= 0.0)
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': every value must be > 0", flag, item);
    ((double *)ctx)[i] = v;
    return TPB_OK;
}

static tpb_status_t parse_double_list(const char *flag, const char *s, double **out, int *n)
{
    int cnt = count_items(s);
    double *v = calloc((size_t)cnt, sizeof(*v));
    if (!v)
        return tpb_err_set(TPB_ERR_NOMEM, "%s: out of memory", flag);
    tpb_status_t st = for_each_item(flag, s, positive_double_item, v);
    if (st != TPB_OK) {
        free(v);
        return st;
    }
    free(*out);
    *out = v;
    *n = cnt;
    return TPB_OK;
}

typedef struct {
    long *v;
    long min;
} long_list_ctx;

static tpb_status_t long_item(const char *flag, const char *item, void *ctx, int i)
{
    long_list_ctx *c = ctx;
    return parse_long(flag, item, c->min, &c->v[i]);
}

static tpb_status_t parse_long_list(const char *flag, const char *s, long min, long *out, int max,
                                    int *n)
{
    int cnt = count_items(s);
    if (cnt > max)
        return tpb_err_set(TPB_ERR_INVALID, "%s: at most %d values", flag, max);
    long tmp[TPB_MAX_SHAPES];
    long_list_ctx c = {tmp, min};
    TPB_CHECK_RET(for_each_item(flag, s, long_item, &c));
    memcpy(out, tmp, (size_t)cnt * sizeof(*out));
    *n = cnt;
    return TPB_OK;
}

typedef struct {
    const char *const *names;
    const unsigned *bits;
    int count;
    const char *accepted;
    unsigned mask;
} name_set_ctx;

static tpb_status_t name_item(const char *flag, const char *item, void *ctx, int i)
{
    name_set_ctx *c = ctx;
    for (int j = 0; j < c->count; j++) {
        if (strcmp(item, c->names[j]) == 0) {
            c->mask |= c->bits[j];
            return TPB_OK;
        }
    }
    return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected %s", flag, item, c->accepted);
}

static tpb_status_t parse_name_set(const char *flag, const char *s, const char *const *names,
                                   const unsigned *bits, int count, const char *accepted,
                                   unsigned *mask)
{
    name_set_ctx c = {names, bits, count, accepted, 0};
    TPB_CHECK_RET(for_each_item(flag, s, name_item, &c));
    *mask = c.mask;
    return TPB_OK;
}

/* Parse one name of names[count] into *out. */
static tpb_status_t parse_choice(const char *flag, const char *s, const char *const *names,
                                 int count, const char *accepted, int *out)
{
    for (int j = 0; j < count; j++) {
        if (strcmp(s, names[j]) == 0) {
            *out = j;
            return TPB_OK;
        }
    }
    return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected %s", flag, s, accepted);
}

tpb_status_t tpb_shape_parse(const char *s, tpb_shape_t *shape)
{
    char *end;
    long v[3];
    const char *p = s;
    for (int i = 0; i < 3; i++) {
        errno = 0;
        v[i] = strtol(p, &end, 10);
        if (errno || end == p || v[i] < 1 || (i < 2 && *end != 'x') || (i == 2 && *end))
            return tpb_err_set(TPB_ERR_INVALID,
                               "--shape '%s': expected MxNxK with positive integers, "
                               "e.g. 4096x4096x4096",
                               s);
        p = end + 1;
    }
    memset(shape, 0, sizeof(*shape));
    shape->m = v[0];
    shape->n = v[1];
    shape->k = v[2];
    return TPB_OK;
}

typedef struct {
    tpb_shape_t *shapes;
} shape_list_ctx;

static tpb_status_t shape_item(const char *flag, const char *item, void *ctx, int i)
{
    (void)flag;
    return tpb_shape_parse(item, &((shape_list_ctx *)ctx)->shapes[i]);
}

/* RANK:MICROSECONDS[:EVERY] (every_allowed) or RANK:MICROSECONDS */
static tpb_status_t parse_inject(const char *flag, const char *s, int every_allowed,
                                 tpb_inject_t *inj)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", s);
    char *save = NULL, *f[3] = {0};
    int nf = 0;
    for (char *tok = strtok_r(buf, ":", &save); tok && nf < 3; tok = strtok_r(NULL, ":", &save))
        f[nf++] = tok;
    long rank, every = 1;
    double us;
    if (nf < 2 || (nf == 3 && !every_allowed) || strtok_r(NULL, ":", &save) ||
        parse_long(flag, f[0], 0, &rank) != TPB_OK || parse_double(flag, f[1], &us) != TPB_OK ||
        (nf == 3 && parse_long(flag, f[2], 1, &every) != TPB_OK) || (every_allowed && us < 0))
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected RANK:MICROSECONDS%s", flag, s,
                           every_allowed ? "[:EVERY] with a delay >= 0" : "");
    inj->rank = (int)rank;
    inj->us = us;
    inj->every = (int)every;
    return TPB_OK;
}

static tpb_status_t copy_string(const char *flag, const char *s, char *dst, size_t cap)
{
    if (strlen(s) >= cap || s[0] == '\0')
        return tpb_err_set(TPB_ERR_INVALID, "%s: expected a non-empty value shorter than %zu", flag,
                           cap);
    strcpy(dst, s);
    return TPB_OK;
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
    TPB_CHECK_RET(parse_long(flag, v, min, &x));
    if (x > 1000000000L)
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': too large", flag, v);
    *out = (int)x;
    return TPB_OK;
}

static tpb_status_t set_tp(tpb_options_t *o, const char *flag, const char *v)
{
    long tmp[TPB_MAX_TP];
    int n;
    TPB_CHECK_RET(parse_long_list(flag, v, 1, tmp, TPB_MAX_TP, &n));
    for (int i = 0; i < n; i++)
        o->tp[i] = (int)tmp[i];
    o->ntp = n;
    return TPB_OK;
}

static tpb_status_t set_gpu_map(tpb_options_t *o, const char *flag, const char *v)
{
    long tmp[TPB_MAX_SHAPES];
    int n;
    TPB_CHECK_RET(parse_long_list(flag, v, 0, tmp, TPB_MAX_SHAPES, &n));
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

static tpb_status_t set_shapes(tpb_options_t *o, const char *flag, const char *v)
{
    int n = count_items(v);
    if (n > TPB_MAX_SHAPES)
        return tpb_err_set(TPB_ERR_INVALID, "%s: at most %d shapes", flag, TPB_MAX_SHAPES);
    shape_list_ctx c = {o->shapes};
    TPB_CHECK_RET(for_each_item(flag, v, shape_item, &c));
    o->nshapes = n;
    return TPB_OK;
}

static tpb_status_t apply(tpb_options_t *o, int id, const char *flag, const char *v)
{
    int x = 0;
    switch (id) {
    case OPT_BACKEND:
        TPB_CHECK_RET(parse_choice(flag, v, backend_names, 3, "auto, host or cuda", &x));
        o->backend = (tpb_backend_kind_t)x;
        return TPB_OK;
    case OPT_TP: return set_tp(o, flag, v);
    case OPT_SPLIT:
        return parse_name_set(flag, v, split_names, split_bits, 2, "row and/or col (e.g. row,col)",
                              &o->splits);
    case OPT_POLICY:
        return parse_name_set(flag, v, policy_names, policy_bits, 2,
                              "even and/or weighted (e.g. even,weighted)", &o->policies);
    case OPT_M: return parse_long_list(flag, v, 1, o->m_list, TPB_MAX_SHAPES, &o->nm);
    case OPT_N: return parse_long_list(flag, v, 1, o->n_list, TPB_MAX_SHAPES, &o->nn);
    case OPT_K: return parse_long_list(flag, v, 1, o->k_list, TPB_MAX_SHAPES, &o->nk);
    case OPT_SHAPE: return set_shapes(o, flag, v);
    case OPT_PRESET: return copy_string(flag, v, o->preset, sizeof(o->preset));
    case OPT_DTYPE: o->dtype_set = 1; return tpb_dtype_parse(v, &o->dtype);
    case OPT_ITERS: return set_int(flag, v, 1, &o->iters);
    case OPT_WARMUP: return set_int(flag, v, 0, &o->warmup);
    case OPT_SPEEDS: return parse_double_list(flag, v, &o->speeds, &o->nspeeds);
    case OPT_CALFILE: return copy_string(flag, v, o->calibration_file, sizeof(o->calibration_file));
    case OPT_EMULATE: return parse_double_list(flag, v, &o->emulate, &o->nemulate);
    case OPT_GRAN: return parse_long(flag, v, 1, &o->granularity);
    case OPT_CHECK: o->check = 1; return TPB_OK;
    case OPT_OUT: return copy_string(flag, v, o->out_dir, sizeof(o->out_dir));
    case OPT_COLCOLL:
        TPB_CHECK_RET(parse_choice(flag, v, colcoll_names, 2, "allgather or allreduce", &x));
        o->col_collective = (tpb_colcoll_t)x;
        return TPB_OK;
    case OPT_COMM:
        TPB_CHECK_RET(parse_choice(flag, v, comm_names, 2, "nccl or mpi", &x));
        o->comm = (tpb_comm_kind_t)x;
        return TPB_OK;
    case OPT_GPUMAP: return set_gpu_map(o, flag, v);
    case OPT_BIND: return parse_choice(flag, v, bind_names, 2, "none or gpu", &o->bind_gpu);
    case OPT_TIMEOUT:
        TPB_CHECK_RET(parse_double(flag, v, &o->timeout_s));
        if (o->timeout_s < 0)
            return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected seconds >= 0", flag, v);
        return TPB_OK;
    case OPT_TIMELINE: return parse_choice(flag, v, onoff_names, 2, "on or off", &o->timeline);
    case OPT_INJ_DELAY: return parse_inject(flag, v, 1, &o->inject_delay);
    case OPT_INJ_CLOCK: return parse_inject(flag, v, 0, &o->inject_clock);
    case OPT_SEED: {
        long s;
        TPB_CHECK_RET(parse_long(flag, v, 0, &s));
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

/* ---- completion against the world and the backend ---- */

static tpb_status_t resolve_shapes(tpb_options_t *o, const tpb_shape_t *def)
{
    int lists = o->nm || o->nn || o->nk;
    if (lists && o->nshapes)
        return tpb_err_set(TPB_ERR_INVALID,
                           "-m/-n/-k and --shape/--preset both given: use one way to set shapes");
    if (!lists) {
        if (!o->nshapes) {
            o->shapes[0] = *def;
            o->nshapes = 1;
        }
        return TPB_OK;
    }
    long dm = def->m, dn = def->n, dk = def->k;
    int nm = o->nm ? o->nm : 1, nn = o->nn ? o->nn : 1, nk = o->nk ? o->nk : 1;
    if ((long)nm * nn * nk > TPB_MAX_SHAPES)
        return tpb_err_set(TPB_ERR_INVALID, "-m/-n/-k give %d shapes: at most %d", nm * nn * nk,
                           TPB_MAX_SHAPES);
    int s = 0;
    for (int a = 0; a < nm; a++)
        for (int b = 0; b < nn; b++)
            for (int c = 0; c < nk; c++, s++) {
                memset(&o->shapes[s], 0, sizeof(o->shapes[s]));
                o->shapes[s].m = o->nm ? o->m_list[a] : dm;
                o->shapes[s].n = o->nn ? o->n_list[b] : dn;
                o->shapes[s].k = o->nk ? o->k_list[c] : dk;
            }
    o->nshapes = s;
    return TPB_OK;
}

static tpb_status_t resolve_tp(tpb_options_t *o, int world)
{
    if (o->ntp == 0) {
        for (int t = 1; t <= world && o->ntp < TPB_MAX_TP; t *= 2)
            if (world % t == 0)
                o->tp[o->ntp++] = t;
        return TPB_OK;
    }
    if (o->ntp == 1 && (o->tp[0] > world || world % o->tp[0] != 0))
        return tpb_err_set(TPB_ERR_INVALID,
                           "--tp %d does not divide the %d ranks: use a TP degree that divides "
                           "the number of ranks",
                           o->tp[0], world);
    return TPB_OK;
}

static tpb_status_t check_per_rank(const char *flag, int n, int world)
{
    if (n && n != world)
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s has %d values but there are %d ranks: give one value per rank", flag,
                           n, world);
    return TPB_OK;
}

static tpb_status_t check_inject(const char *flag, const tpb_inject_t *inj, int world)
{
    if (inj->rank >= world)
        return tpb_err_set(TPB_ERR_INVALID, "%s: rank %d does not exist (%d ranks)", flag,
                           inj->rank, world);
    return TPB_OK;
}

tpb_status_t tpb_options_resolve(tpb_options_t *o, int world, tpb_backend_kind_t backend,
                                 long default_granularity, tpb_dtype_t default_dtype,
                                 const tpb_shape_t *default_shape)
{
    o->backend = backend;
    if (!o->splits)
        o->splits = TPB_SPLIT_ROW | TPB_SPLIT_COL;
    if (!o->policies)
        o->policies = TPB_POLICY_EVEN | TPB_POLICY_WEIGHTED;
    if (!o->dtype_set)
        o->dtype = default_dtype;
    if (!o->granularity)
        o->granularity = default_granularity;
    if (backend == TPB_BACKEND_HOST && o->dtype != TPB_DTYPE_FP32 && o->dtype != TPB_DTYPE_FP64)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--dtype %s: the host backend supports fp32 and fp64 "
                           "(use --backend cuda for %s)",
                           tpb_dtype_name(o->dtype), tpb_dtype_name(o->dtype));
    if (o->nspeeds && o->calibration_file[0])
        return tpb_err_set(TPB_ERR_INVALID,
                           "--speeds and --calibration-file both given: use one source of speeds");
    TPB_CHECK_RET(check_per_rank("--speeds", o->nspeeds, world));
    TPB_CHECK_RET(check_per_rank("--emulate-speed", o->nemulate, world));
    TPB_CHECK_RET(check_inject("--inject-delay", &o->inject_delay, world));
    TPB_CHECK_RET(check_inject("--inject-clock-offset", &o->inject_clock, world));
    TPB_CHECK_RET(resolve_tp(o, world));
    return resolve_shapes(o, default_shape);
}

void tpb_options_usage(FILE *f)
{
    fputs(
        "Usage: mpirun -np P tpbal [options]      (or srun -n P tpbal, or a singleton)\n"
        "\n"
        "Tensor-parallel GEMM + collective sweeps: Y[MxN] = X[MxK] W[KxN] split over the\n"
        "t ranks of each TP group (groups of consecutive ranks, all running at once),\n"
        "with an even split against a split weighted by each rank's measured speed.\n"
        "\n"
        "What to run\n"
        "  --backend auto|host|cuda   auto: cuda when a GPU is visible and built, else host\n"
        "  -t, --tp LIST              TP degrees (default: powers of two dividing P)\n"
        "  -s, --split LIST           row (K split + all-reduce), col (N split + all-gather)\n"
        "  -p, --policy LIST          even, weighted (default: both)\n"
        "  -m, -n, -k LIST            shape lists, combined as a grid (M tokens, N out, K in)\n"
        "      --shape MxNxK[,...]    explicit shapes\n"
        "      --preset NAME|PATH     shape file (bench/presets/NAME.shapes): llama3-8b,\n"
        "                             llama3-70b, llama3-405b, gpt3-175b, llama3-8b-cpu\n"
        "  -d, --dtype T              fp32 | fp64 (host); fp32 | tf32 | fp16 | bf16 | fp8 (cuda)\n"
        "  -i, --iters N              measured iterations per config (default 20)\n"
        "  -w, --warmup N             warm-up iterations per config (default 5)\n"
        "  -g, --granularity G        shard size unit (default 1 host, 64 cuda)\n"
        "      --col-collective C     col split collective: allgather (default) | allreduce\n"
        "\n"
        "Speeds for the weighted policy\n"
        "      (default)              calibrate: every rank times a GEMM at its even shard\n"
        "      --speeds LIST          one relative speed per rank\n"
        "      --calibration-file F   reuse calibrated speeds from F, calibrate and add\n"
        "                             the missing ones (CSV)\n"
        "      --emulate-speed LIST   one factor per rank in (0,1]: slow a rank down on\n"
        "                             purpose (the weighted policy learns it only by\n"
        "                             calibration)\n"
        "\n"
        "Checking and output\n"
        "  -c, --check                verify Y against a single-rank reference on seeded\n"
        "                             inputs; exit code 3 if any config fails\n"
        "  -o, --out DIR              write results.jsonl, results.csv, ranks.csv and\n"
        "                             trace-NNN.json (Perfetto) into DIR\n"
        "      --timeline on|off      record per-iteration timelines (default on)\n"
        "      --seed N               input generator seed (default 42)\n"
        "  -q, --quiet                no progress lines\n"
        "\n"
        "GPU options (cuda backend)\n"
        "      --comm nccl|mpi        collectives by NCCL (default) or MPI through pinned\n"
        "                             host buffers (several ranks may share a GPU)\n"
        "      --gpu-map LIST         device index per node-local rank\n"
        "      --bind none|gpu        bind each rank to the cores near its GPU (hwloc)\n"
        "      --timeout SECONDS      end a hung collective after this long (default 300)\n"
        "\n"
        "Fault injection, for testing tpbal itself\n"
        "      --inject-delay RANK:US[:EVERY]  extra delay in RANK's compute phase\n"
        "      --inject-clock-offset RANK:US   add US to RANK's clock before clock sync\n"
        "\n"
        "  -h, --help                 this text\n"
        "  -V, --version              version and the backends built\n"
        "\n"
        "Exit codes: 0 success, 2 bad input or environment (one line on rank 0 says what\n"
        "to change), 3 --check failed, 1 other failures. Metrics: see doc/METRICS.md.\n",
        f);
}
