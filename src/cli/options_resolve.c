/* options_resolve.c - completing the options against the world size and the backend. */
#include <stdio.h>
#include <string.h>

#include "base/dtype.h"
#include "base/partition.h"
#include "cli/optparse.h"

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

/* The split dimensions of every shape in multiples of the dtype's GEMM width (fp8: 16), as
 * the shards on a granularity of that multiple then are. */
static tpb_status_t aligned_shapes(const tpb_options_t *o)
{
    long a = tpb_dtype_align(o->dtype);
    for (int s = 0; s < o->nshapes; s++)
        if (o->shapes[s].n % a || o->shapes[s].k % a)
            return tpb_err_set(TPB_ERR_INVALID,
                               "shape %ldx%ldx%ld with --dtype %s: N and K must be multiples of "
                               "%ld (its GEMMs' widths)",
                               o->shapes[s].m, o->shapes[s].n, o->shapes[s].k,
                               tpb_dtype_name(o->dtype), a);
    return TPB_OK;
}

/* Append a note to o->notes ("; " between notes; cut at its size). */
static void note(tpb_options_t *o, const char *text)
{
    size_t len = strlen(o->notes);
    snprintf(o->notes + len, sizeof(o->notes) - len, "%s%s", len ? "; " : "", text);
}

/* Drop the later repeats of v[*n] (the order kept), with a note naming flag. */
static void merge_ints(tpb_options_t *o, const char *flag, int *v, int *n)
{
    int kept = 0, first = 0, dups = 0;
    for (int i = 0; i < *n; i++) {
        int seen = 0;
        for (int j = 0; j < kept && !seen; j++)
            seen = v[j] == v[i];
        if (seen && !dups++)
            first = v[i];
        if (!seen)
            v[kept++] = v[i];
    }
    *n = kept;
    char text[160];
    snprintf(text, sizeof(text), "%s repeats %d%s: measured once", flag, first,
             dups > 1 ? " and more" : "");
    if (dups)
        note(o, text);
}

/* The same for the shapes (from --shape, -m/-n/-k, a preset or --comm-sizes). */
static void merge_shapes(tpb_options_t *o)
{
    int kept = 0, dups = 0;
    tpb_shape_t first = {0};
    for (int i = 0; i < o->nshapes; i++) {
        const tpb_shape_t *s = &o->shapes[i];
        int seen = 0;
        for (int j = 0; j < kept && !seen; j++)
            seen = o->shapes[j].m == s->m && o->shapes[j].n == s->n && o->shapes[j].k == s->k;
        if (seen && !dups++)
            first = *s;
        if (!seen)
            o->shapes[kept++] = *s;
    }
    o->nshapes = kept;
    char text[200];
    const char *times = dups > 1 ? "more than once (and others)" : "twice";
    if (o->comm_only)
        snprintf(text, sizeof(text),
                 "--comm-sizes: a message of %ld elements comes %s: "
                 "measured once",
                 first.n, times);
    else
        snprintf(text, sizeof(text), "shape %ldx%ldx%ld comes %s: measured once", first.m, first.n,
                 first.k, times);
    if (dups)
        note(o, text);
}

