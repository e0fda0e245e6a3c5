/* types.c - names of the shared vocabulary. */
#include "base/tpb_types.h"

#include <string.h>

static const char *const split_names[] = {"row", "col"};
static const unsigned split_values[] = {TPB_SPLIT_ROW, TPB_SPLIT_COL};
static const char *const policy_names[] = {"even", "weighted", "adaptive", "cost"};
static const unsigned policy_values[] = {TPB_POLICY_EVEN, TPB_POLICY_WEIGHTED, TPB_POLICY_ADAPTIVE,
                                         TPB_POLICY_COST};
static const char *const coll_names[] = {"allgather", "allreduce"};
static const unsigned coll_values[] = {TPB_COLL_ALLGATHER, TPB_COLL_ALLREDUCE};
/* ccl: the vendor's collective library (NCCL on NVIDIA GPUs); nccl, its older name, reads
 * the same (a name is printed as its first spelling) */
static const char *const comm_names[] = {"ccl", "mpi", "nccl"};
static const char *const bind_names[] = {"none", "core", "numa", "gpu"};
static const unsigned bind_values[] = {TPB_BIND_NONE, TPB_BIND_CORE, TPB_BIND_NUMA, TPB_BIND_GPU};
static const char *const placement_names[] = {"packed", "spread"};
static const unsigned placement_values[] = {TPB_PLACE_PACKED, TPB_PLACE_SPREAD};
static const char *const emulate_names[] = {"time", "work"};
static const unsigned emulate_values[] = {TPB_EMULATE_TIME, TPB_EMULATE_WORK};
static const unsigned comm_values[] = {TPB_COMM_CCL, TPB_COMM_MPI, TPB_COMM_CCL};
static const char *const overlap_names[] = {"none", "chunked"};
static const unsigned overlap_values[] = {TPB_OVERLAP_NONE, TPB_OVERLAP_CHUNKED};
static const char *const seqpar_names[] = {"off", "on"};
static const unsigned seqpar_values[] = {TPB_SEQPAR_OFF, TPB_SEQPAR_ON};
static const char *const colls_names[] = {"blocking", "nonblocking"};
static const unsigned colls_values[] = {TPB_COLLS_BLOCKING, TPB_COLLS_NONBLOCKING};

/* A name table with its count taken from its arrays, which must pair up. */
#define N_(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define TABLE_(var, nm, vals, acc)                                                                 \
    const tpb_name_table_t var = {nm, vals, N_(nm), acc};                                          \
    _Static_assert(N_(nm) == N_(vals), #nm " and " #vals " pair up")

TABLE_(tpb_splits, split_names, split_values, "row and/or col (e.g. row,col)");
TABLE_(tpb_policies, policy_names, policy_values,
       "even, weighted, adaptive and/or cost (e.g. even,weighted)");
TABLE_(tpb_colls, coll_names, coll_values, "allgather or allreduce");
TABLE_(tpb_comm_kinds, comm_names, comm_values, "ccl (or nccl) or mpi");
TABLE_(tpb_binds, bind_names, bind_values, "none, core, numa or gpu");
TABLE_(tpb_placements, placement_names, placement_values, "packed and/or spread");
TABLE_(tpb_emulate_modes, emulate_names, emulate_values, "time or work");
TABLE_(tpb_overlaps, overlap_names, overlap_values, "none and/or chunked (e.g. none,chunked)");
TABLE_(tpb_seqpars, seqpar_names, seqpar_values, "off and/or on (e.g. off,on)");
TABLE_(tpb_collectives, colls_names, colls_values, "blocking or nonblocking");

static const char *name_of(const tpb_name_table_t *t, unsigned v)
{
    for (int i = 0; i < t->count; i++)
        if (t->values[i] == v)
            return t->names[i];
    return "?";
}

tpb_status_t tpb_name_parse(const tpb_name_table_t *t, const char *s, unsigned *value)
{
    for (int i = 0; i < t->count; i++) {
        if (strcmp(s, t->names[i]) == 0) {
            *value = t->values[i];
            return TPB_OK;
        }
    }
    return TPB_ERR_INVALID;
}

const char *tpb_split_name(tpb_split_t s)
{
    return name_of(&tpb_splits, (unsigned)s);
}

const char *tpb_policy_name(tpb_policy_t p)
{
    return name_of(&tpb_policies, (unsigned)p);
}

/* The collectives' names and labels: the registry made from TPB_COLLS' rows. */
static const struct {
    const char *name, *label;
} colls[] = {
#define ROW_(id, nm, lb) [TPB_COLL_##id] = {nm, lb},
    TPB_COLLS(ROW_)
#undef ROW_
};
_Static_assert(sizeof colls / sizeof colls[0] == TPB_COLL_COUNT, "one entry per collective");

const char *tpb_coll_name(tpb_coll_t c)
{
    return (unsigned)c < TPB_COLL_COUNT ? colls[c].name : "?";
}

const char *tpb_coll_label(tpb_coll_t c)
{
    return (unsigned)c < TPB_COLL_COUNT ? colls[c].label : "?";
}

const char *tpb_seqpar_name(tpb_seqpar_t s)
{
    return name_of(&tpb_seqpars, (unsigned)s);
}

const char *tpb_split_label(tpb_split_t s, tpb_seqpar_t sp)
{
    if (sp == TPB_SEQPAR_ON)
        return s == TPB_SPLIT_ROW ? "row+sp" : "col+sp";
    return tpb_split_name(s);
}

const char *tpb_comm_kind_name(tpb_comm_kind_t c)
{
    return name_of(&tpb_comm_kinds, (unsigned)c);
}

const char *tpb_collectives_name(tpb_collectives_t c)
{
    return name_of(&tpb_collectives, (unsigned)c);
}

const char *tpb_bind_name(tpb_bind_t b)
{
    return name_of(&tpb_binds, (unsigned)b);
}

const char *tpb_overlap_name(tpb_overlap_mode_t m)
{
    return name_of(&tpb_overlaps, (unsigned)m);
}

const char *tpb_placement_name(tpb_placement_t p)
{
    return name_of(&tpb_placements, (unsigned)p);
}

const char *tpb_emulate_mode_name(tpb_emulate_mode_t m)
{
    return name_of(&tpb_emulate_modes, (unsigned)m);
}

const char *tpb_speed_source_name(tpb_speed_source_t s)
{
    static const char *const names[] = {"none", "calibration", "file", "speeds", "plan"};
    return (unsigned)s < 5 ? names[s] : "?";
}

const char *tpb_check_name(tpb_check_t c)
{
    static const char *const names[] = {"off", "pass", "fail"};
    return (unsigned)c < 3 ? names[c] : "?";
}

int tpb_speed_source_measured(tpb_speed_source_t s)
{
    return s == TPB_SPEEDS_CALIBRATION || s == TPB_SPEEDS_FILE;
}
