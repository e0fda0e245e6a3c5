/* spill.c - the record's per-rank arrays in an unnamed file (spill.h). */
#include "record/spill.h"
#include "record/outfile.h"
#include "record/outfile_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void tpb_spill_open(tpb_spill_t *s, const char *dir)
{
    int dirfd, named = 0;
    char tmp[TPB_OUTFILE_NAME + 40];
    *s = (tpb_spill_t)TPB_SPILL_NONE;
    if (!dir || !dir[0])
        return;
    snprintf(s->path, sizeof(s->path), "%s", dir);
    if (tpb_outfile_open_dir(dir, &dirfd) != TPB_OK) {
        tpb_err_clear();
        return;
    }
    int fd = tpb_outfile_temporary(dirfd, "history.spill", tmp, sizeof(tmp), &named);
    if (fd >= 0 && named) /* one this run made, unnamed at once: nothing of it outlives us */
        unlinkat(dirfd, tmp, 0);
    close(dirfd);
    s->fd = fd;
}

size_t tpb_history_elem(tpb_hist_array_t a)
{
    return a == TPB_HIST_SLOW ? sizeof(tpb_slow_t) : sizeof(double);
}

size_t tpb_history_len(const tpb_history_t *h, tpb_hist_array_t a)
{
    int groups = h->tp > 0 ? h->world / h->tp : 0;
    if (!h->arr[a] && !(h->spilled & (1u << a)))
        return 0;
    switch (a) {
    case TPB_HIST_COMPUTE:
    case TPB_HIST_WORK: return (size_t)h->world;
    case TPB_HIST_SLOW: return (size_t)h->nslow;
    case TPB_HIST_DEV: return groups > 0 ? (size_t)(h->nslow / groups) * (size_t)h->world : 0;
    case TPB_HIST_ARRAYS: break;
    }
    return 0;
}

/* Write n bytes at s's end, whole; *at where they went. */
static tpb_status_t put(tpb_spill_t *s, const void *p, size_t n, long *at)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = pwrite(s->fd, (const char *)p + done, n - done, (off_t)(s->end + (long)done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int err = w < 0 ? errno : ENOSPC;
            if (ftruncate(s->fd, (off_t)s->end) != 0) /* what part of it went there */
                err = errno;
            return tpb_err_set(TPB_ERR_IO,
                               "cannot keep the finished configs' per-rank figures in %s (an "
                               "unnamed file there): %s",
                               s->path, strerror(err));
        }
        done += (size_t)w;
    }
    *at = s->end;
    s->end += (long)n;
    return TPB_OK;
}

tpb_status_t tpb_spill_history(tpb_spill_t *s, tpb_history_t *h)
{
    if (s->fd < 0)
        return TPB_OK;
    long at[TPB_HIST_ARRAYS], start = s->end;
    for (int a = 0; a < TPB_HIST_ARRAYS; a++) { /* all written before any is freed */
        size_t n = h->arr[a] ? tpb_history_len(h, (tpb_hist_array_t)a) : 0;
        if (n) {
            tpb_status_t st = put(s, h->arr[a], n * tpb_history_elem((tpb_hist_array_t)a), &at[a]);
            if (st != TPB_OK) {
                tpb_spill_truncate(s, start);
                return st;
            }
        }
    }
    for (int a = 0; a < TPB_HIST_ARRAYS; a++)
        if (h->arr[a] && tpb_history_len(h, (tpb_hist_array_t)a)) {
            h->at[a] = at[a];
            h->spilled |= 1u << a;
            free(h->arr[a]);
            h->arr[a] = NULL;
        }
    h->spill = s;
    return TPB_OK;
}

void tpb_spill_truncate(tpb_spill_t *s, long end)
{
    if (s->fd >= 0 && end < s->end && ftruncate(s->fd, (off_t)end) == 0)
        s->end = end;
}

void tpb_spill_close(tpb_spill_t *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    s->end = 0;
}

tpb_status_t tpb_history_load(const tpb_history_t *h, tpb_hist_array_t a, size_t first, size_t n,
                              void *out)
{
    size_t len = tpb_history_len(h, a), es = tpb_history_elem(a);
    if (first > len || n > len - first)
        return tpb_err_set(TPB_ERR_INVALID, "config %d: entries %zu-%zu of an array of %zu", h->id,
                           first, first + n, len);
    if (h->arr[a]) {
        memcpy(out, (const char *)h->arr[a] + first * es, n * es);
        return TPB_OK;
    }
    size_t done = 0, bytes = n * es;
    off_t at = (off_t)h->at[a] + (off_t)(first * es);
    while (done < bytes) {
        ssize_t r =
            h->spill ? pread(h->spill->fd, (char *)out + done, bytes - done, at + (off_t)done) : -1;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return tpb_err_set(TPB_ERR_IO, "cannot read config %d's per-rank figures back: %s",
                               h->id, r < 0 ? strerror(errno) : "the file is shorter");
        done += (size_t)r;
    }
    return TPB_OK;
}

void *tpb_history_dup(const tpb_history_t *h, tpb_hist_array_t a)
{
    size_t n = tpb_history_len(h, a);
    void *p = n ? malloc(n * tpb_history_elem(a)) : NULL;
    if (p && tpb_history_load(h, a, 0, n, p) != TPB_OK) {
        tpb_err_clear();
        free(p);
        p = NULL;
    }
    return p;
}
