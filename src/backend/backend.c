/* backend.c - the registry of backend classes and the input fill they share. */
#include "backend/backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "base/sizes.h"

/* the GPU vendors of src/backend/vendors.inc (TPB_GPU_VENDOR_ROWS: configure), then the host */
#define TPB_GPU_VENDOR(name) &tpb_backend_##name,
#define TPB_HOST_CLASS &tpb_backend_host
const tpb_backend_class_t *const tpb_backends[] = {TPB_GPU_VENDOR_ROWS TPB_HOST_CLASS, NULL};
#undef TPB_GPU_VENDOR
#undef TPB_HOST_CLASS

const tpb_backend_class_t *tpb_backend_find(const char *name)
{
    int i = 0;
    for (; tpb_backends[i]; i++) {
        const tpb_backend_class_t *b = tpb_backends[i];
        if (strcmp(name, "auto") == 0 ? b->built && b->device_count() > 0
                                      : strcmp(name, b->name) == 0)
            return b;
    }
    return strcmp(name, "auto") == 0 ? tpb_backends[i - 1] : NULL;
}

int tpb_backend_supports(const tpb_backend_class_t *b, const tpb_backend_cfg_t *cfg,
                         tpb_coll_t kind, int unequal, char *why, size_t cap)
{
    const tpb_backend_cap_t *equal_only = NULL;
    for (int i = 0; i < b->ncaps; i++) {
        const tpb_backend_cap_t *r = &b->caps[i];
        if (r->kind != kind || !(r->comms & (1u << cfg->comm)) || !(r->dtypes & (1u << cfg->dtype)))
            continue;
        if (!unequal || r->unequal)
            return 1;
        equal_only = r;
    }
    if (equal_only)
        snprintf(why, cap, "the %s backend's %s needs equal blocks under --comm %s (%s)", b->name,
                 tpb_coll_label(kind), tpb_comm_kind_name(cfg->comm), equal_only->call);
    else
        snprintf(why, cap, "the %s backend has no %s under --comm %s in %s", b->name,
                 tpb_coll_label(kind), tpb_comm_kind_name(cfg->comm), tpb_dtype_name(cfg->dtype));
    return 0;
}

const char *tpb_backend_names(void)
{
    static char names[128];
    if (names[0])
        return names;
    size_t len = (size_t)snprintf(names, sizeof(names), "auto");
    int n = 0;
    while (tpb_backends[n])
        n++;
    for (int i = 0; i < n && len < sizeof(names); i++)
        len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
                                i == n - 1 ? " or " : ", ", tpb_backends[i]->name);
    return names;
}

tpb_status_t tpb_backend_fill(tpb_device_t *dev, void *dst, long rows, long cols, long row0,
                              long col0, uint64_t seed, uint32_t id, double scale, tpb_dtype_t dt)
{
    size_t bytes = 0;
    if (!tpb_size_mul3(rows, cols, tpb_dtype_in_size(dt), &bytes))
        return tpb_err_set(TPB_ERR_NOMEM, "a %ldx%ld input: size overflows", rows, cols);
    void *enc = malloc(bytes + 1);
    if (!enc)
        return tpb_err_set(TPB_ERR_NOMEM, "no host memory to generate a %ldx%ld input", rows, cols);
    tpb_status_t st = tpb_rng_encode(enc, rows, cols, row0, col0, seed, id, scale, dt, 0);
    if (st == TPB_OK)
        st = tpb_dev_copy(dev, dst, enc, bytes, TPB_COPY_TO_BACKEND);
    free(enc);
    return st;
}

tpb_status_t tpb_backend_fill_uniform(tpb_device_t *dev, void *dst, size_t n, uint64_t seed,
                                      tpb_dtype_t dt)
{
    size_t bytes = 0;
    if (!tpb_size_mul3((long)n, 1, tpb_dtype_in_size(dt), &bytes))
        return tpb_err_set(TPB_ERR_NOMEM, "an input of %zu elements: size overflows", n);
    void *enc = malloc(bytes + 1);
    if (!enc)
        return tpb_err_set(TPB_ERR_NOMEM, "no host memory for an input of %zu elements", n);
    tpb_rng_uniform_encode(enc, n, seed, dt);
    tpb_status_t st = tpb_dev_copy(dev, dst, enc, bytes, TPB_COPY_TO_BACKEND);
    free(enc);
    return st;
}
