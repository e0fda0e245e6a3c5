/*
 * config_key.h - a config's identity, once: its TP degree, placement, split, sequence
 * parallelism, policy, shape (M, N, K and the layer's name), chunk count and whether it
 * moves a message alone (--comm-only). The plan (run/plan.h), the result, the history
 * entry and the block result (record/result.h) embed it with TPB_CONFIG_KEY, so that it is
 * made once (run/plan.c) and copied whole; one function writes its JSON keys, one its
 * label, one compares two keys, one says which configs are measured side by side.
 *
 * Adding a sweep dimension: its row in TPB_CONFIG_KEY_ROWS, its value where plan.c makes
 * the key (doc/ARCHITECTURE.md, "add a sweep dimension").
 */
#ifndef TPB_CONFIG_KEY_H
#define TPB_CONFIG_KEY_H

#include <stddef.h>

#include "base/buf.h"
#include "base/tpb_types.h"

/*
 * The fields, one row each, in the order their JSON keys are written:
 *   X(BIT, field, C type, array, JSON name, kind, name function, role, default, option)
 * BIT names the field's mask bit (TPB_KEY_BIT). kind: STR (a char array), LONG, INT, ENUM
 * (written as its name function's string), FLAG (compared and copied, written by the
 * record's columns, not here). role: the masks it joins (TPB_KEYR_* below). default: the JSON
 * value a record written before the field existed stands for, or NULL where every record
 * has it. option: the command line's flag that sweeps it. The struct, the mask bits, the JSON
 * writer, the copy, the comparison and `tpbal --print-schema` (the Python tools' tpbal_schema.json)
 * are made from these rows.
 */
#define TPB_CONFIG_KEY_ROWS(X)                                                                     \
    X(SHAPE, shape_name, char, [48], "shape", STR, _, LAYER, NULL, "--shape")                      \
    X(M, m, long, , "m", LONG, _, LAYER, NULL, "--shape")                                          \
    X(N, n, long, , "n", LONG, _, LAYER, NULL, "--shape")                                          \
    X(K, k, long, , "k", LONG, _, LAYER, NULL, "--shape")                                          \
    X(TP, tp, int, , "tp", INT, _, GROUP, NULL, "--tp")                                            \
    X(PLACEMENT, placement, tpb_placement_t, , "placement", ENUM, tpb_placement_name, GROUP, NULL, \
      "--tp-placement")                                                                            \
    X(SPLIT, split, tpb_split_t, , "split", ENUM, tpb_split_name, SPLIT, NULL, "--split")          \
    X(SEQPAR, seqpar, tpb_seqpar_t, , "sequence_parallel", ENUM, tpb_seqpar_name, VARIANT,         \
      "\"off\"", "--sequence-parallel")                                                            \
    X(POLICY, policy, tpb_policy_t, , "policy", ENUM, tpb_policy_name, POLICY, NULL, "--policy")   \
    X(CHUNKS, chunks, int, , "chunks", INT, _, NONE, "0", "--chunks")                              \
    X(COMM_ONLY, comm_only, int, , "comm_only", FLAG, _, LAYER, NULL, "--comm-only")

/* The fields, for the struct and for the members of the structs that embed it. */
#define TPB_KEY_DECL_(BIT, field, type, dim, ...) type field dim;
#define TPB_CONFIG_KEY_FIELDS TPB_CONFIG_KEY_ROWS(TPB_KEY_DECL_)

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

/* A row's position, then its mask bit. */
#define TPB_KEY_INDEX_(BIT, ...) TPB_KEYI_##BIT,
enum { TPB_CONFIG_KEY_ROWS(TPB_KEY_INDEX_) TPB_KEY_NFIELDS };
#define TPB_KEY_BIT_(BIT, ...) TPB_KEY_##BIT = 1u << TPB_KEYI_##BIT,
enum { TPB_CONFIG_KEY_ROWS(TPB_KEY_BIT_) };
_Static_assert(TPB_KEY_NFIELDS <= 31, "a config key's mask is an int");

/* The masks a row's role joins: LAYER what a layer is, whatever its TP degree, placement,
 * policy and chunks; VARIANT how a shape is run beyond its split (what a --block's GEMMs
 * share besides the TP degree and placement); CHOICE one config among those of a shape at a
 * TP degree (what an answer names); BLOCK what the GEMMs of one --block share. */
