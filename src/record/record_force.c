/* record_force.c - --force: the files an earlier run in --out wrote, and their removal once
 * this run's first files are in place (record_impl.h). */
#include <string.h>

#include "base/jsonread.h"
#include "record/outfile.h"
#include "record/record_impl.h"

/* A name a run writes as a file of its own in --out (what a record may list for --force to
 * remove): the result files, trace.json, trace-NNN.json. A list naming anything else (a
 * record tampered with) removes nothing of it. */
static int earlier_name(const char *name)
{
    size_t n = strlen(name);
    if (strcmp(name, "results.jsonl") == 0 || strcmp(name, "results.csv") == 0 ||
        strcmp(name, "ranks.csv") == 0 || strcmp(name, "trace.json") == 0)
        return 1;
    if (n < 11 || strncmp(name, "trace-", 6) != 0 || strcmp(name + n - 5, ".json") != 0)
        return 0;
    for (size_t i = 6; i < n - 5; i++)
        if (name[i] < '0' || name[i] > '9')
            return 0;
    return 1;
}

/* Add str to names[*n] (max) if it is a name a run writes and not there yet. */
static void add_name(char (*names)[TPB_OUTFILE_NAME], int *n, int max, const tpb_jv_t *v)
{
    if (!v || v->kind != TPB_JV_STR || !earlier_name(v->str) || *n >= max)
        return;
    for (int i = 0; i < *n; i++)
        if (strcmp(names[i], v->str) == 0)
            return;
    snprintf(names[(*n)++], TPB_OUTFILE_NAME, "%s", v->str);
}

/* --force: the files an earlier run in out_dir wrote, by its own records only: its run record's
 * "files" (written at its start and at its end) and each config record's "trace" (a run
 * killed between them lists its traces there); never by a name pattern, so that a file of the
 * user's there (a trace-777.json, a .notes.tmp.txt) stays. An earlier record that cannot be
 * read names nothing: nothing is removed (the files this run writes replace theirs by name).
 * *n of them into names (max). */
int tpb_record_earlier_files(const tpb_record_t *s, char (*names)[TPB_OUTFILE_NAME], int max)
{
    static char text[1 << 24];
    size_t len = 0;
    int n = 0;
    if (tpb_outfile_read_head(s->run.out_dir, "results.jsonl", text, sizeof(text), &len) != TPB_OK)
        return 0;
    for (char *line = text, *end; line < text + len && n < max; line = end + 1) {
        end = memchr(line, '\n', (size_t)(text + len - line));
        if (!end)
            break; /* a torn last line (a run killed while appending) */
        tpb_jv_t rec = {.kind = TPB_JV_NULL};
        if (tpb_json_parse(line, (size_t)(end - line), "results.jsonl", &rec) == TPB_OK) {
            const tpb_jv_t *type = tpb_jv_get(&rec, "type"), *files = tpb_jv_get(&rec, "files");
            int run = type && type->kind == TPB_JV_STR && strcmp(type->str, "run") == 0;
            for (int i = 0; run && files && files->kind == TPB_JV_ARR && i < files->n; i++)
                add_name(names, &n, max, &files->items[i]);
            if (!run)
                add_name(names, &n, max, tpb_jv_get(&rec, "trace"));
        }
        tpb_jv_free(&rec);
    }
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
