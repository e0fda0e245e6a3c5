/* test_outfile.c - result files: whole or not at all, never through a link, modes kept; the
 * record's per-rank arrays in an unnamed file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/outappend.h"
#include "record/outfile.h"
#include "record/spill.h"
#include "tpb_test.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/tpbal-outfile-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void path_of(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

static void put(const char *name, const char *text, mode_t mode)
{
    char p[256];
    path_of(p, sizeof(p), name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    ck_assert_int_eq(chmod(p, mode), 0);
}

static void content(const char *name, char *out, size_t cap)
{
    char p[256];
    path_of(p, sizeof(p), name);
    FILE *f = fopen(p, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
}

/* Entries of dir other than . and .. */
static int entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

/* A link at name to victim (a file outside the folder that holds "secret"). */
static void plant(const char *name, const char *victim)
{
    char p[256];
    path_of(p, sizeof(p), name);
    ck_assert_int_eq(symlink(victim, p), 0);
}

START_TEST(replaced_whole_modes_kept)
{
    char text[64];
    ck_assert_int_eq(tpb_outfile_replace(dir, "a.txt", "old\n", 4), TPB_OK);
    ck_assert_int_eq(tpb_outfile_replace(dir, "a.txt", "new\n", 4), TPB_OK);
    content("a.txt", text, sizeof(text));
    ck_assert_str_eq(text, "new\n");
    ck_assert_int_eq(entries(), 1); /* no temporary left */
    /* a new file: 0666 less the umask; a replaced one keeps its mode */
    mode_t old = umask(022);
    struct stat sb;
    char p[256];
    ck_assert_int_eq(tpb_outfile_replace(dir, "new.txt", "x", 1), TPB_OK);
    path_of(p, sizeof(p), "new.txt");
    ck_assert_int_eq(stat(p, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0777, 0644);
    put("kept.txt", "x", 0640);
    ck_assert_int_eq(tpb_outfile_replace(dir, "kept.txt", "y", 1), TPB_OK);
    path_of(p, sizeof(p), "kept.txt");
    ck_assert_int_eq(stat(p, &sb), 0);
    ck_assert_int_eq(sb.st_mode & 0777, 0640);
    umask(old);
    /* an aborted stream leaves nothing */
    tpb_outstream_t s;
    ck_assert_int_eq(tpb_outstream_open(&s, dir, "b.txt"), TPB_OK);
    fputs("partial", s.f);
    tpb_outstream_abort(&s);
    ck_assert_int_eq(entries(), 3);
}
END_TEST

START_TEST(planted_links_refused_and_left)
{
    char victim[256], text[64], p[256];
    snprintf(victim, sizeof(victim), "%s.victim", dir);
    FILE *f = fopen(victim, "w");
    fputs("secret", f);
    fclose(f);
    const char *names[] = {"results.jsonl", "results.csv", "trace-000.json", "plan.json"};
    for (int i = 0; i < 4; i++) {
        plant(names[i], victim);
        ck_assert_int_eq(tpb_outfile_replace(dir, names[i], "pwned", 5), TPB_ERR_IO);
        ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "is a symbolic link"));
        tpb_outstream_t s;
        ck_assert_int_eq(tpb_outstream_open(&s, dir, names[i]), TPB_ERR_IO);
        path_of(p, sizeof(p), names[i]);
        struct stat sb;
        ck_assert_int_eq(lstat(p, &sb), 0);
        ck_assert(S_ISLNK(sb.st_mode)); /* left as it is */
        ck_assert_int_eq(tpb_outfile_check_writable(p, "--calibration-file"), TPB_ERR_IO);
    }
    /* a link to nowhere, a directory and a FIFO where a result goes: refused too */
    plant("dangling.json", "/nonexistent/x");
    ck_assert_int_eq(tpb_outfile_replace(dir, "dangling.json", "x", 1), TPB_ERR_IO);
    path_of(p, sizeof(p), "sub");
    ck_assert_int_eq(mkdir(p, 0755), 0);
    ck_assert_int_eq(tpb_outfile_replace(dir, "sub", "x", 1), TPB_ERR_IO);
    path_of(p, sizeof(p), "fifo");
    ck_assert_int_eq(mkfifo(p, 0644), 0);
    ck_assert_int_eq(tpb_outfile_replace(dir, "fifo", "x", 1), TPB_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "not a regular file"));
    /* the lock file and a read-back as links: refused, never followed */
    plant(".tpbal.lock", victim);
    int fd = -1;
    ck_assert_int_eq(tpb_outdir_lock(dir, &fd), TPB_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "symbolic link"));
    char line[64];
    ck_assert_int_eq(tpb_outfile_first_line(dir, "results.jsonl", line, sizeof(line)), TPB_ERR_IO);
    /* removing: a link is not a file tpbal wrote */
    const char *gone[] = {"results.jsonl", "trace-000.json"};
    ck_assert_int_eq(tpb_outdir_remove(dir, gone, 2), TPB_OK);
    path_of(p, sizeof(p), "results.jsonl");
    ck_assert_int_eq(access(p, F_OK), 0);
    f = fopen(victim, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fread(text, 1, sizeof(text) - 1, f), 6);
    fclose(f);
    unlink(victim);
}
END_TEST

