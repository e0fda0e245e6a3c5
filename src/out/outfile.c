/* outfile.c - write-then-rename result files. */
#include "out/outfile.h"

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
