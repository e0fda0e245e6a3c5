/* outfile.c - write-then-rename result files, opened relative to their folder, never
 * through a link (the folder's own operations: outdir.c). */
#include "record/outfile_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The folder dir, open (it may be reached through a link: the user named it). */
tpb_status_t tpb_outfile_open_dir(const char *dir, int *fd)
{
    *fd = open(dir[0] ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*fd < 0)
        return tpb_err_set(TPB_ERR_IO, "cannot open the folder '%s': %s", dir, strerror(errno));
    return TPB_OK;
}

/* 12 hex digits nobody can predict (getrandom; else the clock and the pid, mixed). */
static void random_tag(char *out)
{
    unsigned char r[6];
    if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned long long x = (unsigned long long)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^
                               (unsigned long long)getpid() << 32 ^ (unsigned long long)ts.tv_sec;
        for (int i = 0; i < 6; i++)
            r[i] = (unsigned char)(x >> (8 * i));
    }
    for (int i = 0; i < 6; i++)
        sprintf(out + 2 * i, "%02x", r[i]);
}

/* A plain file name: no '/', not "." or "..", short enough. */
tpb_status_t tpb_outfile_check_name(const char *dir, const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= TPB_OUTFILE_NAME || strchr(name, '/') || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0)
        return tpb_err_set(TPB_ERR_IO, "'%s' in %s: not a file name tpbal writes", name, dir);
    return TPB_OK;
}

/* What stands at name in dirfd: nothing (*mode 0), or a regular file (its mode in *mode);
 * anything else is refused in one line naming path. */
tpb_status_t tpb_outfile_target_kind(int dirfd, const char *name, const char *path, mode_t *mode)
{
    struct stat sb;
    *mode = 0;
    if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return TPB_OK;
        return tpb_err_set(TPB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    }
    if (S_ISLNK(sb.st_mode))
        return tpb_err_set(TPB_ERR_IO,
                           "%s is a symbolic link: tpbal writes no result through a link (it "
                           "is left as it is); remove it or write somewhere else",
                           path);
    if (!S_ISREG(sb.st_mode))
        return tpb_err_set(TPB_ERR_IO, "%s is %s, not a regular file: give a regular file", path,
                           S_ISDIR(sb.st_mode)    ? "a directory"
                           : S_ISCHR(sb.st_mode)  ? "a character device"
                           : S_ISBLK(sb.st_mode)  ? "a block device"
                           : S_ISFIFO(sb.st_mode) ? "a FIFO"
                                                  : "a socket");
    *mode = sb.st_mode & 07777;
    return TPB_OK;
}

/* A new named temporary in dirfd for name (O_CREAT | O_EXCL, never a link), its name in
 * tmp; -1 with errno set on failure. */