START_TEST(names_and_temporaries)
{
    ck_assert_int_eq(tpb_outfile_replace(dir, "../x", "x", 1), TPB_ERR_IO);
    ck_assert_int_eq(tpb_outfile_replace(dir, "..", "x", 1), TPB_ERR_IO);
    ck_assert(tpb_outfile_is_temporary(".results.jsonl.tpbal-0123456789ab"));
    ck_assert(tpb_outfile_is_temporary(".results.csv.tmp.4242"));
    ck_assert(!tpb_outfile_is_temporary("results.csv"));
    ck_assert(!tpb_outfile_is_temporary(".hidden"));
    /* a set: every file written before any is in place */
    tpb_outset_t set = {.n = 0};
    FILE *f;
    ck_assert_int_eq(tpb_outset_add(&set, dir, "one", &f), TPB_OK);
    fputs("1", f);
    ck_assert_int_eq(tpb_outset_add(&set, dir, "two", &f), TPB_OK);
    fputs("2", f);
    ck_assert_int_eq(entries(), 0);
    ck_assert_int_eq(tpb_outset_commit(&set), TPB_OK);
    ck_assert_int_eq(entries(), 2);
    char line[8];
    ck_assert_int_eq(tpb_outfile_first_line(dir, "two", line, sizeof(line)), TPB_OK);
    ck_assert_str_eq(line, "2");
}
END_TEST

/* A file too large for the limit (EFBIG, as ENOSPC): the target untouched, nothing left. */
START_TEST(file_too_large_loses_nothing)
{
    char text[64];
    put("results.jsonl", "earlier\n", 0644);
    struct rlimit old, small = {.rlim_cur = 4096, .rlim_max = RLIM_INFINITY};
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    static char big[1 << 16];
    memset(big, 'x', sizeof(big));
    tpb_status_t st = tpb_outfile_replace(dir, "results.jsonl", big, sizeof(big));
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
    ck_assert_int_eq(st, TPB_ERR_IO);
    content("results.jsonl", text, sizeof(text));
    ck_assert_str_eq(text, "earlier\n");
    ck_assert_int_eq(entries(), 1);
}
END_TEST

/* A result file that grows by appending: written whole at the end, or taken back to where it
 * was (a file size limit as a full disk); read back for the rewrite at the end; a link
 * planted at its name after it was put in place is never written through. */
