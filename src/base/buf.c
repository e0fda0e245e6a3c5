/* buf.c - growable text buffer, JSON and CSV encoding. */
#include "base/buf.h"
#include "base/utf8.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tpb_buf_free(tpb_buf_t *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}

void tpb_buf_reset(tpb_buf_t *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

int tpb_buf_ok(const tpb_buf_t *b)
{
    return !b->failed;
}

static int reserve(tpb_buf_t *b, size_t extra)
{
    if (b->failed)
        return 0;
    if (b->len + extra + 1 <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = 1;
        return 0;
    }
    b->data = p;
    b->cap = cap;
    return 1;
}

void tpb_buf_append(tpb_buf_t *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void tpb_buf_puts(tpb_buf_t *b, const char *s)
{
    tpb_buf_append(b, s, strlen(s));
}

void tpb_buf_vprintf(tpb_buf_t *b, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n >= 0 && reserve(b, (size_t)n)) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
        b->len += (size_t)n;
    }
    va_end(again);
}

void tpb_buf_printf(tpb_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tpb_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *tpb_buf_str(const tpb_buf_t *b)
{
    return b->data ? b->data : "";
}

/* ---- JSON ---- */

static void sep(tpb_buf_t *b)
{
    if (b->len == 0)
        return;
    char last = b->data[b->len - 1];
    if (last != '{' && last != '[' && last != ':' && last != '\n')
        tpb_buf_append(b, ",", 1);
}

void tpb_json_obj_begin(tpb_buf_t *b)
{
    sep(b);
    tpb_buf_append(b, "{", 1);
}

void tpb_json_obj_end(tpb_buf_t *b)
{
    tpb_buf_append(b, "}", 1);
}

void tpb_json_arr_begin(tpb_buf_t *b)
{
    sep(b);
    tpb_buf_append(b, "[", 1);
}

void tpb_json_arr_end(tpb_buf_t *b)
{
    tpb_buf_append(b, "]", 1);
}

/* A string as a JSON literal that is valid UTF-8 and one line whatever the bytes: control
 * characters and the line separators a reader may split at (U+0085, U+2028, U+2029) escaped,
 * and a byte that is not part of valid UTF-8 (a file name's, an argument's) written as the code
 * point of its value, U+0080-U+00FF, so that no tool's decoder refuses the file. */
static void put_escaped(tpb_buf_t *b, const char *s)
{
    tpb_buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned cp;
        size_t n = tpb_utf8_decode(p, &cp);
        switch (n == 1 ? *p : 0) {
        case '"': tpb_buf_puts(b, "\\\""); break;
        case '\\': tpb_buf_puts(b, "\\\\"); break;
        case '\n': tpb_buf_puts(b, "\\n"); break;
        case '\r': tpb_buf_puts(b, "\\r"); break;
        case '\t': tpb_buf_puts(b, "\\t"); break;
        default:
            if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f)) || cp == 0x85 || cp == 0x2028 ||
                cp == 0x2029)
                tpb_buf_printf(b, "\\u%04x", n == 0 ? (unsigned)*p : cp);
            else
                tpb_buf_append(b, (const char *)p, n);
        }
        p += n ? n : 1;
    }
    tpb_buf_append(b, "\"", 1);
}

void tpb_json_key(tpb_buf_t *b, const char *key)
{
    sep(b);
    put_escaped(b, key);
    tpb_buf_append(b, ":", 1);
}

void tpb_json_str(tpb_buf_t *b, const char *s)
{
    sep(b);
    if (s)
        put_escaped(b, s);
    else
        tpb_buf_puts(b, "null");
}