static int named_temporary(int dirfd, const char *name, char *tmp, size_t cap)
{
    for (int tries = 0; tries < 16; tries++) {
        char tag[16];
        random_tag(tag);
        snprintf(tmp, cap, ".%s.tpbal-%s", name, tag);
        int fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

/* An unnamed temporary in dirfd (O_TMPFILE: nothing is left if the process dies while
 * writing), else a named one (*named = 1). */
int tpb_outfile_temporary(int dirfd, const char *name, char *tmp, size_t cap, int *named)
{
    *named = 0;
    tmp[0] = '\0';
#ifdef O_TMPFILE
    int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
    if (fd >= 0)
        return fd;
#endif
    *named = 1;
    return named_temporary(dirfd, name, tmp, cap);
}

/* Give an unnamed temporary a (random) name in s's folder, so that it can be renamed. */
static int link_temporary(tpb_outstream_t *s)
{
    int fd = fileno(s->f);
    for (int tries = 0; tries < 16; tries++) {
        char tag[16], proc[64];
        random_tag(tag);
        snprintf(s->tmp, sizeof(s->tmp), ".%s.tpbal-%s", s->name, tag);
        int rc = linkat(fd, "", s->dirfd, s->tmp, AT_EMPTY_PATH);
        if (rc != 0 && errno != EEXIST) { /* AT_EMPTY_PATH needs a capability: /proc then */
            snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
            rc = linkat(AT_FDCWD, proc, s->dirfd, s->tmp, AT_SYMLINK_FOLLOW);
        }
        if (rc == 0) {
            s->named = 1;
            return 0;
        }
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

int tpb_outfile_is_temporary(const char *name)
{
    return name[0] == '.' && (strstr(name, ".tpbal-") || strstr(name, ".tmp."));
}

tpb_status_t tpb_outstream_open(tpb_outstream_t *s, const char *dir, const char *name)
{
    mode_t keep;
    memset(s, 0, sizeof(*s));
    s->dirfd = -1;
    if ((size_t)snprintf(s->path, sizeof(s->path), "%s/%s", dir, name) >= sizeof(s->path))
        return tpb_err_set(TPB_ERR_IO, "%s/%s: path too long (at most %zu bytes)", dir, name,
                           sizeof(s->path) - 1);
    TPB_CHECK_RET(tpb_outfile_check_name(dir, name));
    snprintf(s->name, sizeof(s->name), "%s", name);
    TPB_CHECK_RET(tpb_outfile_open_dir(dir, &s->dirfd));
    tpb_status_t st = tpb_outfile_target_kind(s->dirfd, name, s->path, &keep);
    int fd = st == TPB_OK ? tpb_outfile_temporary(s->dirfd, name, s->tmp, sizeof(s->tmp), &s->named)
                          : -1;
    if (st == TPB_OK && fd < 0)
        st = tpb_err_set(TPB_ERR_IO, "cannot create a file for %s: %s", s->path, strerror(errno));
    if (st == TPB_OK && keep && fchmod(fd, keep) != 0) /* a replaced file keeps its mode */
        st = tpb_err_set(TPB_ERR_IO, "cannot give %s its mode: %s", s->path, strerror(errno));
    if (st == TPB_OK && !(s->f = fdopen(fd, "w")))
        st = tpb_err_set(TPB_ERR_NOMEM, "cannot write %s: %s", s->path, strerror(errno));
    if (st != TPB_OK) {
        if (fd >= 0)
            close(fd);
        if (fd >= 0 && s->named)
            unlinkat(s->dirfd, s->tmp, 0);
        close(s->dirfd);
        s->dirfd = -1;
    }
    return st;
}

/* The end of a stream: the temporary removed (if it has a name) and the folder closed. */
static void drop(tpb_outstream_t *s)
{
    if (s->named)
        unlinkat(s->dirfd, s->tmp, 0);
    close(s->dirfd);
    s->dirfd = -1;
    s->named = 0;
}

/* Every byte of the stream on disk under its temporary name (a full disk fails here, before
 * anything is renamed): 0, or 1 with *err the errno. */
static int prepare(tpb_outstream_t *s, int *err)
{
    int bad = ferror(s->f) || fflush(s->f) != 0 || fsync(fileno(s->f)) != 0;
    *err = errno;
    if (!bad && !s->named && link_temporary(s) != 0) {
        bad = 1;
        *err = errno;
    }
    return bad;
}

tpb_status_t tpb_outstream_commit(tpb_outstream_t *s)
{
    mode_t mode;
    int err = 0, bad = prepare(s, &err);
    bad |= fclose(s->f) != 0;
    s->f = NULL;
    if (bad) {
        drop(s);
        return tpb_err_set(TPB_ERR_IO, "cannot write %s: %s", s->path, strerror(err));
    }
    /* only over a regular file or nothing: a link planted meanwhile is left as it is */
    tpb_status_t st = tpb_outfile_target_kind(s->dirfd, s->name, s->path, &mode);
    if (st == TPB_OK && renameat(s->dirfd, s->tmp, s->dirfd, s->name) != 0)
        st = tpb_err_set(TPB_ERR_IO, "cannot write %s: %s", s->path, strerror(errno));
    if (st != TPB_OK) {
        drop(s);
        return st;
    }
    fsync(s->dirfd); /* the rename itself on disk */
    close(s->dirfd);
    s->dirfd = -1;
    s->named = 0;
    return TPB_OK;
}

void tpb_outstream_abort(tpb_outstream_t *s)
{
    if (!s->f)
        return;
    fclose(s->f);
    s->f = NULL;
    drop(s);
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

int tpb_outfile_open_regular(int dirfd, const char *name, int flags, mode_t mode)
{
    int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
    struct stat sb;
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

tpb_status_t tpb_outstream_copy_head(tpb_outstream_t *s, const char *name, long n)
{
    char buf[1 << 16];
    int fd = tpb_outfile_open_regular(s->dirfd, name, O_RDONLY, 0);
    if (fd < 0)
        return tpb_err_set(TPB_ERR_IO, "cannot read back %s: %s", s->path,
                           errno == ELOOP    ? "it is now a symbolic link"
                           : errno == EINVAL ? "it is not a regular file now"
                                             : strerror(errno));
    while (n > 0) {
        size_t want = n < (long)sizeof(buf) ? (size_t)n : sizeof(buf);
        ssize_t got = read(fd, buf, want);
        if (got <= 0 || fwrite(buf, 1, (size_t)got, s->f) != (size_t)got)
            break;
        n -= (long)got;
    }
    close(fd);
    if (n > 0)
        return tpb_err_set(TPB_ERR_IO, "cannot copy %s into its new version (%ld bytes short)",
                           s->path, n);
    return TPB_OK;
}

tpb_status_t tpb_outset_add(tpb_outset_t *set, const char *dir, const char *name, FILE **f)
{
    if (set->n == TPB_OUTSET_MAX)
        return tpb_err_set(TPB_ERR_IO, "more than %d files written together", TPB_OUTSET_MAX);
    TPB_CHECK_RET(tpb_outstream_open(&set->s[set->n], dir, name));
    *f = set->s[set->n++].f;
    return TPB_OK;
}

tpb_status_t tpb_outset_commit(tpb_outset_t *set)
{
    tpb_status_t st = TPB_OK;
    int err = 0;
    for (int i = 0; i < set->n && st == TPB_OK; i++) /* all written before any is renamed */
        if (prepare(&set->s[i], &err))
            st = tpb_err_set(TPB_ERR_IO, "cannot write %s: %s", set->s[i].path, strerror(err));
    if (st != TPB_OK) {
        tpb_outset_abort(set);
        return st;
    }
    for (int i = 0; i < set->n; i++) {
        if (st == TPB_OK)
            st = tpb_outstream_commit(&set->s[i]);
        else
            tpb_outstream_abort(&set->s[i]);
    }
    set->n = 0;
    return st;
}

void tpb_outset_abort(tpb_outset_t *set)
{
    for (int i = 0; i < set->n; i++)
        tpb_outstream_abort(&set->s[i]);
    set->n = 0;
}

tpb_status_t tpb_outfile_patch(const char *dir, const char *name, long at, const char *was,
                               const char *now, size_t len)
{
    int dirfd = -1;
    TPB_CHECK_RET(tpb_outfile_open_dir(dir, &dirfd));
    int fd = tpb_outfile_open_regular(dirfd, name, O_RDWR, 0);
    int err = errno;
    close(dirfd);
    char cur[64];
    tpb_status_t st = TPB_OK;
    if (fd < 0 || len > sizeof(cur))
        st = tpb_err_set(TPB_ERR_IO, "cannot patch %s/%s: %s", dir, name,
                         fd >= 0 || err == EINVAL ? "not a regular file" : strerror(err));
    else if (pread(fd, cur, len, at) != (ssize_t)len || memcmp(cur, was, len) != 0)
        st = tpb_err_set(TPB_ERR_IO, "cannot patch %s/%s: it changed since it was written", dir,
                         name);
    else if (pwrite(fd, now, len, at) != (ssize_t)len || fsync(fd) != 0)
        st = tpb_err_set(TPB_ERR_IO, "cannot patch %s/%s: %s", dir, name, strerror(errno));
    if (fd >= 0)
        close(fd);
    return st;
}
