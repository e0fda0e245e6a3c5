/*
 * wire.h - the structs that cross MPI, sent by type: MPI derived datatypes
 * built from the same field lists (X macros) that declare the structs, so a
 * field added to a struct is sent without another change, and sizes are never
 * counted by hand.
 */
#ifndef TPB_WIRE_H
#define TPB_WIRE_H

#include <mpi.h>

#include "base/adaptive.h"
#include "base/tpb_status.h"
#include "record/calfile.h"
#include "record/result.h"

/** The structs that have a datatype. */
typedef enum {
    TPB_WIRE_RANK_INFO = 0, /**< tpb_rank_info_t (record/result.h) */
    TPB_WIRE_ROUND_RANK,    /**< tpb_round_rank_t (base/adaptive.h) */
    TPB_WIRE_CAL_SPEED,     /**< tpb_cal_speed_t (record/calfile.h) */
    TPB_WIRE_MARK,          /**< tpb_mark_t (base/timeline.h) */
    TPB_WIRE_COUNT
} tpb_wire_t;

/**
 * A committed MPI datatype for one element of struct w, its extent equal to
 * the struct's size (so arrays of it can be sent). Free it with MPI_Type_free.
 * TPB_ERR_MPI (with a message) if MPI refuses; *type is set only on success.
 */
tpb_status_t tpb_wire_type(tpb_wire_t w, MPI_Datatype *type);

/** sizeof of struct w, and the sum of its fields' sizes (what the datatype carries). */
size_t tpb_wire_struct_size(tpb_wire_t w);
size_t tpb_wire_field_bytes(tpb_wire_t w);

#endif /* TPB_WIRE_H */
