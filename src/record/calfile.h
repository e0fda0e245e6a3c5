/*
 * calfile.h - the calibration file: calibrated speeds saved for reuse.
 *
 * The file is CSV with the header
 *   split,m,n,k,tp,dtype,rank,host,gflops,spread,samples
 * one line per rank and config key; a key is (split, m, n, k, tp, dtype).
 * Files of the first format (without spread and samples) are still read.
 * Parsing is pure and refuses every value out of range in its own type.
 */
#ifndef TPB_CALFILE_H
#define TPB_CALFILE_H

#include "base/config_key.h"
#include "base/dtype.h"
#include "base/topo.h"
#include "base/tpb_status.h"
#include "base/tpb_types.h"

/**
 * One rank's speed for the weighted policy and how much to trust it: speed is
 * in GFLOP/s (FLOP of one GEMM / median time) when measured (calibration or
 * this file), unit-less when given by --speeds; spread is the relative
 * interquartile range of the times, (q75 - q25) / median (NaN when given);
 * samples the GEMMs timed, warm-up excluded. X(C type, name, MPI datatype):
 * the struct and its MPI datatype (run/wire.c) come from this one list.
 */
#define TPB_CAL_SPEED_FIELDS(X)                                                                    \
    X(double, speed, MPI_DOUBLE) X(double, spread, MPI_DOUBLE) X(int, samples, MPI_INT)

#define TPB_CAL_FIELD_(type, name, mpi) type name;
typedef struct {
    TPB_CAL_SPEED_FIELDS(TPB_CAL_FIELD_)
} tpb_cal_speed_t;
#undef TPB_CAL_FIELD_

/** What a calibrated speed depends on of a config's identity: its split, M, N, K and TP
 *  degree (with the dtype); a key field that changes a rank's speed joins here. */
#define TPB_CAL_KEY (TPB_KEY_SPLIT | TPB_KEY_SIZES | TPB_KEY_TP)

typedef struct {
    TPB_CONFIG_KEY; /**< the config it was measured for: TPB_CAL_KEY's fields, the rest 0 */
    tpb_dtype_t dtype;
    int rank;
    char host[TPB_HOST_LEN];
    double gflops;
    double spread; /**< relative IQR of the calibration (NaN if the file had none) */
    int samples;   /**< GEMMs timed (0 if the file had none) */
} tpb_cal_entry_t;

typedef struct {
    tpb_cal_entry_t *e;
    int n, cap;
} tpb_calfile_t;

/** Largest speed a calibration file may hold, in GFLOP/s (a zettaFLOP/s per rank). */
#define TPB_CAL_MAX_GFLOPS 1e12

/** Read path into t (empty table if the file does not exist). TPB_ERR_INVALID
 *  naming the file and line if it cannot be read or parsed, or if it is not a
 *  regular text file (a device, FIFO, a NUL byte) of at most TPB_INFILE_MAX bytes. */
tpb_status_t tpb_calfile_load(const char *path, tpb_calfile_t *t);

/** Parse CSV text (with header) into t. */
tpb_status_t tpb_calfile_parse(char *text, const char *origin, tpb_calfile_t *t);

/**
 * Speeds of ranks [r0, r0+count) for a config (TPB_CAL_KEY of key) into speeds[count]. Returns 1 if
 * all are present and, when hosts is not NULL, each was measured on hosts[r - r0]; else 0, and
 * *stale (may be NULL) names the first rank whose row is of another host (-1 if none). O(count log
 * n).
 */
int tpb_calfile_lookup(const tpb_calfile_t *t, const tpb_config_key_t *key, tpb_dtype_t dt, int r0,
                       int count, const char *const *hosts, tpb_cal_speed_t *speeds, int *stale);

/** Add (or replace) one rank's speed for a key; the table stays sorted by key. */
tpb_status_t tpb_calfile_put(tpb_calfile_t *t, const tpb_cal_entry_t *e);

/** Write the table to path atomically (write then rename). */
tpb_status_t tpb_calfile_save(const char *path, const tpb_calfile_t *t);

void tpb_calfile_free(tpb_calfile_t *t);

#endif /* TPB_CALFILE_H */
