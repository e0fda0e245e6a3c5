/* outfile.c - write-then-rename result files. */
#include "record/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static tpb_status_t mkdir_p(const char *dir)
{
    char path[1024];
    if (strlen(dir) >= sizeof(path))
        return tpb_err_set(TPB_ERR_IO, "--out '%s': path too long", dir);
    strcpy(path, dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return tpb_err_set(TPB_ERR_IO, "--out '%s': cannot create %s: %s", dir, path,
                               strerror(errno));
        *p = '/';
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return tpb_err_set(TPB_ERR_IO, "--out '%s': cannot create it: %s", dir, strerror(errno));
    return TPB_OK;
}

tpb_status_t tpb_outdir_prepare(const char *dir)
{
    TPB_CHECK_RET(mkdir_p(dir));
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return tpb_err_set(TPB_ERR_IO, "--out '%s': not a directory", dir);
    char probe[1200];
    snprintf(probe, sizeof(probe), "%s/.tpbal-probe.%ld", dir, (long)getpid());
    FILE *f = fopen(probe, "w");
    if (!f)
        return tpb_err_set(TPB_ERR_IO, "--out '%s': directory is not writable: %s", dir,
                           strerror(errno));
    fclose(f);
    unlink(probe);
    return TPB_OK;
}

tpb_status_t tpb_outfile_check_writable(const char *path, const char *what)
{
    char dir[1200], probe[1300];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof(dir), ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    snprintf(probe, sizeof(probe), "%s/.tpbal-probe.%ld", dir, (long)getpid());
    FILE *f = fopen(probe, "w");
    if (!f)
        return tpb_err_set(TPB_ERR_IO, "%s %s: cannot write in '%s': %s", what, path, dir,
                           strerror(errno));
    fclose(f);
    unlink(probe);
    return TPB_OK;
}

int tpb_outdir_has_results(const char *dir)
{
    char p[1200];
    snprintf(p, sizeof(p), "%s/results.jsonl", dir);
    return access(p, F_OK) == 0;
}

/* A file an earlier tpbal run writes in its --out directory. */
static int is_ours(const char *name)
{
    size_t n = strlen(name);
    return strcmp(name, "results.jsonl") == 0 || strcmp(name, "results.csv") == 0 ||
           strcmp(name, "ranks.csv") == 0 ||
           (strncmp(name, "trace-", 6) == 0 && n > 11 && strcmp(name + n - 5, ".json") == 0) ||
           (name[0] == '.' && strstr(name, ".tmp."));
}

tpb_status_t tpb_outdir_clear(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return tpb_err_set(TPB_ERR_IO, "--out '%s': cannot list: %s", dir, strerror(errno));
    tpb_status_t st = TPB_OK;
    for (struct dirent *e = readdir(d); e && st == TPB_OK; e = readdir(d)) {
        char p[1200];
        if (!is_ours(e->d_name))
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        if (unlink(p) != 0 && errno != ENOENT)
            st = tpb_err_set(TPB_ERR_IO, "--force: cannot remove %s: %s", p, strerror(errno));
    }
    closedir(d);
    return st;
}

tpb_status_t tpb_outstream_open(tpb_outstream_t *s, const char *dir, const char *name)
{
    snprintf(s->final, sizeof(s->final), "%s/%s", dir, name);
    snprintf(s->tmp, sizeof(s->tmp), "%s/.%s.tmp.%ld", dir, name, (long)getpid());
    s->f = fopen(s->tmp, "w");
    if (!s->f)
        return tpb_err_set(TPB_ERR_IO, "cannot create %s: %s", s->tmp, strerror(errno));
    return TPB_OK;
}

tpb_status_t tpb_outstream_commit(tpb_outstream_t *s)
{
    int bad = ferror(s->f) || fflush(s->f) != 0 || fsync(fileno(s->f)) != 0;
    int err = errno;
    bad |= fclose(s->f) != 0;
    s->f = NULL;
    if (bad || rename(s->tmp, s->final) != 0) {
        err = bad ? err : errno;
        unlink(s->tmp);
        return tpb_err_set(TPB_ERR_IO, "cannot write %s: %s", s->final, strerror(err));
    }
    return TPB_OK;
}

void tpb_outstream_abort(tpb_outstream_t *s)
{
    if (!s->f)
        return;
    fclose(s->f);
    s->f = NULL;
    unlink(s->tmp);
}

tpb_status_t tpb_outfile_replace(const char *dir, const char *name, const char *data, size_t len)
{
    tpb_outstream_t s;
    TPB_CHECK_RET(tpb_outstream_open(&s, dir, name));
    if (len && fwrite(data, 1, len, s.f) != len) {
        int err = errno;
        tpb_outstream_abort(&s);
        return tpb_err_set(TPB_ERR_IO, "cannot write %s/%s: %s", dir, name, strerror(err));
    }
    return tpb_outstream_commit(&s);
}
