/* wrap.c - '#' lines folded at a terminal's width (wrap.h). */
#include "record/wrap.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int tpb_wrap_width(int fd, int wide)
{
    struct winsize ws;
    if (!isatty(fd) || ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0)
        return wide ? 0 : TPB_WRAP_DEFAULT; /* a file, a pipe, or a piped mpirun's pty */
    return ws.ws_col < 40 ? 40 : ws.ws_col;
}

static int is_tool_line(const char *line, size_t n)
{
    return n > 7 && memcmp(line, "tpbal: ", 7) == 0;
}

/* Columns of the indentation under a '#' line's text: the spaces after '#', plus 4; a
 * "tpbal: " line's: 3 (its continuations start with a space, not a '#'). */
static size_t indent_of(const char *line, size_t n)
{
    if (line[0] != '#')
        return 3;
    size_t i = 1;
    while (i < n && line[i] == ' ')
        i++;
    return i - 1 + 4;
}

void tpb_wrap_line(const char *line, size_t n, int width, tpb_buf_t *out)
{
    if (width <= 0 || n <= (size_t)width || !(line[0] == '#' || is_tool_line(line, n))) {
        tpb_buf_append(out, line, n);
        tpb_buf_puts(out, "\n");
        return;
    }
    size_t ind = indent_of(line, n), at = 0, lead = 0; /* lead: columns before this piece */
    if (ind + 20 > (size_t)width)
        ind = 4;
    while (n - at + lead > (size_t)width) {
        size_t room = (size_t)width - lead, cut = at + room;
        size_t floor = lead ? at : at + ind - 3; /* not inside the line's own indentation */
        while (cut > floor && line[cut] != ' ')
            cut--;
        if (cut <= floor) { /* one word longer than the room: whole, up to its end */
            cut = at + room;
            while (cut < n && line[cut] != ' ')
                cut++;
            if (cut == n)
                break;
        }
        size_t end = cut;
        while (end > at && line[end - 1] == ' ')
            end--;
        tpb_buf_append(out, line + at, end - at);
        tpb_buf_printf(out, "\n%c%*s", line[0] == '#' ? '#' : ' ', (int)ind, "");
        lead = ind + 1;
        at = cut;
        while (at < n && line[at] == ' ')
            at++;
    }
    tpb_buf_append(out, line + at, n - at);
    tpb_buf_puts(out, "\n");
}

typedef struct {
    FILE *base;
    int width;
    tpb_buf_t held; /* the current line, until its newline */
} wrap_t;

static void emit(wrap_t *w, const char *line, size_t n)
{
    tpb_buf_t out = TPB_BUF_INIT;
    tpb_wrap_line(line, n, w->width, &out);
    fwrite(tpb_buf_str(&out), 1, out.len, w->base);
    tpb_buf_free(&out);
}

static ssize_t wrap_write(void *cookie, const char *data, size_t size)
{
    wrap_t *w = cookie;
    tpb_buf_append(&w->held, data, size);
    if (!tpb_buf_ok(&w->held))
        return -1;
    const char *s = w->held.data, *nl;
    size_t done = 0;
    while ((nl = memchr(s + done, '\n', w->held.len - done)) != NULL) {
        emit(w, s + done, (size_t)(nl - (s + done)));
        done = (size_t)(nl - s) + 1;
    }
    if (done) {
        memmove(w->held.data, s + done, w->held.len - done);
        w->held.len -= done;
        w->held.data[w->held.len] = '\0';
        fflush(w->base);
    }
    return ferror(w->base) ? -1 : (ssize_t)size;
}

static int wrap_close(void *cookie)
{
    wrap_t *w = cookie;
    if (w->held.len)
        fwrite(w->held.data, 1, w->held.len, w->base);
    int bad = fflush(w->base) != 0;
    tpb_buf_free(&w->held);
    free(w);
    return bad ? EOF : 0;
}

FILE *tpb_wrap_open(FILE *base, int width)
{
    if (width <= 0)
        return base;
    wrap_t *w = calloc(1, sizeof(*w));
    if (!w)
        return base;
    w->base = base;
    w->width = width;
    cookie_io_functions_t io = {.write = wrap_write, .close = wrap_close};
    FILE *f = fopencookie(w, "w", io);
    if (!f) {
        free(w);
        return base;
    }
    setvbuf(f, NULL, _IOLBF, 0);
    return f;
}
