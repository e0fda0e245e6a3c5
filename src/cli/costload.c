/* costload.c - reading --cost-profile: a built-in skew or a file of block costs. */
#include <stdio.h>
#include <stdlib.h>

#include "base/infile.h"
#include "cli/options.h"

/* A profile file is one number a block: a megabyte holds far more than the most blocks. */
#define COST_FILE_MAX ((size_t)16 << 20)

tpb_status_t tpb_options_load_cost(tpb_options_t *o)
{
    const char *spec = o->cost_spec;
    if (!spec[0])
        return TPB_OK;
    if (tpb_cost_profile_is_builtin(spec))
        return tpb_cost_profile_builtin(spec, &o->cost_profile);
    char *text = NULL, what[1100];
    size_t len = 0;
    int missing = 0;
    TPB_CHECK_RET(tpb_infile_read(spec, "--cost-profile", COST_FILE_MAX, &text, &len, &missing));
    if (missing)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--cost-profile '%s': no such file (give a file of block costs or "
                           "skew:R)",
                           spec);
    snprintf(what, sizeof(what), "--cost-profile %s", spec);
    tpb_status_t st = tpb_cost_profile_parse(text, len, what, &o->cost_profile);
    free(text);
    if (st == TPB_OK)
        snprintf(o->cost_profile.source, sizeof(o->cost_profile.source), "%s", spec);
    return st;
}