enum {
    TPB_KEYR_NONE = 0,
    TPB_KEYR_IN_LAYER = 1,
    TPB_KEYR_IN_VARIANT = 2,
    TPB_KEYR_IN_CHOICE = 4,
    TPB_KEYR_IN_BLOCK = 8,
    TPB_KEYR_LAYER = TPB_KEYR_IN_LAYER,
    TPB_KEYR_SPLIT = TPB_KEYR_IN_LAYER | TPB_KEYR_IN_CHOICE,
    TPB_KEYR_VARIANT =
        TPB_KEYR_IN_LAYER | TPB_KEYR_IN_VARIANT | TPB_KEYR_IN_CHOICE | TPB_KEYR_IN_BLOCK,
    TPB_KEYR_POLICY = TPB_KEYR_IN_CHOICE | TPB_KEYR_IN_BLOCK,
    TPB_KEYR_GROUP = TPB_KEYR_IN_BLOCK
};
#define TPB_KEY_IN_(BIT, field, type, dim, json, kind, fn, role, ...)                              \
    | ((TPB_KEYR_##role & TPB_KEY_GROUP_) ? (unsigned)TPB_KEY_##BIT : 0u)
#define TPB_KEY_ALL_(BIT, ...) | (unsigned)TPB_KEY_##BIT

/** The fields a JSON object, a label or a comparison takes, by group. */
enum {
    TPB_KEY_SIZES = TPB_KEY_M | TPB_KEY_N | TPB_KEY_K,
#define TPB_KEY_GROUP_ TPB_KEYR_IN_LAYER
    TPB_KEY_LAYER = 0u TPB_CONFIG_KEY_ROWS(TPB_KEY_IN_),
#undef TPB_KEY_GROUP_
#define TPB_KEY_GROUP_ TPB_KEYR_IN_VARIANT
    TPB_KEY_VARIANT = 0u TPB_CONFIG_KEY_ROWS(TPB_KEY_IN_),
#undef TPB_KEY_GROUP_
#define TPB_KEY_GROUP_ TPB_KEYR_IN_CHOICE
    TPB_KEY_CHOICE = 0u TPB_CONFIG_KEY_ROWS(TPB_KEY_IN_),
#undef TPB_KEY_GROUP_
#define TPB_KEY_GROUP_ TPB_KEYR_IN_BLOCK
    TPB_KEY_BLOCK = 0u TPB_CONFIG_KEY_ROWS(TPB_KEY_IN_),
#undef TPB_KEY_GROUP_
    TPB_KEY_ALL = 0u TPB_CONFIG_KEY_ROWS(TPB_KEY_ALL_)
};

/** The JSON keys of the fields (the rows' order; a FLAG row is not written) into the open
 *  object js. */
void tpb_config_key_json(tpb_buf_t *js, const tpb_config_key_t *k, unsigned fields);

/** The same, each key after prefix ("best_": best_split, ...). */
void tpb_config_key_json_as(tpb_buf_t *js, const char *prefix, const tpb_config_key_t *k,
                            unsigned fields);

/** Copy the fields of src into dst (the others stay). */
void tpb_config_key_take(tpb_config_key_t *dst, const tpb_config_key_t *src, unsigned fields);

/** 1 if a and b agree on every one of fields. Pure. */
int tpb_config_key_same(const tpb_config_key_t *a, const tpb_config_key_t *b, unsigned fields);

/** -1, 0 or 1: a before, as or after b by fields, in the rows' order. Pure. */
int tpb_config_key_cmp(const tpb_config_key_t *a, const tpb_config_key_t *b, unsigned fields);

/** "row+sp weighted": the split (with sequence parallelism) and the policy. Per thread,
 *  overwritten by the next call. */
const char *tpb_config_key_label(const tpb_config_key_t *k);

/** "row+sp": the split, with sequence parallelism (and "+json=name" for another variant
 *  row not at its default). Per thread, overwritten by the next call. */
const char *tpb_config_key_split(const tpb_config_key_t *k);

/** " sequence parallel", or "" where the config has none: the words a line adds. Static. */
const char *tpb_config_key_variant(const tpb_config_key_t *k);

/** The rows as JSON into js (an array of objects: field, json, type, kind, groups, default
 *  where older records lack it), what `tpbal --print-schema` prints. */
void tpb_config_key_schema(tpb_buf_t *js);

/** 1 if a and b may be measured side by side (--interleave): the same layer, TP degree and
 *  placement, other policies (or chunk counts). Pure. */
int tpb_config_key_side_by_side(const tpb_config_key_t *a, const tpb_config_key_t *b);

#endif /* TPB_CONFIG_KEY_H */