static tpb_status_t resolve_tp(tpb_options_t *o, int world)
{
    if (o->ntp == 0) {
        char list[96] = "", text[200];
        for (int t = 1; t <= world && o->ntp < TPB_MAX_TP; t *= 2)
            if (world % t == 0) {
                o->tp[o->ntp++] = t;
                size_t len = strlen(list);
                snprintf(list + len, sizeof(list) - len, "%s%d", len ? "," : "", t);
            }
        if (world & (world - 1)) { /* not a power of 2: say what was chosen, and why */
            snprintf(text, sizeof(text),
                     "no --tp: TP %s, the powers of 2 that divide the %d ranks (--tp %d for one "
                     "group of all)",
                     list, world, world);
            note(o, text);
        }
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

/* --comm-only: what it cannot do is refused; every size becomes a 1 x n "shape". */
static tpb_status_t comm_only_refusals(const tpb_options_t *o)
{
    const char *bad = o->nshapes || o->nm || o->nn || o->nk ? "--shape, -m/-n/-k or --preset"
                      : o->check                            ? "--check"
                      : o->nemulate || o->nsched            ? "--emulate-speed/--emulate-schedule"
                      : o->calibration_file[0]              ? "--calibration-file"
                      : (o->policies & TPB_POLICY_ADAPTIVE) ? "--policy adaptive"
                      : o->cost_spec[0]                     ? "--cost-profile"
                      : (o->overlaps & TPB_OVERLAP_CHUNKED) ? "--overlap chunked"
                                                            : NULL;
    if (bad)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--comm-only times collectives without GEMMs: drop %s (message sizes "
                           "come from --comm-sizes, weighted blocks from --speeds)",
                           bad);
    if ((o->policies & TPB_POLICY_WEIGHTED) && !o->nspeeds)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--comm-only --policy weighted needs --speeds (one per rank) for the "
                           "all-gather-v blocks: there is no GEMM to calibrate");
    return TPB_OK;
}

static tpb_status_t resolve_comm_only(tpb_options_t *o, int world)
{
    if (!o->comm_only)
        return o->ncomm_sizes || o->comm_gap_us
                   ? tpb_err_set(TPB_ERR_INVALID, "%s needs --comm-only",
                                 o->ncomm_sizes ? "--comm-sizes" : "--comm-gap")
                   : TPB_OK;
    if (world < 2)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--comm-only needs at least 2 ranks: run it under mpirun -np P or srun");
    if (!o->policies)
        o->policies = TPB_POLICY_EVEN | (o->nspeeds ? TPB_POLICY_WEIGHTED : 0u);
    TPB_CHECK_RET(comm_only_refusals(o));
    if (!o->ncomm_sizes) /* 4K, 16K, ... 16M */
        for (long b = 4096; b <= (16L << 20); b *= 4)
            o->comm_sizes[o->ncomm_sizes++] = b;
    if (!o->granularity)
        o->granularity = 1; /* blocks of single elements, as nccl-tests' counts */
    if (o->ntp == 0)        /* TP = 1 has no collective */
        for (int t = 2; t <= world && o->ntp < TPB_MAX_TP; t *= 2)
            if (world % t == 0)
                o->tp[o->ntp++] = t;
    return TPB_OK;
}

/* The 1 x n "shapes" of --comm-sizes (after the dtype is known). */
static tpb_status_t comm_shapes(tpb_options_t *o)
{
    size_t es = tpb_dtype_out_size(o->dtype);
    for (int i = 0; i < o->ncomm_sizes; i++) {
        long n = o->comm_sizes[i] / (long)es;
        if (n < 1)
            return tpb_err_set(TPB_ERR_INVALID,
                               "--comm-sizes %ld: smaller than one %s element (%zu bytes)",
                               o->comm_sizes[i], tpb_dtype_name(o->dtype), es);
        tpb_shape_t *sh = &o->shapes[i];
        memset(sh, 0, sizeof(*sh));
        sh->m = sh->k = 1;
        sh->n = n;
        sh->comm_only = 1;
        snprintf(sh->name, sizeof(sh->name), "comm-%ld", n * (long)es);
    }
    o->nshapes = o->ncomm_sizes;
    return TPB_OK;
}

/* --overlap chunked: its chunk counts and what it cannot go with. */
static tpb_status_t resolve_overlap(tpb_options_t *o, const tpb_backend_defaults_t *defaults)
{
    int chunked = (o->overlaps & TPB_OVERLAP_CHUNKED) != 0;
    if (!o->overlaps)
        o->overlaps = TPB_OVERLAP_NONE;
    if (!chunked)
        return o->nchunks || o->overlap_polls
                   ? tpb_err_set(TPB_ERR_INVALID, "--chunks and --overlap-polls need --overlap "
                                                  "chunked")
                   : TPB_OK;
    const char *bad = o->cost_profile.nblocks               ? "--cost-profile"
                      : (o->policies & TPB_POLICY_ADAPTIVE) ? "--policy adaptive"
                      : !o->timeline                        ? "--timeline off"
                                                            : NULL;
    if (bad)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--overlap chunked times every chunk of a dense layer: drop %s", bad);
    if (!o->nchunks)
        for (int c = 2; c <= 8; c *= 2)
            o->chunks[o->nchunks++] = c;
    if (!o->overlap_polls)
        o->overlap_polls = defaults->overlap_polls > 0 ? defaults->overlap_polls : 1;
    return TPB_OK;
}

/* --cost-profile and --policy cost: what they cannot go with. */
static tpb_status_t cost_refusals(const tpb_options_t *o)
{
    if ((o->policies & TPB_POLICY_COST) && !o->cost_profile.nblocks)
        return tpb_err_set(TPB_ERR_INVALID, "--policy cost balances a --cost-profile: give one "
                                            "(skew:R or a file), or use --policy weighted");
    if (!o->cost_profile.nblocks)
        return TPB_OK;
    if (o->policies & TPB_POLICY_ADAPTIVE)
        return tpb_err_set(TPB_ERR_INVALID, "--policy adaptive re-balances by shard length, "
                                            "which a --cost-profile makes wrong: use --policy "
                                            "cost");
    if (o->emulate_mode == TPB_EMULATE_WORK && (o->nemulate || o->nsched))
        return tpb_err_set(TPB_ERR_INVALID, "--emulate-mode work repeats GEMMs, which a "
                                            "block-sparse row shard accumulates: use "
                                            "--emulate-mode time with --cost-profile");
    return TPB_OK;
}

/* --fleet: a qualification, not a sweep: what it cannot go with. */
static tpb_status_t fleet_refusals(const tpb_options_t *o)
{
    if (!o->fleet)
        return o->fleet_given ? tpb_err_set(TPB_ERR_INVALID,
                                            "--fleet-threshold and --fleet-bytes need --fleet")
                              : TPB_OK;
    const char *bad = o->comm_only                          ? "--comm-only"
                      : o->block                            ? "--block"
                      : (o->overlaps & TPB_OVERLAP_CHUNKED) ? "--overlap chunked"
                      : o->shards_from[0]                   ? "--shards-from"
                      : o->check                            ? "--check"
                                                            : NULL;
    if (bad)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--fleet qualifies ranks, nodes and links instead of a sweep: drop %s",
                           bad);
    if (o->sweep_flag)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--fleet qualifies ranks, nodes and links on its own schedule (5 "
                           "rounds): --%s has no effect there: drop it",
                           o->sweep_flag);
    if (o->nshapes > 1)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--fleet times one GEMM on every rank but %d shapes were given: give "
                           "one --shape",
                           o->nshapes);
    return TPB_OK;
}

