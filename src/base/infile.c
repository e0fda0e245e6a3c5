/* infile.c - user-named input files: regular, bounded, text. */
#include "base/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "a FIFO", "a directory", ... for a mode that is not a regular file. */
static const char *kind_of(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
                         : "not a regular file";
}

tpb_status_t tpb_infile_check_regular(const char *path, const char *what)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return errno == ENOENT
                   ? TPB_OK
                   : tpb_err_set(TPB_ERR_INVALID, "%s %s: %s", what, path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return tpb_err_set(TPB_ERR_INVALID, "%s %s is %s: give a regular file", what, path,
                           kind_of(sb.st_mode));
    return TPB_OK;
}

/* Read fd (a regular file of size bytes, at most limit) into a new string. */
static tpb_status_t slurp(int fd, const char *path, const char *what, size_t limit, char **text,
                          size_t *len)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        return tpb_err_set(TPB_ERR_INVALID, "%s %s is not a regular file: give a file", what, path);
    if ((size_t)sb.st_size > limit)
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s %s has %lld bytes, more than the %zu tpbal reads: split it or give "
                           "a smaller file",
                           what, path, (long long)sb.st_size, limit);
    char *buf = malloc((size_t)sb.st_size + 1);
    if (!buf)
        return tpb_err_set(TPB_ERR_NOMEM, "%s %s: out of memory", what, path);
    size_t got = 0;
    for (;;) { /* a file that grows while it is read is cut at its size when opened + 1 */
        ssize_t r = read(fd, buf + got, (size_t)sb.st_size + 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int err = errno;
            free(buf);
            return tpb_err_set(TPB_ERR_INVALID, "%s %s: cannot read: %s", what, path,
                               strerror(err));
        }
        if (r == 0 || (got += (size_t)r) > (size_t)sb.st_size)
            break;
    }
    if (got > (size_t)sb.st_size) {
        free(buf);
        return tpb_err_set(TPB_ERR_INVALID, "%s %s grew while it was read: read it again later",
                           what, path);
    }
    const char *nul = memchr(buf, '\0', got);
    if (nul) {
        long at = (long)(nul - buf);
        free(buf);
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s %s has a NUL byte at offset %ld: not a text file (the rest of it "
                           "would be ignored)",
                           what, path, at);
    }
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return TPB_OK;
}

tpb_status_t tpb_infile_read(const char *path, const char *what, size_t limit, char **text,
                             size_t *len, int *missing)
{
    *text = NULL;
    *len = 0;
    if (missing)
        *missing = 0;
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno == ENOENT && missing) {
            *missing = 1;
            return TPB_OK;
        }
        return tpb_err_set(TPB_ERR_INVALID, "%s %s: cannot read: %s", what, path, strerror(errno));
    }
    if (!S_ISREG(sb.st_mode)) /* before open: opening a FIFO would wait for a writer */
        return tpb_err_set(TPB_ERR_INVALID, "%s %s is %s: give a regular file", what, path,
                           kind_of(sb.st_mode));
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return tpb_err_set(TPB_ERR_INVALID, "%s %s: cannot read: %s", what, path, strerror(errno));
    tpb_status_t st = slurp(fd, path, what, limit, text, len);
    close(fd);
    return st;
}
