/* wire.c - MPI datatypes of the structs that cross MPI, from their field lists. */
#include "run/wire.h"

#include <stddef.h>

#define MAX_FIELDS 16

/* One field list, as MPI_Type_create_struct takes it. */
typedef struct {
    int n;
    int len[MAX_FIELDS];
    MPI_Aint disp[MAX_FIELDS];
    MPI_Datatype type[MAX_FIELDS];
    size_t size, field_bytes;
} layout_t;

static void add(layout_t *l, size_t offset, MPI_Datatype type, size_t bytes)
{
    l->len[l->n] = 1;
    l->disp[l->n] = (MPI_Aint)offset;
    l->type[l->n] = type;
    l->field_bytes += bytes;
    l->n++;
}

/* One entry per X(type, name, mpi) of a field list; STRUCT_ names the struct. */
#define X_FIELD(type, name, mpi) add(l, offsetof(STRUCT_, name), mpi, sizeof(type));

static void layout(tpb_wire_t w, layout_t *l)
{
    l->n = 0;
    l->field_bytes = 0;
    switch (w) {
    case TPB_WIRE_RANK_INFO:
#define STRUCT_ tpb_rank_info_t
        TPB_RANK_INFO_FIELDS(X_FIELD)
        l->size = sizeof(STRUCT_);
#undef STRUCT_
        break;
    case TPB_WIRE_ROUND_RANK:
#define STRUCT_ tpb_round_rank_t
        TPB_ROUND_RANK_FIELDS(X_FIELD)
        l->size = sizeof(STRUCT_);
#undef STRUCT_
        break;
    case TPB_WIRE_MARK:
#define STRUCT_ tpb_mark_t
        TPB_MARK_FIELDS(X_FIELD)
        l->size = sizeof(STRUCT_);
#undef STRUCT_
        break;
    case TPB_WIRE_CAL_SPEED:
    case TPB_WIRE_COUNT: /* not a type: never asked for */
#define STRUCT_ tpb_cal_speed_t
        TPB_CAL_SPEED_FIELDS(X_FIELD)
        l->size = sizeof(STRUCT_);
#undef STRUCT_
        break;
    }
}

size_t tpb_wire_struct_size(tpb_wire_t w)
{
    layout_t l;
    layout(w, &l);
    return l.size;
}

size_t tpb_wire_field_bytes(tpb_wire_t w)
{
    layout_t l;
    layout(w, &l);
    return l.field_bytes;
}

tpb_status_t tpb_wire_type(tpb_wire_t w, MPI_Datatype *type)
{
    layout_t l;
    layout(w, &l);
    MPI_Datatype packed, sized;
    if (MPI_Type_create_struct(l.n, l.len, l.disp, l.type, &packed) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Type_create_struct", "wire type", __FILE__, __LINE__);
    int rc = MPI_Type_create_resized(packed, 0, (MPI_Aint)l.size, &sized);
    MPI_Type_free(&packed);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Type_create_resized", "wire type", __FILE__,
                            __LINE__);
    if (MPI_Type_commit(&sized) != MPI_SUCCESS) {
        MPI_Type_free(&sized);
        return tpb_err_call(TPB_ERR_MPI, "MPI_Type_commit", "wire type", __FILE__, __LINE__);
    }
    *type = sized;
    return TPB_OK;
}
