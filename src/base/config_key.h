/*
 * config_key.h - a config's identity, once: its TP degree, placement, split, sequence
 * parallelism, policy, shape (M, N, K and the layer's name), chunk count and whether it
 * moves a message alone (--comm-only). The plan (run/plan.h), the result, the history
 * entry and the block result (record/result.h) embed it with TPB_CONFIG_KEY, so that it is
 * made once (run/plan.c) and copied whole; one function writes its JSON keys, one its
 * label, one compares two keys, one says which configs are measured side by side.
 *
 * Adding a sweep dimension: its field in TPB_CONFIG_KEY_FIELDS, its value where plan.c
 * makes the key, its JSON key and label here (doc/ARCHITECTURE.md, "add a sweep
 * dimension").
 */
#ifndef TPB_CONFIG_KEY_H
#define TPB_CONFIG_KEY_H

#include <stddef.h>

#include "base/buf.h"
#include "base/tpb_types.h"

/* The fields, for the struct and for the members of the structs that embed it. */
#define TPB_CONFIG_KEY_FIELDS                                                                      \
    int tp;                    /* TP degree */                                                     \
    tpb_placement_t placement; /* how the TP groups were formed */                                 \
    tpb_split_t split;                                                                             \
    tpb_seqpar_t seqpar; /* sequence parallelism */                                                \
    tpb_policy_t policy;                                                                           \
    long m, n, k;                                                                                  \
    char shape_name[48]; /* the layer's name ("" unnamed) */                                       \
    int chunks;          /* --overlap chunked: chunk count (0: serial) */                          \
    int comm_only;       /* --comm-only: a message alone, no GEMM */

typedef struct {
    TPB_CONFIG_KEY_FIELDS
} tpb_config_key_t;

/* As a member: the whole key as `key` (to copy, compare, write) and each field by its
 * name (p->tp), the same storage. */
#define TPB_CONFIG_KEY                                                                             \
    union {                                                                                        \
        tpb_config_key_t key;                                                                      \
        struct {                                                                                   \
            TPB_CONFIG_KEY_FIELDS                                                                  \
        };                                                                                         \
    }

/** The fields a JSON object, a label or a comparison takes. */
enum {
    TPB_KEY_TP = 1 << 0,
    TPB_KEY_PLACEMENT = 1 << 1,
    TPB_KEY_SPLIT = 1 << 2,
    TPB_KEY_SEQPAR = 1 << 3,
    TPB_KEY_POLICY = 1 << 4,
    TPB_KEY_SIZES = 1 << 5, /* m, n, k */
    TPB_KEY_SHAPE = 1 << 6, /* the layer's name */
    TPB_KEY_CHUNKS = 1 << 7,
    TPB_KEY_COMM_ONLY = 1 << 8,
    /* what a layer is, whatever its TP degree, placement, policy and chunks */
    TPB_KEY_LAYER =
        TPB_KEY_SPLIT | TPB_KEY_SEQPAR | TPB_KEY_SIZES | TPB_KEY_SHAPE | TPB_KEY_COMM_ONLY,
    /* how a shape is run beyond its split: what a --block's GEMMs share besides the TP
     * degree and placement (a new dimension of the kind joins here) */
    TPB_KEY_VARIANT = TPB_KEY_SEQPAR,
    /* one config among those of a shape at a TP degree: what an answer names */
    TPB_KEY_CHOICE = TPB_KEY_SPLIT | TPB_KEY_VARIANT | TPB_KEY_POLICY,
    /* what the GEMMs of one --block share */
    TPB_KEY_BLOCK = TPB_KEY_TP | TPB_KEY_PLACEMENT | TPB_KEY_VARIANT | TPB_KEY_POLICY,
    TPB_KEY_ALL = (1 << 9) - 1
};

/** The JSON keys of the fields (shape, m, n, k, tp, placement, split, sequence_parallel,
 *  policy, chunks; comm_only is not written) into the open object js. */
void tpb_config_key_json(tpb_buf_t *js, const tpb_config_key_t *k, unsigned fields);

/** The same, each key after prefix ("best_": best_split, ...). */
void tpb_config_key_json_as(tpb_buf_t *js, const char *prefix, const tpb_config_key_t *k,
                            unsigned fields);

/** Copy the fields of src into dst (the others stay). */
void tpb_config_key_take(tpb_config_key_t *dst, const tpb_config_key_t *src, unsigned fields);

/** 1 if a and b agree on every one of fields. Pure. */
int tpb_config_key_same(const tpb_config_key_t *a, const tpb_config_key_t *b, unsigned fields);

/** "row+sp weighted": the split (with sequence parallelism) and the policy. Per thread,
 *  overwritten by the next call. */
const char *tpb_config_key_label(const tpb_config_key_t *k);

/** "row+sp": the split, with sequence parallelism. Static. */
const char *tpb_config_key_split(const tpb_config_key_t *k);

/** " sequence parallel", or "" where the config has none: the words a line adds. Static. */
const char *tpb_config_key_variant(const tpb_config_key_t *k);

/** 1 if a and b may be measured side by side (--interleave): the same layer, TP degree and
 *  placement, other policies (or chunk counts). Pure. */
int tpb_config_key_side_by_side(const tpb_config_key_t *a, const tpb_config_key_t *b);

#endif /* TPB_CONFIG_KEY_H */
