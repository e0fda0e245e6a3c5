/* outdir_lock.c - one run per output folder: an exclusive lock on --out/.tpbal.lock naming
 * its holder, taken over from a run that died, looked at (never taken) by a dry run
 * (outfile.h). */
#include "record/outfile_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* Lock the lock file in dirfd: 1 locked (fd in *fd), 0 held by another (its line in holder),
 * -1 error (errno; ELOOP: a link). The lock is good only if the name still names the locked
 * file: a holder that ended removes it, and a lock on the removed file would lock nothing. */
static int try_lock(int dirfd, int *fd, char *holder, size_t cap)
{
    for (int tries = 0; tries < 8; tries++) {
        int f = tpb_outfile_open_regular(dirfd, TPB_OUTDIR_LOCK, O_RDWR | O_CREAT, 0644);
        if (f < 0)
            return -1;
        struct stat a, b;
        if (fstat(f, &a) != 0) {
            close(f);
            return -1;
        }
        if (flock(f, LOCK_EX | LOCK_NB) != 0) {
            int err = errno;
            ssize_t n = pread(f, holder, cap - 1, 0);
            close(f);
            holder[n > 0 ? n : 0] = '\0';
            holder[strcspn(holder, "\n")] = '\0';
            errno = err;
            return err == EWOULDBLOCK ? 0 : -1;
        }
        if (fstatat(dirfd, TPB_OUTDIR_LOCK, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
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
    char holder[256] = "", me[300];
    int dirfd, f = -1;
    TPB_CHECK_RET(tpb_outfile_open_dir(dir, &dirfd));
    int got = try_lock(dirfd, &f, holder, sizeof(holder));
    int err = errno;
    if (got <= 0)
        close(dirfd);
    if (got < 0)
        return tpb_err_set(TPB_ERR_IO, "--out %s: cannot lock %s/%s: %s", dir, dir, TPB_OUTDIR_LOCK,
                           err == ELOOP    ? "it is a symbolic link (left as it is; remove it)"
                           : err == EINVAL ? "it is not a regular file (remove it)"
                                           : strerror(err));
    if (got == 0)
        return tpb_err_set(TPB_ERR_IO,
                           "--out %s is in use by another tpbal run (%s): wait for it to end or "
                           "choose another directory",
                           dir, holder[0] ? holder : "holder unknown");
    /* ours now; a lock file left by a run that died held no lock and is simply taken over */
    int len = holder_line(me, sizeof(me));
    if (ftruncate(f, 0) != 0 || pwrite(f, me, (size_t)len, 0) != len) {
        err = errno;
        unlinkat(dirfd, TPB_OUTDIR_LOCK, 0); /* held by us: a full disk leaves no empty lock */
        close(f);
        close(dirfd);
        return tpb_err_set(TPB_ERR_IO, "--out %s: cannot write its lock file: %s", dir,
                           strerror(err));
    }
    close(dirfd);
    *fd = f;
    return TPB_OK;
}

tpb_status_t tpb_outdir_check_free(const char *dir)
{
    char holder[256] = "";
    int dirfd;
    if (tpb_outfile_open_dir(dir, &dirfd) != TPB_OK)
        return TPB_OK; /* not there: free */
    int f = tpb_outfile_open_regular(dirfd, TPB_OUTDIR_LOCK, O_RDONLY, 0);
    close(dirfd);
    if (f < 0)
        return TPB_OK; /* none (a link or a FIFO there: the run says so as it locks) */
    int held = flock(f, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (held) {
        ssize_t n = pread(f, holder, sizeof(holder) - 1, 0);
        holder[n > 0 ? n : 0] = '\0';
        holder[strcspn(holder, "\n")] = '\0';
    }
    close(f); /* and the shared lock with it */
    if (held)
        return tpb_err_set(TPB_ERR_IO,
                           "--out %s is in use by another tpbal run (%s): wait for it to end or "
                           "choose another directory",
                           dir, holder[0] ? holder : "holder unknown");
    return TPB_OK;
}

void tpb_outdir_unlock(const char *dir, int fd)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/%s", dir, TPB_OUTDIR_LOCK);
    unlink(path); /* while still held: the next run creates (and locks) a new one */
    close(fd);
}