START_TEST(appended_whole_or_taken_back)
{
    char text[256];
    tpb_outstream_t os;
    tpb_outappend_t a = TPB_OUTAPPEND_NONE;
    put("victim", "secret\n", 0644);
    ck_assert_int_eq(tpb_outstream_open(&os, dir, "results.csv"), TPB_OK);
    fputs("head\n", os.f);
    ck_assert_int_eq(tpb_outappend_keep(&a, os.f, "results.csv"), TPB_OK);
    ck_assert_int_eq(tpb_outstream_commit(&os), TPB_OK);
    ck_assert_int_eq(a.len, 5);
    ck_assert_int_eq(tpb_outappend_write(&a, "row 0\n", 6), TPB_OK);
    ck_assert_int_eq(tpb_outappend_write(&a, "", 0), TPB_OK);
    content("results.csv", text, sizeof(text));
    ck_assert_str_eq(text, "head\nrow 0\n");
    /* a write that cannot be whole (the file size limit at 20 bytes): nothing of it stays */
    struct rlimit old, small = {.rlim_cur = 20};
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    tpb_status_t st = tpb_outappend_write(&a, "row 1 is too long for the limit\n", 32);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
    ck_assert_int_eq(st, TPB_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "cannot append to results.csv"));
    content("results.csv", text, sizeof(text));
    ck_assert_str_eq(text, "head\nrow 0\n");
    ck_assert_int_eq(a.len, 11);
    /* taken back to a length, and copied from an offset into a new version */
    ck_assert_int_eq(tpb_outappend_write(&a, "row 1\n", 6), TPB_OK);
    tpb_outappend_truncate(&a, 11);
    ck_assert_int_eq(tpb_outstream_open(&os, dir, "copy"), TPB_OK);
    ck_assert_int_eq(tpb_outappend_copy(&a, 5, os.f), TPB_OK);
    ck_assert_int_eq(tpb_outstream_commit(&os), TPB_OK);
    content("copy", text, sizeof(text));
    ck_assert_str_eq(text, "row 0\n");
    /* the name replaced by a link to a file outside: the append goes to the file tpbal made
     * (no longer at that name), never through the link */
    char p[256];
    path_of(p, sizeof(p), "results.csv");
    ck_assert_int_eq(unlink(p), 0);
    plant("results.csv", "victim");
    ck_assert_int_eq(tpb_outappend_write(&a, "row 2\n", 6), TPB_OK);
    content("victim", text, sizeof(text));
    ck_assert_str_eq(text, "secret\n");
    tpb_outappend_close(&a);
    tpb_outappend_close(&a); /* twice: a no-op */
    ck_assert_int_eq(tpb_outappend_write(&a, "x", 1), TPB_ERR_IO);
}
END_TEST

