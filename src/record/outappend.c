/* outappend.c - result files that grow by appending (outappend.h). */
#include "record/outappend.h"
#include "record/outfile_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

tpb_status_t tpb_outappend_keep(tpb_outappend_t *a, FILE *f, const char *path)
{
    struct stat sb;
    snprintf(a->path, sizeof(a->path), "%s", path);
    a->fd = -1;
    a->len = 0;
    if (fflush(f) != 0)
        return tpb_err_set(TPB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    int fd = fcntl(fileno(f), F_DUPFD_CLOEXEC, 0);
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        int err = fd < 0 ? errno : EINVAL;
        if (fd >= 0)
            close(fd);
        return tpb_err_set(TPB_ERR_IO, "cannot keep %s open to append to it: %s", path,
                           strerror(err));
    }
    a->fd = fd;
    a->len = (long)sb.st_size;
    return TPB_OK;
}

tpb_status_t tpb_outappend_write(tpb_outappend_t *a, const char *data, size_t n)
{
    size_t done = 0;
    if (a->fd < 0)
        return n ? tpb_err_set(TPB_ERR_IO, "%s is not open to append to", a->path) : TPB_OK;
    while (done < n) {
        ssize_t w = pwrite(a->fd, data + done, n - done, (off_t)(a->len + (long)done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int err = w < 0 ? errno : ENOSPC;
            tpb_outappend_truncate(a, a->len); /* the part written taken back */
            return tpb_err_set(TPB_ERR_IO, "cannot append to %s: %s (its earlier records stay)",
                               a->path, strerror(err));
        }
        done += (size_t)w;
    }
    a->len += (long)n;
    return TPB_OK;
}

void tpb_outappend_truncate(tpb_outappend_t *a, long len)
{
    if (a->fd < 0)
        return;
    while (ftruncate(a->fd, (off_t)len) != 0 && errno == EINTR)
        ;
    a->len = len;
}

tpb_status_t tpb_outappend_copy(const tpb_outappend_t *a, long from, FILE *out)
{
    char buf[1 << 16];
    long at = from;
    while (a->fd >= 0 && at < a->len) {
        size_t want = a->len - at < (long)sizeof(buf) ? (size_t)(a->len - at) : sizeof(buf);
        ssize_t got = pread(a->fd, buf, want, (off_t)at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0 || fwrite(buf, 1, (size_t)got, out) != (size_t)got)
            break;
        at += (long)got;
    }
    if (at < a->len || a->fd < 0)
        return tpb_err_set(TPB_ERR_IO, "cannot copy %s into its new version (%ld bytes short)",
                           a->path, a->len - at);
    return TPB_OK;
}

void tpb_outappend_close(tpb_outappend_t *a)
{
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
}

tpb_status_t tpb_outreserve_open(tpb_outappend_t *r, const char *dir)
{
    int dirfd, named = 0;
    char tmp[TPB_OUTFILE_NAME + 40];
    *r = (tpb_outappend_t)TPB_OUTAPPEND_NONE;
    snprintf(r->path, sizeof(r->path), "%s", dir);
    TPB_CHECK_RET(tpb_outfile_open_dir(dir, &dirfd));
    int fd = tpb_outfile_temporary(dirfd, "results.jsonl.reserve", tmp, sizeof(tmp), &named);
    if (fd >= 0 && named) /* a named one made unnamed at once: nothing of it outlives us */
        unlinkat(dirfd, tmp, 0);
    close(dirfd);
    r->fd = fd; /* -1: not held (said nowhere: the rewrite may then need room it lacks) */
    return TPB_OK;
}

tpb_status_t tpb_outreserve_grow(tpb_outappend_t *r, long n)
{
    if (r->fd < 0 || n <= r->len)
        return TPB_OK;
    int err = posix_fallocate(r->fd, (off_t)r->len, (off_t)(n - r->len));
    if (err == EOPNOTSUPP || err == EINVAL) { /* cannot reserve here: not held */
        tpb_outappend_close(r);
        return TPB_OK;
    }
    if (err != 0)
        return tpb_err_set(TPB_ERR_IO,
                           "no room in %s for results.jsonl's final version (%ld bytes held "
                           "for it): %s",
                           r->path, n, strerror(err));
    r->len = n;
    return TPB_OK;
}
