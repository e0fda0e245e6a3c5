/* preset.c - reading named shape files. */
#include "cli/preset.h"

#include "base/infile.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/suggest.h"

#include "tpb_config.h"

static int readable(const char *p)
{
    return access(p, R_OK) == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* The presets of the folders (names of their *.shapes files, each once, at most max, sorted). */
static int preset_names(const char *const *dirs, char names[][48], int max)
{
    int n = 0;
    for (int i = 0; i < 3; i++) {
        DIR *d = dirs[i] && dirs[i][0] ? opendir(dirs[i]) : NULL;
        for (struct dirent *e; d && (e = readdir(d)) && n < max;) {
            size_t len = strlen(e->d_name);
            if (len <= 7 || len - 7 >= 48 || strcmp(e->d_name + len - 7, ".shapes") != 0)
                continue;
            snprintf(names[n], 48, "%.*s", (int)(len - 7), e->d_name);
            int dup = 0;
            for (int j = 0; j < n && !dup; j++)
                dup = strcmp(names[j], names[n]) == 0;
            n += !dup;
        }
        if (d)
            closedir(d);
    }
    qsort(names, (size_t)n, sizeof(names[0]), by_name);
    return n;
}

/* No preset of that name: the nearest name if one is near, and the names there are. */
static tpb_status_t not_found(const char *name, const char *const *dirs)
{
    char names[64][48], list[256] = "";
    const char *ptr[64];
    int n = preset_names(dirs, names, 64);
    for (int i = 0; i < n; i++) {
        ptr[i] = names[i];
        size_t len = strlen(list);
        if (len + strlen(names[i]) + 6 < sizeof(list))
            snprintf(list + len, sizeof(list) - len, "%s%s", len ? ", " : "", names[i]);
        else if (!strstr(list, "..."))
            snprintf(list + len, sizeof(list) - len, ", ...");
    }
    int at = tpb_suggest(name, ptr, n);
    if (at >= 0)
        return tpb_err_set(TPB_ERR_INVALID, "--preset '%s': no such preset: did you mean %s? (%s)",
                           name, names[at], list);
    if (n)
        return tpb_err_set(TPB_ERR_INVALID, "--preset '%s': no such preset; the presets: %s", name,
                           list);
    return tpb_err_set(TPB_ERR_INVALID,
                       "--preset '%s': no %s.shapes in $TPBAL_PRESET_DIR, %s or %s", name, name,
                       TPB_SRC_PRESET_DIR, TPB_DATA_PRESET_DIR);
}

tpb_status_t tpb_preset_find(const char *name, char *path, size_t cap)
{
    if (strchr(name, '/')) {
        if ((size_t)snprintf(path, cap, "%s", name) >= cap)
            return tpb_err_set(TPB_ERR_INVALID,
                               "--preset: the path has %zu characters: at most "
                               "%zu",
                               strlen(name), cap - 1);
        if (readable(path))
            return TPB_OK;
        return tpb_err_set(TPB_ERR_INVALID, "--preset '%s': file not readable", name);
    }
    const char *dirs[3] = {getenv("TPBAL_PRESET_DIR"), TPB_SRC_PRESET_DIR, TPB_DATA_PRESET_DIR};
    for (int i = 0; i < 3; i++) {
        if (!dirs[i] || !dirs[i][0])
            continue;
        if ((size_t)snprintf(path, cap, "%s/%s.shapes", dirs[i], name) >= cap)
            return tpb_err_set(TPB_ERR_INVALID,
                               "--preset '%s': %s/%s.shapes is longer than the %zu characters a "
                               "path may have here: shorten $TPBAL_PRESET_DIR or give the file",
                               name, i == 0 ? "$TPBAL_PRESET_DIR" : dirs[i], name, cap - 1);
        if (readable(path))
            return TPB_OK;
    }
    return not_found(name, dirs);
}

static tpb_status_t parse_line(char *line, const char *origin, int lineno, tpb_shape_t *s)
{
    char name[48], split[16] = "";
    long m, n, k;
    size_t lead = strspn(line, " \t"), nlen = strcspn(line + lead, " \t\r");
    if (nlen >= sizeof(name))
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s:%d: the name '%.*s...' has %zu characters; at most %zu fit", origin,
                           lineno, 20, line + lead, nlen, sizeof(name) - 1);
    int got = sscanf(line, "%47s %ld %ld %ld %15s", name, &m, &n, &k, split);
    if (got < 4 || m < 1 || n < 1 || k < 1 || m > TPB_MAX_DIM || n > TPB_MAX_DIM ||
        k > TPB_MAX_DIM || (got == 5 && strcmp(split, "row") != 0 && strcmp(split, "col") != 0))
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s:%d: expected 'name M N K [row|col]' with sizes from 1 to %ld",
                           origin, lineno, TPB_MAX_DIM);
    memset(s, 0, sizeof(*s));
    memcpy(s->name, name, sizeof(s->name));
    s->m = m;
    s->n = n;
    s->k = k;
    s->splits = got < 5 ? 0 : strcmp(split, "row") == 0 ? TPB_SPLIT_ROW : TPB_SPLIT_COL;
    return TPB_OK;
}

tpb_status_t tpb_preset_parse(const char *text, const char *origin, tpb_shape_t *shapes, int max,
                              int *n)
{
    int count = 0, lineno = 0;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[512];
        lineno++;
        if (len >= sizeof(line))
            return tpb_err_set(TPB_ERR_INVALID, "%s:%d: line too long", origin, lineno);
        memcpy(line, p, len);
        line[len] = '\0';
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        if (strspn(line, " \t\r") != strlen(line)) {
            if (count == max)
                return tpb_err_set(TPB_ERR_INVALID, "%s: more than %d shapes", origin, max);
            TPB_CHECK_RET(parse_line(line, origin, lineno, &shapes[count]));
            count++;
        }
        p += len + (eol ? 1 : 0);
    }
    if (count == 0)
        return tpb_err_set(TPB_ERR_INVALID, "%s: no shapes in the file", origin);
    *n = count;
    return TPB_OK;
}

tpb_status_t tpb_preset_load(tpb_options_t *o)
{
    if (!o->preset[0])
        return TPB_OK;
    if (o->nshapes)
        return tpb_err_set(TPB_ERR_INVALID, "%s and --shape both given: use one",
                           o->model ? "--model" : "--preset");
    char path[1300];
    TPB_CHECK_RET(tpb_preset_find(o->preset, path, sizeof(path)));
    char *text;
    size_t len;
    TPB_CHECK_RET(tpb_infile_read(path, "--preset", TPB_INFILE_MAX, &text, &len, NULL));
    tpb_status_t st = tpb_preset_parse(text, path, o->shapes, TPB_MAX_SHAPES, &o->nshapes);
    free(text);
    return st;
}