/* --trace-ranks picks whose marks reach rank 0 when a group is analysed where its marks
 * are: where every mark goes to rank 0 anyway, it would do nothing. */
static tpb_status_t trace_ranks_refusals(const tpb_options_t *o)
{
    const char *why = !o->trace_ranks_given          ? NULL
                      : o->gather == TPB_GATHER_FULL ? "--gather full"
                      : o->block                     ? "--block (its steps need every mark)"
                      : !o->timeline                 ? "--timeline off"
                      : o->fleet                     ? "--fleet"
                                                     : NULL;
    if (why)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--trace-ranks picks the ranks whose marks reach rank 0 under "
                           "--gather parts or auto; with %s it has no effect: drop it",
                           why);
    return TPB_OK;
}

/* --block: what it cannot go with (the block is one timed step of fixed shards). */
static tpb_status_t block_refusals(const tpb_options_t *o)
{
    if (!o->block)
        return TPB_OK;
    const char *bad = o->comm_only                          ? "--comm-only"
                      : (o->policies & TPB_POLICY_ADAPTIVE) ? "--policy adaptive"
                      : (o->overlaps & TPB_OVERLAP_CHUNKED) ? "--overlap chunked"
                      : !o->timeline                        ? "--timeline off"
                      : o->nsched                           ? "--emulate-schedule"
                                                            : NULL;
    if (bad)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--block times the shapes' GEMMs back to back as one step of fixed "
                           "shards: drop %s",
                           bad);
    return TPB_OK;
}

