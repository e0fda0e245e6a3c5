/* outdir.c - the output folder: created and probed, locked for one run, its files listed,
 * read back and removed, never through a link (outfile.h). */
#include "record/outfile_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* dir and every missing folder above it; *above: how many of those were made (the first of
 * them into top[cap]). */
static tpb_status_t mkdir_p(const char *dir, int *above, char *top, size_t cap)
{
    char path[1024];
    if (strlen(dir) >= sizeof(path))
        return tpb_err_set(TPB_ERR_IO, "--out '%s': path too long", dir);
    strcpy(path, dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/' || p[1] == '\0' || p[1] == '/')
            continue;
        *p = '\0';
        int made = mkdir(path, 0777) == 0;
        if (!made && errno != EEXIST)
            return tpb_err_set(TPB_ERR_IO, "--out '%s': cannot create %s: %s", dir, path,
                               strerror(errno));
        if (made && !(*above)++)
            snprintf(top, cap, "%s", path);
        *p = '/';
    }
    if (mkdir(path, 0777) == 0) {
        if (!*above) /* the first folder made is dir itself */
            snprintf(top, cap, "%s", dir);
    } else if (errno != EEXIST) {
        return tpb_err_set(TPB_ERR_IO, "--out '%s': cannot create it: %s", dir, strerror(errno));
    }
    return TPB_OK;
}

/* Create a probe in dirfd and remove it: 0 if this run can create files there, else the
 * errno of the refusal. */
static int probe_errno(int dirfd)
{
    char tmp[TPB_OUTFILE_NAME + 40];
    int named, fd = tpb_outfile_temporary(dirfd, "probe", tmp, sizeof(tmp), &named);
    if (fd < 0)
        return errno;
    close(fd);
    if (named)
        unlinkat(dirfd, tmp, 0);
    return 0;
}

static tpb_status_t probe(int dirfd, const char *dir, const char *what)
{
    int err = probe_errno(dirfd);
    return err ? tpb_err_set(TPB_ERR_IO, "%s '%s': cannot create a file there: %s", what, dir,
                             strerror(err))
               : TPB_OK;
}

tpb_status_t tpb_outdir_check_creatable(const char *dir)
{
    char path[1024];
    struct stat sb;
    if (strlen(dir) >= sizeof(path))
        return tpb_err_set(TPB_ERR_IO, "--out '%s': path too long", dir);
    strcpy(path, dir);
    while (stat(path, &sb) != 0) { /* up to the nearest folder that exists */
        if (errno != ENOENT && errno != ENOTDIR)
            return tpb_err_set(TPB_ERR_IO, "--out '%s': cannot reach %s: %s", dir, path,
                               strerror(errno));
        char *slash = strrchr(path, '/');
        if (!slash)
            strcpy(path, ".");
        else if (slash == path)
            path[1] = '\0';
        else
            *slash = '\0';
    }
    if (!S_ISDIR(sb.st_mode))
        return tpb_err_set(TPB_ERR_IO, "--out '%s': %s is not a directory", dir, path);
    if (access(path, W_OK | X_OK) != 0)
        return tpb_err_set(TPB_ERR_IO, "--out '%s': this user cannot create files in %s: %s", dir,
                           path, strerror(errno));
    /* access() says yes to root on a read-only or virtual file system (/proc): a probe,
     * made and removed, asks the file system itself */
    int fd;
    if (tpb_outfile_open_dir(path, &fd) != TPB_OK)
        return tpb_err_set(TPB_ERR_IO, "--out '%s': cannot open %s: %s", dir, path, tpb_err_msg());
    int err = probe_errno(fd);
    close(fd);
    if (err)
        return tpb_err_set(TPB_ERR_IO, "--out '%s': cannot be created: %s refuses new files: %s",
                           dir, path, strerror(err));
    return TPB_OK;
}

tpb_status_t tpb_outdir_prepare(const char *dir, int *above, char *top, size_t cap)
{
    int fd;
    *above = 0;
    TPB_CHECK_RET(mkdir_p(dir, above, top, cap));
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return tpb_err_set(TPB_ERR_IO, "--out '%s': not a directory", dir);
    TPB_CHECK_RET(tpb_outfile_open_dir(dir, &fd));
    tpb_status_t st = probe(fd, dir, "--out");
    close(fd);
    return st;
}

/* dir and name of path ("." for a bare name). */
static void split_path(const char *path, char *dir, size_t dcap, const char **name)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, dcap, ".");
        *name = path;
    } else if (slash == path) {
        snprintf(dir, dcap, "/");
        *name = slash + 1;
    } else {
        snprintf(dir, dcap, "%.*s", (int)(slash - path), path);
        *name = slash + 1;
    }
}