/* Shortest of %.15g/%.16g/%.17g that reads back exactly. */
static void format_double(char *out, size_t cap, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(out, cap, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

void tpb_json_num(tpb_buf_t *b, double v)
{
    sep(b);
    if (!isfinite(v)) {
        tpb_buf_puts(b, "null");
        return;
    }
    char tmp[40];
    format_double(tmp, sizeof(tmp), v);
    tpb_buf_puts(b, tmp);
}

void tpb_json_int(tpb_buf_t *b, long long v)
{
    sep(b);
    tpb_buf_printf(b, "%lld", v);
}

void tpb_json_kv_str(tpb_buf_t *b, const char *key, const char *v)
{
    tpb_json_key(b, key);
    tpb_json_str(b, v);
}

void tpb_json_kv_num(tpb_buf_t *b, const char *key, double v)
{
    tpb_json_key(b, key);
    tpb_json_num(b, v);
}

void tpb_json_kv_int(tpb_buf_t *b, const char *key, long long v)
{
    tpb_json_key(b, key);
    tpb_json_int(b, v);
}

void tpb_json_kv_nums(tpb_buf_t *b, const char *key, const double *v, size_t n)
{
    tpb_json_key(b, key);
    if (!v) {
        tpb_buf_puts(b, "null");
        return;
    }
    tpb_json_arr_begin(b);
    for (size_t i = 0; i < n; i++)
        tpb_json_num(b, v[i]);
    tpb_json_arr_end(b);
}

void tpb_json_kv_longs(tpb_buf_t *b, const char *key, const long *v, size_t n)
{
    tpb_json_key(b, key);
    tpb_json_arr_begin(b);
    for (size_t i = 0; i < n; i++)
        tpb_json_int(b, v[i]);
    tpb_json_arr_end(b);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    o[0] = (char)(0xe0 | (cp >> 12));
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
}

long tpb_json_unescape(const char *in, char *out, size_t cap, const char **end)
{
    if (*in != '"')
        return -1;
    size_t n = 0;
    for (const char *p = in + 1; *p; p++) {
        char c = *p;
        char enc[4];
        size_t len = 1;
        if (c == '"') {
            out[n] = '\0';
            if (end)
                *end = p + 1;
            return (long)n;
        }
        if ((unsigned char)c < 0x20)
            return -1;
        enc[0] = c;
        if (c == '\\') {
            c = *++p;
            switch (c) {
            case '"':
            case '\\':
            case '/': enc[0] = c; break;
            case 'n': enc[0] = '\n'; break;
            case 'r': enc[0] = '\r'; break;
            case 't': enc[0] = '\t'; break;
            case 'b': enc[0] = '\b'; break;
            case 'f': enc[0] = '\f'; break;
            case 'u': {
                unsigned cp = 0;
                for (int i = 1; i <= 4; i++) {
                    int h = hexval(p[i]);
                    if (h < 0)
                        return -1;
                    cp = cp * 16 + (unsigned)h;
                }
                p += 4;
                len = put_utf8(enc, cp);
                break;
            }
            default: return -1;
            }
        }
        if (n + len >= cap)
            return -1;
        memcpy(out + n, enc, len);
        n += len;
    }
    return -1;
}

/* ---- CSV ---- */

/* Append s as UTF-8: a byte that is not part of valid UTF-8 as the code point of its value
 * (the JSON writer's rule: the CSV reads back with the same text). */
static void put_text(tpb_buf_t *b, const char *s, int quote_quotes)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned cp;
        size_t n = tpb_utf8_decode(p, &cp);
        if (n == 0) {
            char two[2];
            tpb_buf_append(b, two, put_utf8(two, *p));
            p++;
            continue;
        }
        if (quote_quotes && *p == '"')
            tpb_buf_append(b, "\"", 1);
        tpb_buf_append(b, (const char *)p, n);
        p += n;
    }
}

size_t tpb_text_len(const char *s)
{
    size_t len = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned cp;
        size_t n = tpb_utf8_decode(p, &cp);
        len += n ? n : 2; /* put_text's rule */
        p += n ? n : 1;
    }
    return len;
}

void tpb_csv_field(tpb_buf_t *b, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        put_text(b, s, 0);
        return;
    }
    tpb_buf_append(b, "\"", 1);
    put_text(b, s, 1);
    tpb_buf_append(b, "\"", 1);
}

void tpb_csv_num(tpb_buf_t *b, double v)
{
    if (!isfinite(v))
        return;
    char tmp[40];
    format_double(tmp, sizeof(tmp), v);
    tpb_buf_puts(b, tmp);
}

int tpb_csv_split(char *line, char **fields, int max)
{
    int n = 0;
    char *r = line;
    for (;;) {
        if (n == max)
            return -1;
        char *w = r;
        fields[n++] = w;
        if (*r == '"') {
            r++;
            for (;;) {
                if (*r == '\0')
                    return -1;
                if (*r == '"') {
                    if (r[1] == '"') {
                        *w++ = '"';
                        r += 2;
                        continue;
                    }
                    r++;
                    break;
                }
                *w++ = *r++;
            }
            if (*r != ',' && *r != '\0')
                return -1;
        } else {
            while (*r && *r != ',') {
                if (*r == '"')
                    return -1;
                *w++ = *r++;
            }
        }
        char next = *r;
        *w = '\0';
        if (next == '\0')
            return n;
        r++;
    }
}