/* --block: every shape has one split (its preset's, or the one --split). */
static tpb_status_t block_splits(const tpb_options_t *o)
{
    for (int i = 0; o->block && i < o->nshapes; i++) {
        if (o->shapes[i].m != o->shapes[0].m)
            return tpb_err_set(TPB_ERR_INVALID,
                               "--block: the shapes' M differ (%ld and %ld): a block's GEMMs "
                               "run on the same tokens, give them one M",
                               o->shapes[0].m, o->shapes[i].m);
        unsigned sp = o->shapes[i].splits ? o->shapes[i].splits : o->splits;
        if (sp != TPB_SPLIT_ROW && sp != TPB_SPLIT_COL)
            return tpb_err_set(TPB_ERR_INVALID,
                               "--block: shape %ldx%ldx%ld has no split of its own: give one per "
                               "shape in the preset (name M N K row|col), or --split row or col",
                               o->shapes[i].m, o->shapes[i].n, o->shapes[i].k);
    }
    return TPB_OK;
}

/* --split given where every shape has its own split (a preset's or --model's GEMMs, each
 * with its Megatron split): it would change nothing, so it is refused rather than ignored. */
static tpb_status_t split_used(const tpb_options_t *o)
{
    if (!o->splits || o->nshapes == 0)
        return TPB_OK;
    for (int i = 0; i < o->nshapes; i++)
        if (!o->shapes[i].splits)
            return TPB_OK;
    return tpb_err_set(TPB_ERR_INVALID,
                       "--split has no effect here: every GEMM of the %s has its own split (the "
                       "preset's row or col, as Megatron splits it); drop --split, or give "
                       "--shape to choose the split",
                       o->model ? "--model" : "preset");
}

/* An option that this run's mode would not read, refused in one line rather than ignored
 * (after the policies' and the splits' defaults are set). */
static tpb_status_t inert_refusals(const tpb_options_t *o)
{
    int col = !o->comm_only && (o->splits & TPB_SPLIT_COL);
    for (int i = 0; !col && !o->comm_only && i < o->nshapes; i++)
        col = o->shapes[i].splits ? (o->shapes[i].splits & TPB_SPLIT_COL) != 0 : 0;
    const char *why =
        o->inert_given[0] && !(o->policies & TPB_POLICY_ADAPTIVE)
            ? "--rebalance-every sets --policy adaptive's rounds, and this run measures no "
              "adaptive config: add adaptive to --policy, or drop --rebalance-every"
        : o->inert_given[1] && !o->nemulate && !o->nsched
            ? "--emulate-mode says how --emulate-speed slows a rank, and none is slowed: give "
              "--emulate-speed (or --emulate-schedule), or drop --emulate-mode"
        : o->inert_given[2] && !o->comm_only && !col
            ? "--col-collective sets the col split's collective, and this run has no col "
              "split: add col to --split, or drop --col-collective"
        : (o->nspeeds || o->calibration_file[0]) && !o->fleet &&
                (o->policies & ~(unsigned)TPB_POLICY_EVEN) == 0
            ? "--speeds and --calibration-file weigh the shards of --policy weighted or cost, "
              "and this run measures only even: add weighted to --policy, or drop them"
            : NULL;
    return why ? tpb_err_set(TPB_ERR_INVALID, "%s", why) : TPB_OK;
}

