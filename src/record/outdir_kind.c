/* outdir_kind.c - what an --out folder may hold for a run to go into it: one kind of run a
 * folder (a sweep's results, a fleet's fleet.json, a --repeat run's passes), an earlier run's
 * files only with --force, and for --repeat pass folders that are folders, none of which the
 * new run would leave behind stale (outfile.h). */
#include "record/outfile_impl.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* K of a name "pass-K" (K from 1, no leading zero, at most 9 digits), else 0. */
static int pass_number(const char *name)
{
    if (strncmp(name, "pass-", 5) != 0 || name[5] < '1' || name[5] > '9')
        return 0;
    int k = 0;
    for (const char *p = name + 5; *p; p++) {
        if (*p < '0' || *p > '9' || p - name > 13)
            return 0;
        k = k * 10 + (*p - '0');
    }
    return k;
}

/* What stands at name in dirfd, in words, when it is not a folder ("" when it is one). */
static const char *not_folder(int dirfd, const char *name)
{
    struct stat sb;
    if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(sb.st_mode))
        return "";
    return S_ISLNK(sb.st_mode)   ? "a symbolic link"
           : S_ISREG(sb.st_mode) ? "a file"
                                 : "not a folder";
}

/* --repeat N into dir: every pass-K there for K <= N a real folder (a pass is never written
 * through a link), and none for K > N (it would stay beside the new passes, stale, and be read
 * as one of them). */
static tpb_status_t check_passes(const char *dir, int passes)
{
    int dirfd;
    if (tpb_outfile_open_dir(dir, &dirfd) != TPB_OK)
        return TPB_OK; /* not there yet: made, or refused, by the run */
    DIR *d = fdopendir(dirfd);
    if (!d) {
        close(dirfd);
        return TPB_OK;
    }
    tpb_status_t st = TPB_OK;
    int stale = 0;
    for (struct dirent *e = readdir(d); e && st == TPB_OK; e = readdir(d)) {
        int k = pass_number(e->d_name);
        const char *what = k ? not_folder(dirfd, e->d_name) : "";
        if (k > passes && k > stale)
            stale = k;
        else if (k && what[0])
            st = tpb_err_set(TPB_ERR_IO,
                             "%s/%s is %s, not a pass's folder: remove it, or use a new "
                             "directory",
                             dir, e->d_name, what);
    }
    closedir(d); /* closes dirfd */
    if (st == TPB_OK && stale)
        st = tpb_err_set(TPB_ERR_IO,
                         "--out %s holds pass-%d of an earlier --repeat run, which --repeat %d "
                         "would leave beside its passes (stale, and read as one of them): use a "
                         "new directory, or --repeat %d",
                         dir, stale, passes, stale);
    return st;
}

tpb_status_t tpb_outdir_check_kind(const char *dir, int force, int fleet, int repeat)
{
    const char *d = dir;
    int results = tpb_outdir_has_results(dir), passes = tpb_outdir_has_repeat(dir);
    int fleets = tpb_outdir_has_fleet(dir);
    if (!force && fleet && fleets)
        return tpb_err_set(TPB_ERR_IO,
                           "--out %s holds the fleet.json of an earlier --fleet run: use a new "
                           "directory, or add --force to replace it",
                           d);
    if (!force && !fleet && repeat < 2 && results)
        return tpb_err_set(TPB_ERR_IO,
                           "--out %s holds the results of an earlier run: use a new directory, "
                           "or add --force to replace them once this run has its first config",
                           d);
    if (fleet && results) /* one kind of run a folder: the tools read a sweep's or a fleet's */
        return tpb_err_set(TPB_ERR_IO,
                           "--out %s holds a sweep's results: a --fleet goes into a directory "
                           "of its own",
                           d);
    if (repeat > 1 && !force && passes)
        return tpb_err_set(TPB_ERR_IO,
                           "--out %s holds the passes of an earlier --repeat run: use a new "
                           "directory, or add --force to replace them pass by pass",
                           d);
    if (repeat > 1 && results)
        return tpb_err_set(TPB_ERR_IO,
                           "--out %s holds a single run's results: a --repeat run goes into a "
                           "directory of its own",
                           d);
    if (repeat < 2 && passes)
        return tpb_err_set(TPB_ERR_IO,
                           "--out %s holds a --repeat run's passes: a single run goes into a "
                           "directory of its own",
                           d);
    if (!fleet && fleets)
        return tpb_err_set(TPB_ERR_IO,
                           "--out %s holds a --fleet run's fleet.json: a sweep goes into a "
                           "directory of its own",
                           d);
    return repeat > 1 ? check_passes(dir, repeat) : TPB_OK;
}
