/*
 * shardplan.h - --shards-from FILE: the shard plans tpbal-plan writes (schema
 * "tpbal-plan/1", doc/METRICS.md "Shard plans"), read back so that a run measures
 * exactly those shards. Each planned config names its shape, split, policy and TP
 * degree and, per TP group, its world ranks and shards (and the speeds they came from).
 */
#ifndef TPB_SHARDPLAN_H
#define TPB_SHARDPLAN_H

#include <stddef.h>

#include "base/config_key.h"
#include "base/dtype.h"
#include "base/tpb_status.h"
#include "base/tpb_types.h"

/** The schema this reader accepts. */
#define TPB_SHARDPLAN_SCHEMA "tpbal-plan/1"

/** One planned config: its groups one after the other (nranks = groups x tp). */
/** What a plan's entry names of a config: its shape, split, policy and TP degree (a plan
 *  of a --block run names its GEMMs by shape too, each with its own split). */
#define TPB_SHARDPLAN_KEY (TPB_KEY_SIZES | TPB_KEY_SPLIT | TPB_KEY_POLICY | TPB_KEY_TP)

typedef struct {
    TPB_CONFIG_KEY;    /**< the config it plans: TPB_SHARDPLAN_KEY's fields, the rest 0 */
    int has_dtype;     /**< the plan names the dtype its speeds were measured in */
    tpb_dtype_t dtype; /**< ... that dtype */
    int nranks;
    int *world_ranks; /**< position order, group by group (owned) */
    long *shards;     /**< the shard of each of them (owned) */
    double *speeds;   /**< the speeds behind the shards, GFLOP/s (owned; NAN: not given) */
} tpb_shardplan_entry_t;

typedef struct {
    tpb_shardplan_entry_t *e;
    int n;
} tpb_shardplan_t;

/**
 * Read the plan at path (a bounded regular text file) into *out. On error
 * TPB_ERR_INVALID with one line naming the file, the config and what is wrong (not
 * JSON, another schema, a missing or out-of-range field, shards that do not add up
 * to the split dimension, a group of the wrong size, a rank planned twice, a policy
 * other than even or weighted, a string holding a NUL), and *out is empty;
 * TPB_ERR_NOMEM when memory ran out. A file of more than max_bytes is refused before it is
 * parsed (a plan holds a few hundred bytes a rank and config: tpb_shardplan_max_bytes).
 */
tpb_status_t tpb_shardplan_load(const char *path, size_t max_bytes, tpb_shardplan_t *out);

/** The largest plan a run of `world` ranks can use: 1 MiB and 32 KiB a rank (64 configs of
 *  ~500 bytes a rank), at most TPB_INFILE_MAX. */
size_t tpb_shardplan_max_bytes(int world);

/** The plan as one buffer (*buf, malloc'ed, *len bytes) for another rank (shardplan_pack.c). */
tpb_status_t tpb_shardplan_pack(const tpb_shardplan_t *p, char **buf, size_t *len);

/** The plan packed by tpb_shardplan_pack; TPB_ERR_INVALID where buf is short or damaged. */
tpb_status_t tpb_shardplan_unpack(const char *buf, size_t len, tpb_shardplan_t *out);

/** The same from text[len] (what names it in messages). */
tpb_status_t tpb_shardplan_parse(const char *text, size_t len, const char *what,
                                 tpb_shardplan_t *out);

void tpb_shardplan_free(tpb_shardplan_t *p);

/**
 * Check the plan against the run that reads it (granularity g, dtype dt), as the run's
 * own partitions would have it: every shard at least g and a multiple of g (the group's
 * last may also take total mod g), an "even" entry exactly the even split, fp8's widths
 * multiples of 16 (tpb_dtype_align), the plan's dtype (where it names one) the run's.
 * TPB_ERR_INVALID naming what (the file), the config and the group otherwise. Pure.
 */
tpb_status_t tpb_shardplan_check(const tpb_shardplan_t *p, long g, tpb_dtype_t dt,
                                 const char *what);

/** The entry for config k (TPB_SHARDPLAN_KEY's fields), or NULL. Pure. */
const tpb_shardplan_entry_t *tpb_shardplan_find(const tpb_shardplan_t *p,
                                                const tpb_config_key_t *k);

#endif /* TPB_SHARDPLAN_H */