void tpb_outdir_unmake(const char *dir, const char *top)
{
    enum { DEPTH = 64 };
    char parent[1024], rest[1024], *names[DEPTH], *save = NULL;
    const char *name;
    size_t n = strlen(top);
    if (!top[0] || strncmp(dir, top, n) != 0 || (dir[n] && dir[n] != '/') ||
        snprintf(rest, sizeof(rest), "%s", dir + n) >= (int)sizeof(rest))
        return;
    split_path(top, parent, sizeof(parent), &name);
    int fds[DEPTH + 1], k = 0, depth = 1;
    names[0] = (char *)name;
    for (char *t = strtok_r(rest, "/", &save); t && depth < DEPTH; t = strtok_r(NULL, "/", &save))
        names[depth++] = t;
    for (int i = 0; i < depth; i++)
        if (strcmp(names[i], ".") == 0 || strcmp(names[i], "..") == 0 || !names[i][0])
            return; /* a path that walks back: not told apart from what was there */
    if (tpb_outfile_open_dir(parent, &fds[0]) != TPB_OK)
        return;
    for (k = 1; k < depth; k++) /* down to dir's parent, never through a link */
        if ((fds[k] = openat(fds[k - 1], names[k - 1],
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
            break;
    int ok = k == depth;
    for (int i = depth - 1; i >= 0; i--) { /* the deepest first; one that is not empty stays */
        if (ok && i < k && unlinkat(fds[i], names[i], AT_REMOVEDIR) != 0)
            ok = 0;
        if (i < k)
            close(fds[i]);
    }
}

tpb_status_t tpb_outfile_check_writable(const char *path, const char *what)
{
    char dir[1200];
    const char *name;
    mode_t mode;
    int fd = -1;
    split_path(path, dir, sizeof(dir), &name);
    if (tpb_outfile_check_name(dir, name) != TPB_OK)
        return tpb_err_set(TPB_ERR_IO, "%s %s: not a file name", what, path);
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return tpb_err_set(TPB_ERR_IO, "%s %s: cannot write in '%s': %s", what, path, dir,
                           strerror(errno));
    tpb_status_t st = tpb_outfile_target_kind(fd, name, path, &mode);
    if (st == TPB_OK)
        st = probe(fd, dir, what);
    close(fd);
    if (st != TPB_OK) {
        char why[1024];
        snprintf(why, sizeof(why), "%s", tpb_err_msg());
        return tpb_err_set(TPB_ERR_IO, "%s %s: cannot write: %s", what, path, why);
    }
    return TPB_OK;
}

/* Whether dir holds a file (of any kind) named name. */
static int has_file(const char *dir, const char *name)
{
    int fd;
    struct stat sb;
    if (tpb_outfile_open_dir(dir, &fd) != TPB_OK)
        return 0;
    int has = fstatat(fd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0;
    close(fd);
    return has;
}

int tpb_outdir_has_results(const char *dir)
{
    return has_file(dir, "results.jsonl");
}

tpb_status_t tpb_outdir_pass(const char *out, int passes, int pass, int make, char *dir, size_t cap)
{
    if (passes < 2 || !out[0]) {
        snprintf(dir, cap, "%s", out);
        return TPB_OK;
    }
    if ((size_t)snprintf(dir, cap, "%s/pass-%d", out, pass) >= cap)
        return tpb_err_set(TPB_ERR_INVALID, "--out %s: too long for its passes' folders", out);
    int above = 0;
    char top[1024];
    return make ? tpb_outdir_prepare(dir, &above, top, sizeof(top)) : TPB_OK;
}

int tpb_outdir_has_repeat(const char *dir)
{
    return has_file(dir, "repeat.json") || has_file(dir, "pass-1");
}

int tpb_outdir_has_fleet(const char *dir)
{
    return has_file(dir, "fleet.json");
}

tpb_status_t tpb_outdir_remove(const char *dir, const char *const *names, int n)
{
    int fd;
    TPB_CHECK_RET(tpb_outfile_open_dir(dir, &fd));
    tpb_status_t st = TPB_OK;
    for (int i = 0; i < n; i++) {
        struct stat sb;
        if (tpb_outfile_check_name(dir, names[i]) != TPB_OK ||
            fstatat(fd, names[i], &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode))
            continue; /* gone, or not a file tpbal wrote */
        if (unlinkat(fd, names[i], 0) != 0 && errno != ENOENT && st == TPB_OK)
            st = tpb_err_set(TPB_ERR_IO, "--force: cannot remove %s/%s: %s", dir, names[i],
                             strerror(errno));
    }
    close(fd);
    return st;
}

/* path made absolute and canonical: its deepest existing ancestor resolved (links and ..),
 * the rest appended as written; "" when it cannot be told. */
static void canonical(const char *path, char *out, size_t cap)
{
    char work[PATH_MAX], rest[PATH_MAX] = "";
    out[0] = '\0';
    if (snprintf(work, sizeof(work), "%s", path[0] ? path : ".") >= (int)sizeof(work))
        return;
    for (;;) {
        char *real = realpath(work, NULL);
        if (real) {
            snprintf(out, cap, "%s%s%s", real, rest[0] ? "/" : "", rest);
            free(real);
            return;
        }
        char *slash = strrchr(work, '/');
        char tail[2 * PATH_MAX + 2];
        int len = snprintf(tail, sizeof(tail), "%s%s%s", slash ? slash + 1 : work,
                           rest[0] ? "/" : "", rest);
        if (len < 0 || (size_t)len >= sizeof(rest))
            return; /* too long to tell */
        memcpy(rest, tail, (size_t)len + 1);
        if (!slash) {
            snprintf(work, sizeof(work), ".");
        } else if (slash == work) {
            snprintf(work, sizeof(work), "/");
        } else {
            *slash = '\0';
        }
        if (strcmp(work, "/") == 0 && !rest[0])
            return;
    }
}

/* A name a run writes directly in its --out folder. */
static int run_writes(const char *name)
{
    static const char *const own[] = {"results.jsonl", "results.csv", "ranks.csv",    "trace.json",
                                      "repeat.json",   "fleet.json",  TPB_OUTDIR_LOCK};
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (strcmp(name, own[i]) == 0)
            return 1;
    size_t n = strlen(name);
    return (strncmp(name, "trace-", 6) == 0 && n > 11 && strcmp(name + n - 5, ".json") == 0) ||
           (name[0] == '.' && strncmp(name + 1, "results", 7) == 0);
}

int tpb_outdir_owns_path(const char *dir, const char *path)
{
    char d[PATH_MAX], p[PATH_MAX];
    if (!dir[0] || !path[0])
        return 0;
    canonical(dir, d, sizeof(d));
    canonical(path, p, sizeof(p));
    size_t n = strlen(d);
    if (!d[0] || !p[0] || strncmp(p, d, n) != 0 || p[n] != '/')
        return 0;
    const char *inside = p + n + 1;
    if (strncmp(inside, "pass-", 5) == 0) /* a --repeat pass's folder: all of it is the run's */
        return 1;
    return !strchr(inside, '/') && run_writes(inside);
}

tpb_status_t tpb_outfile_read_head(const char *dir, const char *name, char *buf, size_t cap,
                                   size_t *len)
{
    int dirfd;
    *len = 0;
    TPB_CHECK_RET(tpb_outfile_open_dir(dir, &dirfd));
    int fd = tpb_outfile_open_regular(dirfd, name, O_RDONLY, 0);
    int err = errno;
    close(dirfd);
    if (fd < 0)
        return tpb_err_set(TPB_ERR_IO, "cannot read %s/%s: %s", dir, name,
                           err == EINVAL ? "not a regular file" : strerror(err));
    for (ssize_t got = 1; got > 0 && *len < cap; *len += (size_t)got)
        if ((got = read(fd, buf + *len, cap - *len)) < 0)
            got = 0;
    close(fd);
    return TPB_OK;
}

tpb_status_t tpb_outdir_check_targets(const char *dir)
{
    static const char *const own[] = {"results.jsonl", "results.csv", "ranks.csv",
                                      "trace.json",    "repeat.json", "fleet.json"};
    int dirfd;
    if (!dir[0] || tpb_outfile_open_dir(dir, &dirfd) != TPB_OK)
        return TPB_OK; /* not there yet: made, or refused, by the run */
    tpb_status_t st = TPB_OK;
    for (size_t i = 0; st == TPB_OK && i < sizeof(own) / sizeof(own[0]); i++) {
        char path[PATH_MAX];
        mode_t mode;
        snprintf(path, sizeof(path), "%s/%s", dir, own[i]);
        st = tpb_outfile_target_kind(dirfd, own[i], path, &mode);
    }
    close(dirfd);
    return st;
}

tpb_status_t tpb_outdir_check_paths(const char *dir, const char *const *flags,
                                    const char *const *paths, int n)
{
    for (int i = 0; dir[0] && i < n; i++)
        if (tpb_outdir_owns_path(dir, paths[i]))
            return tpb_err_set(TPB_ERR_INVALID,
                               "%s %s is a file this run writes in --out %s: give a file outside "
                               "that folder, or another name",
                               flags[i], tpb_err_value(paths[i]), tpb_err_value(dir));
    return TPB_OK;
}

tpb_status_t tpb_outfile_first_line(const char *dir, const char *name, char *buf, size_t cap)
{
    int dirfd;
    TPB_CHECK_RET(tpb_outfile_open_dir(dir, &dirfd));
    int fd = tpb_outfile_open_regular(dirfd, name, O_RDONLY, 0); /* a FIFO: refused, not waited */
    int err = errno;
    close(dirfd);
    if (fd < 0) {
        return tpb_err_set(TPB_ERR_IO, "cannot read %s/%s: %s", dir, name,
                           err == ELOOP    ? "a symbolic link"
                           : err == EINVAL ? "not a regular file"
                                           : strerror(err));
    }
    size_t len = 0;
    while (len + 1 < cap) {
        ssize_t got = read(fd, buf + len, cap - 1 - len);
        if (got <= 0)
            break;
        len += (size_t)got;
        if (memchr(buf + len - (size_t)got, '\n', (size_t)got))
            break;
    }
    close(fd);
    buf[len] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return TPB_OK;
}
