/*
 * repeat.h - --repeat N, kept by rank 0: what each pass's record says of every config (its
 * median step), of every policy over even (its verdict, record/verdict.h) and of every TP
 * degree's straggler (record/answer.h), and what the passes say together (base/passes.h):
 * the answer's lines over the passes and DIR/repeat.json. Each pass is a whole run of its
 * own in DIR/pass-K (its results, its answer); this adds what only several passes can say:
 * how much a config moves from pass to pass, a verdict that holds over them, and a
 * straggler that persists over them (doc/METRICS.md, "Repeated passes").
 */
#ifndef TPB_REPEAT_H
#define TPB_REPEAT_H

#include "base/buf.h"
#include "base/passes.h"
#include "record/record.h"
#include "record/verdict.h"

/** One config over the passes (a --block's block is one too). */
typedef struct {
    tpb_config_key_t key;
    int block;                              /**< 1: a --block's block */
    double step[TPB_PASSES_MAX];            /**< its median step per pass, us (NaN: none) */
    double half[TPB_PASSES_MAX];            /**< its median's 95 % log half-width (inf: none) */
    tpb_policy_verdict_t v[TPB_PASSES_MAX]; /**< over even per pass (has_v; NaN: none) */
    int has_v;                              /**< a policy other than even, with an even */
} tpb_repeat_cfg_t;

/** One TP degree's straggler over the passes. */
typedef struct {
    int tp;
    tpb_persistent_t p[TPB_PASSES_MAX]; /**< per pass (rank -1, of 0: no blocks there) */
} tpb_repeat_tp_t;

#define TPB_REPEAT_TPS 32

typedef struct {
    int passes, done;
    int world; /**< the passes' world size (the layer rate's groups at once) */
    tpb_repeat_cfg_t *c;
    int nc, cap;
    tpb_repeat_tp_t t[TPB_REPEAT_TPS];
    int nt;
} tpb_repeat_t;

void tpb_repeat_init(tpb_repeat_t *r, int passes);
void tpb_repeat_free(tpb_repeat_t *r);

/** The next pass's finished record (its configs, blocks and straggler blocks). */
tpb_status_t tpb_repeat_add(tpb_repeat_t *r, const tpb_record_t *rec);

/** A policy's ratio over even combined over the passes (base/passes.h), its verdict at
 *  the passes' level (disturbed where most passes were), and the passes disturbed and
 *  measured. */
tpb_passes_ratio_t tpb_repeat_over_even(const tpb_repeat_t *r, const tpb_repeat_cfg_t *c,
                                        int *disturbed, int *measured, tpb_verdict_t *verdict);

/** How sure a use line's pick over the passes is against its runner-up. */
typedef enum {
    TPB_SURE_NO_DATA, /**< no pass had both with an interval */
    TPB_SURE_YES,     /**< a GEMM's whole interval favours it; a block's is better beyond 5 % */
    TPB_SURE_DRAW,    /**< a block's within 5 %: either will do */
    TPB_SURE_NOT      /**< neither */
} tpb_sure_t;

/** A use line over the passes: pick for one question of its shape (or block). */
typedef struct {
    const tpb_repeat_cfg_t *pick, *next; /**< next: the runner-up (NULL: none) */
    int thr;                             /**< 1: throughput, 0: latency */
    int part;                            /**< a --block run's GEMM: "part SHAPE alone" */
    double step;                         /**< pick's passes' median step, us */
    tpb_passes_ratio_t pr;               /**< pick over next, combined over the passes */
    double margin, lo, hi;               /**< pick's advantage and its interval */
    tpb_sure_t sure;
} tpb_repeat_use_t;

/** A policy's verdict over even over the passes (tpb_repeat_over_even). */
typedef struct {
    const tpb_repeat_cfg_t *c;
    tpb_passes_ratio_t pr;
    int disturbed, measured;
    tpb_verdict_t verdict;
    double speedup, lo, hi;
} tpb_repeat_verdict_t;

/** The answer over the passes as data (repeat_use.c), rendered to the terminal and to
 *  repeat.json from the same values (repeat_render.c). */
typedef struct {
    const tpb_repeat_t *r;
    double spread_mid, spread_worst; /**< the configs' pass-to-pass spreads: median, most */
    int spread_n, spread_at;         /**< configs with one, and the most's index in r->c */
    tpb_repeat_verdict_t *v;
    tpb_passes_straggler_t *s; /**< per r->t[i] */
    tpb_repeat_use_t *u;
    int nv, ns, nu;
} tpb_repeat_answer_t;

/** Builds the answer over r's passes into *a: 0, or -1 where memory ran out. Pure. */
int tpb_repeat_answer_build(tpb_repeat_answer_t *a, const tpb_repeat_t *r);
void tpb_repeat_answer_free(tpb_repeat_answer_t *a);

/** The answer over the passes done: '#' lines into txt and the JSON members (configs,
 *  verdicts, stragglers, run_to_run) into the open object js. */
void tpb_repeat_answer(const tpb_repeat_t *r, tpb_buf_t *txt, tpb_buf_t *js);

/** The answer over the passes done printed on out, and DIR/repeat.json written (dir "":
 *  none), "finished" (record/seal.h disarmed). */
tpb_status_t tpb_repeat_finish(const tpb_repeat_t *r, FILE *out, const char *dir,
                               const char *command_line);

/** repeat.json's object opened in js with what every kind ("sweep", "fleet") has: type,
 *  kind, schema, command line, passes, passes done, status (NULL: "running", or "finished"
 *  once every pass is done), the passes' folders (those done). */
void tpb_repeat_json_head(tpb_buf_t *js, const char *kind, const char *command_line, int passes,
                          int done, const char *status);

/** js's object closed, a whole file's text. */
void tpb_repeat_json_close(tpb_buf_t *js);

/** js's object closed and written whole to dir/repeat.json; js freed. */
tpb_status_t tpb_repeat_json_save(tpb_buf_t *js, const char *dir);

/** DIR/repeat.json of the passes done so far (replaced whole: record/outfile.h), "running";
 *  and what it will say if the run ends before its next pass armed (record/seal.h). */
tpb_status_t tpb_repeat_write(const tpb_repeat_t *r, const char *dir, const char *command_line);

#endif /* TPB_REPEAT_H */
