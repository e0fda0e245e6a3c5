/* config_key.c - a config's identity: its JSON keys, label and comparisons. */
#include "base/config_key.h"

#include <stdio.h>
#include <string.h>

/* One key, after the prefix. */
static void key(tpb_buf_t *js, const char *prefix, const char *name)
{
    char k[64];
    snprintf(k, sizeof(k), "%s%s", prefix, name);
    tpb_json_key(js, k);
}

void tpb_config_key_json_as(tpb_buf_t *js, const char *prefix, const tpb_config_key_t *k,
                            unsigned fields)
{
    if (fields & TPB_KEY_SHAPE) {
        key(js, prefix, "shape");
        tpb_json_str(js, k->shape_name);
    }
    static const char *const sizes[] = {"m", "n", "k"};
    const long v[] = {k->m, k->n, k->k};
    for (int i = 0; (fields & TPB_KEY_SIZES) && i < 3; i++) {
        key(js, prefix, sizes[i]);
        tpb_json_int(js, v[i]);
    }
    if (fields & TPB_KEY_TP) {
        key(js, prefix, "tp");
        tpb_json_int(js, k->tp);
    }
    const char *names[] = {"placement", "split", "sequence_parallel", "policy"};
    const char *values[] = {tpb_placement_name(k->placement), tpb_split_name(k->split),
                            tpb_seqpar_name(k->seqpar), tpb_policy_name(k->policy)};
    const unsigned flags[] = {TPB_KEY_PLACEMENT, TPB_KEY_SPLIT, TPB_KEY_SEQPAR, TPB_KEY_POLICY};
    for (int i = 0; i < 4; i++)
        if (fields & flags[i]) {
            key(js, prefix, names[i]);
            tpb_json_str(js, values[i]);
        }
    if (fields & TPB_KEY_CHUNKS) {
        key(js, prefix, "chunks");
        tpb_json_int(js, k->chunks);
    }
}

void tpb_config_key_json(tpb_buf_t *js, const tpb_config_key_t *k, unsigned fields)
{
    tpb_config_key_json_as(js, "", k, fields);
}

void tpb_config_key_take(tpb_config_key_t *dst, const tpb_config_key_t *src, unsigned fields)
{
    if (fields & TPB_KEY_TP)
        dst->tp = src->tp;
    if (fields & TPB_KEY_PLACEMENT)
        dst->placement = src->placement;
    if (fields & TPB_KEY_SPLIT)
        dst->split = src->split;
    if (fields & TPB_KEY_SEQPAR)
        dst->seqpar = src->seqpar;
    if (fields & TPB_KEY_POLICY)
        dst->policy = src->policy;
    if (fields & TPB_KEY_SIZES) {
        dst->m = src->m;
        dst->n = src->n;
        dst->k = src->k;
    }
    if (fields & TPB_KEY_SHAPE)
        memcpy(dst->shape_name, src->shape_name, sizeof(dst->shape_name));
    if (fields & TPB_KEY_CHUNKS)
        dst->chunks = src->chunks;
    if (fields & TPB_KEY_COMM_ONLY)
        dst->comm_only = src->comm_only;
}

int tpb_config_key_same(const tpb_config_key_t *a, const tpb_config_key_t *b, unsigned fields)
{
    return (!(fields & TPB_KEY_TP) || a->tp == b->tp) &&
           (!(fields & TPB_KEY_PLACEMENT) || a->placement == b->placement) &&
           (!(fields & TPB_KEY_SPLIT) || a->split == b->split) &&
           (!(fields & TPB_KEY_SEQPAR) || a->seqpar == b->seqpar) &&
           (!(fields & TPB_KEY_POLICY) || a->policy == b->policy) &&
           (!(fields & TPB_KEY_SIZES) || (a->m == b->m && a->n == b->n && a->k == b->k)) &&
           (!(fields & TPB_KEY_SHAPE) || strcmp(a->shape_name, b->shape_name) == 0) &&
           (!(fields & TPB_KEY_CHUNKS) || a->chunks == b->chunks) &&
           (!(fields & TPB_KEY_COMM_ONLY) || a->comm_only == b->comm_only);
}

const char *tpb_config_key_label(const tpb_config_key_t *k)
{
    static _Thread_local char label[48];
    snprintf(label, sizeof(label), "%s %s", tpb_split_label(k->split, k->seqpar),
             tpb_policy_name(k->policy));
    return label;
}

const char *tpb_config_key_split(const tpb_config_key_t *k)
{
    return tpb_split_label(k->split, k->seqpar);
}

const char *tpb_config_key_variant(const tpb_config_key_t *k)
{
    return k->seqpar == TPB_SEQPAR_ON ? " sequence parallel" : "";
}

int tpb_config_key_side_by_side(const tpb_config_key_t *a, const tpb_config_key_t *b)
{
    return tpb_config_key_same(a, b, TPB_KEY_LAYER | TPB_KEY_TP | TPB_KEY_PLACEMENT);
}
