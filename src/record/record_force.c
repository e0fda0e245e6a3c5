/* record_force.c - --force: the files an earlier run in --out wrote, and their removal once
 * this run's first files are in place (record_impl.h). */
#include <string.h>

#include "base/jsonread.h"
#include "record/outfile.h"
#include "record/record_impl.h"

/* Files an earlier run wrote by name (a run record without its "files" list): the result
 * files, trace.json, trace-NNN.json, and tpbal's temporaries. */
static int earlier_name(const char *name)
{
    size_t n = strlen(name);
    if (strcmp(name, "results.jsonl") == 0 || strcmp(name, "results.csv") == 0 ||
        strcmp(name, "ranks.csv") == 0 || strcmp(name, "trace.json") == 0 ||
        tpb_outfile_is_temporary(name))
        return 1;
    if (n < 11 || strncmp(name, "trace-", 6) != 0 || strcmp(name + n - 5, ".json") != 0)
        return 0;
    for (size_t i = 6; i < n - 5; i++)
        if (name[i] < '0' || name[i] > '9')
            return 0;
    return 1;
}

/* --force: the files an earlier run in out_dir wrote, as its run record lists them (else by
 * name), and tpbal's temporaries; *n of them into names (max). */
int tpb_record_earlier_files(const tpb_record_t *s, char (*names)[TPB_OUTFILE_NAME], int max)
{
    static char line[1 << 20];
    tpb_jv_t run = {.kind = TPB_JV_NULL};
    int n = tpb_outdir_matching(s->run.out_dir, tpb_outfile_is_temporary, names, max);
    n = n < 0 ? 0 : n;
    if (tpb_outfile_first_line(s->run.out_dir, "results.jsonl", line, sizeof(line)) != TPB_OK ||
        tpb_json_parse(line, strlen(line), "results.jsonl", &run) != TPB_OK) {
        tpb_jv_free(&run);
        int more = tpb_outdir_matching(s->run.out_dir, earlier_name, names + n, max - n);
        return n + (more > 0 ? more : 0);
    }
    const tpb_jv_t *files = tpb_jv_get(&run, "files"), *status = tpb_jv_get(&run, "status");
    /* a run that never ended (killed) lists the files of its start only: its traces are
     * found by their names, as a record without the list */
    if (status && status->kind == TPB_JV_STR && strcmp(status->str, "running") == 0)
        files = NULL;
    for (int i = 0; files && files->kind == TPB_JV_ARR && i < files->n && n < max; i++) {
        const tpb_jv_t *f = &files->items[i];
        if (f->kind == TPB_JV_STR && earlier_name(f->str))
            snprintf(names[n++], TPB_OUTFILE_NAME, "%s", f->str);
    }
    if (!files) { /* a record of a version before the list, or of a run that never ended */
        int more = tpb_outdir_matching(s->run.out_dir, earlier_name, names + n, max - n);
        n += more > 0 ? more : 0;
    }
    tpb_jv_free(&run);
    return n;
}

/* --force, once this run's first files are in place: remove what an earlier run wrote
 * that this run has not replaced. Names not tpbal's (a user's trace-mynotes.json) stay. */
tpb_status_t tpb_record_replace_earlier(tpb_record_t *s, char (*names)[TPB_OUTFILE_NAME], int n)
{
    const char *gone[n > 0 ? n : 1];
    int k = 0;
    for (int i = 0; i < n; i++) {
        int ours = 0;
        for (int j = 0; j < s->nfiles && !ours; j++)
            ours = strcmp(s->files[j], names[i]) == 0;
        if (!ours)
            gone[k++] = names[i];
    }
    return tpb_outdir_remove(s->run.out_dir, gone, k);
}