/* How many names dir holds (no "." or ".."). */
static int names_in_dir(void)
{
    int n = 0;
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* A finished config's per-rank arrays (4 ranks in TP 2 groups, 2 blocks) with values from
 * base. */
static tpb_history_t spill_entry(int id, double base)
{
    tpb_history_t h = {.id = id, .tp = 2, .world = 4, .nslow = 4};
    double *c = malloc(4 * sizeof(double)), *w = malloc(4 * sizeof(double));
    double *dev = malloc(8 * sizeof(double));
    tpb_slow_t *sl = malloc(4 * sizeof(*sl));
    for (int r = 0; r < 4; r++)
        c[r] = base + r, w[r] = 10 * base + r, sl[r] = (tpb_slow_t){r % 2, 0.1 * r};
    for (int i = 0; i < 8; i++)
        dev[i] = base - i;
    h.arr[TPB_HIST_COMPUTE] = c, h.arr[TPB_HIST_WORK] = w;
    h.arr[TPB_HIST_SLOW] = sl, h.arr[TPB_HIST_DEV] = dev;
    return h;
}

/* The record's per-rank arrays moved into an unnamed file in the folder (no name left
 * there) and read back as they were; a write that cannot be whole (a file size limit as a
 * full disk) leaves them in memory, whole, and the file as it was; without a folder they
 * stay in memory and read the same way. */
START_TEST(history_spilled_and_read_back)
{
    tpb_spill_t sp;
    tpb_spill_open(&sp, dir);
    ck_assert_int_ge(sp.fd, 0);
    ck_assert_int_eq(names_in_dir(), 0);
    tpb_history_t h = spill_entry(0, 100.0);
    ck_assert_int_eq(tpb_history_len(&h, TPB_HIST_DEV), 8);
    ck_assert_int_eq(tpb_spill_history(&sp, &h), TPB_OK);
    for (int a = 0; a < TPB_HIST_ARRAYS; a++)
        ck_assert_ptr_null(h.arr[a]);
    ck_assert_int_eq(sp.end, 4 * 8 + 4 * 8 + 4 * (long)sizeof(tpb_slow_t) + 8 * 8);
    double v[8];
    tpb_slow_t sl[4];
    ck_assert_int_eq(tpb_history_load(&h, TPB_HIST_WORK, 1, 3, v), TPB_OK);
    ck_assert(v[0] == 1001.0 && v[2] == 1003.0);
    ck_assert_int_eq(tpb_history_load(&h, TPB_HIST_DEV, 7, 1, v), TPB_OK);
    ck_assert(v[0] == 93.0);
    ck_assert_int_eq(tpb_history_load(&h, TPB_HIST_SLOW, 0, 4, sl), TPB_OK);
    ck_assert(sl[3].rank == 1 && sl[3].deficit == 0.1 * 3);
    ck_assert_int_eq(tpb_history_load(&h, TPB_HIST_DEV, 7, 2, v), TPB_ERR_INVALID);
    double *c = tpb_history_dup(&h, TPB_HIST_COMPUTE);
    ck_assert(c && c[0] == 100.0 && c[3] == 103.0);
    free(c);
    /* the next config's arrays do not fit under the limit: kept in memory, the file as it was */
    long end = sp.end;
    tpb_history_t g = spill_entry(1, 200.0);
    struct rlimit old, small = {.rlim_cur = (rlim_t)end + 40};
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    tpb_status_t st = tpb_spill_history(&sp, &g);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
    ck_assert_int_eq(st, TPB_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "cannot keep the finished configs' per-rank"));
    ck_assert_int_eq(sp.end, end);
    struct stat sb;
    ck_assert_int_eq(fstat(sp.fd, &sb), 0);
    ck_assert_int_eq(sb.st_size, end); /* what part of it was written, taken back */
    ck_assert_ptr_nonnull(g.arr[TPB_HIST_COMPUTE]);
    ck_assert_int_eq(g.spilled, 0);
    ck_assert_int_eq(tpb_history_load(&g, TPB_HIST_COMPUTE, 2, 1, v), TPB_OK);
    ck_assert(v[0] == 202.0);
    ck_assert_int_eq(tpb_history_load(&h, TPB_HIST_COMPUTE, 2, 1, v), TPB_OK); /* untouched */
    ck_assert(v[0] == 102.0);
    tpb_history_free(&g);
    tpb_spill_close(&sp);
    tpb_spill_close(&sp); /* twice: a no-op */
    ck_assert_int_eq(names_in_dir(), 0);
    /* no folder: nothing spilled, the arrays read from memory */
    tpb_spill_open(&sp, "");
    ck_assert_int_eq(sp.fd, -1);
    g = spill_entry(2, 300.0);
    ck_assert_int_eq(tpb_spill_history(&sp, &g), TPB_OK);
    ck_assert_ptr_nonnull(g.arr[TPB_HIST_DEV]);
    ck_assert_int_eq(tpb_history_load(&g, TPB_HIST_DEV, 0, 1, v), TPB_OK);
    ck_assert(v[0] == 300.0);
    tpb_history_free(&g);
    tpb_history_free(&h);
}
END_TEST

START_TEST(lock_names_its_holder)
{
    int a = -1, b = -1;
    ck_assert_int_eq(tpb_outdir_lock(dir, &a), TPB_OK);
    pid_t pid = fork(); /* another process: flock is per open file */
    if (pid == 0)
        _exit(tpb_outdir_lock(dir, &b) == TPB_ERR_IO && strstr(tpb_err_msg(), "in use") ? 0 : 1);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    tpb_outdir_unlock(dir, a);
    ck_assert_int_eq(entries(), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("outfile");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, replaced_whole_modes_kept);
    tcase_add_test(tc, planted_links_refused_and_left);
    tcase_add_test(tc, names_and_temporaries);
    tcase_add_test(tc, file_too_large_loses_nothing);
    tcase_add_test(tc, appended_whole_or_taken_back);
    tcase_add_test(tc, history_spilled_and_read_back);
    tcase_add_test(tc, lock_names_its_holder);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
