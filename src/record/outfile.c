/* outfile.c - write-then-rename result files. */
#include "record/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/infile.h"

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

/* The target of a symbolic link to a file that does not exist yet, resolved against the
 * link's directory; 1 if that directory exists (the file is created there). */
static int dangling_target(const char *link, char *out, size_t cap)
{
    char to[PATH_MAX], dir[2 * PATH_MAX + 2];
    ssize_t n = readlink(link, to, sizeof(to) - 1);
    if (n <= 0)
        return 0;
    to[n] = '\0';
    const char *slash = strrchr(link, '/');
    int len = to[0] == '/' || !slash
                  ? snprintf(dir, sizeof(dir), "%s", to)
                  : snprintf(dir, sizeof(dir), "%.*s/%s", (int)(slash - link), link, to);
    if (len < 0 || (size_t)len >= sizeof(dir))
        return 0;
    char *last = strrchr(dir, '/');
    char parent[sizeof(dir)];
    if (last)
        snprintf(parent, sizeof(parent), "%.*s", last == dir ? 1 : (int)(last - dir), dir);
    else
        snprintf(parent, sizeof(parent), ".");
    struct stat sb;
    if (stat(parent, &sb) != 0 || !S_ISDIR(sb.st_mode) || strlen(dir) >= cap)
        return 0;
    snprintf(out, cap, "%s", dir);
    return 1;
}

/* The file a write to path lands in: path itself, or the regular file a symbolic link
 * names (written through, so the link and the files sharing it stay). Refuses a device,
 * FIFO, socket or directory, and a link to nothing. */
static tpb_status_t target_of(const char *path, char *out, size_t cap)
{
    struct stat sb;
    snprintf(out, cap, "%s", path);
    if (lstat(path, &sb) != 0)
        return errno == ENOENT
                   ? TPB_OK
                   : tpb_err_set(TPB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    if (S_ISLNK(sb.st_mode)) {
        char real[PATH_MAX];
        if (!realpath(path, real) && !dangling_target(path, real, sizeof(real)))
            return tpb_err_set(TPB_ERR_IO,
                               "%s is a symbolic link to nowhere tpbal can write (%s): remove "
                               "it or point it at a file",
                               path, strerror(errno));
        if (strlen(real) >= cap)
            return tpb_err_set(TPB_ERR_IO, "%s: the path it links to is too long", path);
        snprintf(out, cap, "%s", real);
    }
    return tpb_infile_check_regular(out, "cannot write:");
}

tpb_status_t tpb_outfile_check_writable(const char *path, const char *what)
{
    char target[1200];
    if (target_of(path, target, sizeof(target)) != TPB_OK) {
        char why[1024];
        snprintf(why, sizeof(why), "%s", tpb_err_msg());
        return tpb_err_set(TPB_ERR_IO, "%s %s: %s", what, path, why);
    }
    path = target;
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
           strcmp(name, "ranks.csv") == 0 || strcmp(name, "trace.json") == 0 ||
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
    char path[1200];
    s->f = NULL;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
        return tpb_err_set(TPB_ERR_IO, "%s/%s: path too long (at most %zu bytes)", dir, name,
                           sizeof(path) - 1);
    TPB_CHECK_RET(target_of(path, s->final, sizeof(s->final)));
    const char *slash = strrchr(s->final, '/');
    int dlen = slash ? (int)(slash - s->final) : 1;
    snprintf(s->tmp, sizeof(s->tmp), "%.*s/.%s.tmp.%ld", dlen, slash ? s->final : ".",
             slash ? slash + 1 : s->final, (long)getpid());
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

/* "pid P on host H, since T" of this process, for the lock file. */
static int holder_line(char *out, size_t cap)
{
    char host[128] = "?", when[32] = "?";
    gethostname(host, sizeof(host) - 1);
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm))
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    return snprintf(out, cap, "pid %ld on host %s, since %s\n", (long)getpid(), host, when);
}

/* Lock the file at path: 1 locked (fd in *fd), 0 held by another (its line in holder),
 * -1 error (errno). The lock is good only if path still names the locked file: a holder
 * that ended removes it, and a lock on the removed file would lock nothing. */
static int try_lock(const char *path, int *fd, char *holder, size_t cap)
{
    for (int tries = 0; tries < 8; tries++) {
        int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (f < 0)
            return -1;
        if (flock(f, LOCK_EX | LOCK_NB) != 0) {
            int err = errno;
            ssize_t n = pread(f, holder, cap - 1, 0);
            close(f);
            holder[n > 0 ? n : 0] = '\0';
            holder[strcspn(holder, "\n")] = '\0';
            errno = err;
            return err == EWOULDBLOCK ? 0 : -1;
        }
        struct stat a, b;
        if (fstat(f, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
            a.st_dev == b.st_dev) {
            *fd = f;
            return 1;
        }
        close(f); /* locked a file its holder had just removed: again */
    }
    errno = EAGAIN;
    return -1;
}

tpb_status_t tpb_outdir_lock(const char *dir, int *fd)
{
    char path[1200], holder[256] = "", me[300];
    snprintf(path, sizeof(path), "%s/.tpbal.lock", dir);
    int f = -1, got = try_lock(path, &f, holder, sizeof(holder));
    if (got < 0)
        return tpb_err_set(TPB_ERR_IO, "--out %s: cannot lock %s: %s", dir, path, strerror(errno));
    if (got == 0)
        return tpb_err_set(TPB_ERR_IO,
                           "--out %s is in use by another tpbal run (%s): wait for it to end or "
                           "choose another directory",
                           dir, holder[0] ? holder : "holder unknown");
    /* ours now; a lock file left by a run that died held no lock and is simply taken over */
    int len = holder_line(me, sizeof(me));
    if (ftruncate(f, 0) != 0 || pwrite(f, me, (size_t)len, 0) != len) {
        int err = errno;
        close(f);
        return tpb_err_set(TPB_ERR_IO, "--out %s: cannot write its lock file: %s", dir,
                           strerror(err));
    }
    *fd = f;
    return TPB_OK;
}

void tpb_outdir_unlock(const char *dir, int fd)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/.tpbal.lock", dir);
    unlink(path); /* while still held: the next run creates (and locks) a new one */
    close(fd);
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