tpb_status_t tpb_options_resolve(tpb_options_t *o, int world, const tpb_backend_class_t *backend)
{
    const tpb_backend_defaults_t *defaults = &backend->defaults;
    o->backend = backend;
    o->notes[0] = '\0';
    TPB_CHECK_RET(resolve_comm_only(o, world));
    TPB_CHECK_RET(split_used(o));
    if (!o->splits)
        o->splits = TPB_SPLIT_ROW | TPB_SPLIT_COL;
    if (!o->seqpars)
        o->seqpars = TPB_SEQPAR_OFF;
    if (!o->placements)
        o->placements = TPB_PLACE_PACKED;
    if (!o->policies)
        o->policies = TPB_POLICY_EVEN | TPB_POLICY_WEIGHTED |
                      (o->cost_profile.nblocks ? TPB_POLICY_COST : 0u);
    TPB_CHECK_RET(cost_refusals(o));
    TPB_CHECK_RET(inert_refusals(o));
    TPB_CHECK_RET(block_refusals(o));
    TPB_CHECK_RET(fleet_refusals(o));
    TPB_CHECK_RET(trace_ranks_refusals(o));
    TPB_CHECK_RET(resolve_overlap(o, defaults));
    const char *whole = o->block                              ? "--block"
                        : (o->overlaps & TPB_OVERLAP_CHUNKED) ? "--overlap chunked"
                        : !o->timeline                        ? "--timeline off"
                                                              : NULL;
    if (o->gather == TPB_GATHER_PARTS && whole)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--gather parts analyses each TP group where its marks are, and %s "
                           "needs every mark on rank 0: drop one (auto gathers them in full)",
                           whole);
    if (!o->dtype_set)
        o->dtype = defaults->dtype;
    if (!o->granularity)
        o->granularity = defaults->granularity;
    if (!o->comm_only && o->granularity % tpb_dtype_align(o->dtype))
        return tpb_err_set(TPB_ERR_INVALID,
                           "--granularity %ld with --dtype %s: its GEMMs need widths in multiples "
                           "of %ld: use a multiple of %ld",
                           o->granularity, tpb_dtype_name(o->dtype), tpb_dtype_align(o->dtype),
                           tpb_dtype_align(o->dtype));
    if ((o->policies & TPB_POLICY_ADAPTIVE) && !o->timeline)
        return tpb_err_set(TPB_ERR_INVALID, "--policy adaptive re-balances from the per-iteration "
                                            "timeline: drop --timeline off");
    if (o->nspeeds && o->calibration_file[0])
        return tpb_err_set(TPB_ERR_INVALID,
                           "--speeds and --calibration-file both given: use one source of speeds");
    TPB_CHECK_RET(check_per_rank("--speeds", o->nspeeds, world));
    if (o->nspeeds) /* the numbers that reach a partition are checked here, once */
        TPB_CHECK_RET(tpb_speeds_check(o->speeds, o->nspeeds, "--speeds"));
    TPB_CHECK_RET(check_per_rank("--emulate-speed", o->nemulate, world));
    TPB_CHECK_RET(check_per_rank("--emulate-schedule", o->nsched, world));
    TPB_CHECK_RET(check_inject("--inject-delay", &o->inject_delay, world));
    TPB_CHECK_RET(check_inject("--inject-clock-offset", &o->inject_clock, world));
    TPB_CHECK_RET(resolve_tp(o, world));
    merge_ints(o, "--tp", o->tp, &o->ntp);
    merge_ints(o, "--chunks", o->chunks, &o->nchunks);
    if (o->comm_only) {
        TPB_CHECK_RET(comm_shapes(o));
        merge_shapes(o);
        return TPB_OK;
    }
    tpb_shape_t def = {.m = defaults->m, .n = defaults->n, .k = defaults->k};
    TPB_CHECK_RET(resolve_shapes(o, &def));
    if (!o->block) /* a block runs every GEMM it lists, the same shape twice included */
        merge_shapes(o);
    TPB_CHECK_RET(block_splits(o));
    return aligned_shapes(o);
}

void tpb_options_backend_cfg(const tpb_options_t *o, tpb_backend_cfg_t *cfg)
{
    *cfg = (tpb_backend_cfg_t){.dtype = o->dtype,
                               .comm = o->comm,
                               .collectives = o->collectives,
                               .gpu_map = o->gpu_map,
                               .ngpu_map = o->ngpu_map,
                               .bind = o->bind,
                               .timeout_s = o->timeout_s,
                               .emulate_mode = o->emulate_mode,
                               .threads = o->threads,
                               .emulate_schedule = o->nsched > 0,
                               .overlap = (o->overlaps & TPB_OVERLAP_CHUNKED) != 0};
}
