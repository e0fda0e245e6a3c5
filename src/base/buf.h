/*
 * buf.h - a growable text buffer and the JSON and CSV encoders built on it.
 * Allocation failure is sticky: the buffer records it and tpb_buf_ok() says so,
 * so writers check once at the end instead of after every append.
 */
#ifndef TPB_BUF_H
#define TPB_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct {
    char *data; /**< NUL-terminated text (NULL until the first append) */
    size_t len;
    size_t cap;
    int failed; /**< an allocation failed; contents are truncated */
} tpb_buf_t;

#define TPB_BUF_INIT                                                                               \
    {                                                                                              \
        NULL, 0, 0, 0                                                                              \
    }

void tpb_buf_free(tpb_buf_t *b);
void tpb_buf_reset(tpb_buf_t *b);   /**< length 0, memory kept */
int tpb_buf_ok(const tpb_buf_t *b); /**< 1 unless an allocation failed */
void tpb_buf_append(tpb_buf_t *b, const char *s, size_t n);
void tpb_buf_puts(tpb_buf_t *b, const char *s);
void tpb_buf_printf(tpb_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tpb_buf_vprintf(tpb_buf_t *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
const char *tpb_buf_str(const tpb_buf_t *b); /**< "" when empty */

/* ---- JSON: values are separated automatically inside objects and arrays ---- */
void tpb_json_obj_begin(tpb_buf_t *b);
void tpb_json_obj_end(tpb_buf_t *b);
void tpb_json_arr_begin(tpb_buf_t *b);
void tpb_json_arr_end(tpb_buf_t *b);
void tpb_json_key(tpb_buf_t *b, const char *key);
void tpb_json_str(tpb_buf_t *b, const char *s); /**< quoted and escaped; NULL -> null */
void tpb_json_num(tpb_buf_t *b, double v);      /**< shortest exact form; NaN, inf -> null */
void tpb_json_int(tpb_buf_t *b, long long v);
void tpb_json_kv_str(tpb_buf_t *b, const char *key, const char *v);
void tpb_json_kv_num(tpb_buf_t *b, const char *key, double v);
void tpb_json_kv_int(tpb_buf_t *b, const char *key, long long v);
void tpb_json_kv_nums(tpb_buf_t *b, const char *key, const double *v, size_t n);
void tpb_json_kv_longs(tpb_buf_t *b, const char *key, const long *v, size_t n);

/**
 * Decode the JSON string literal starting at in (which must point at '"') into
 * out[cap]; *end receives the character after the closing quote. Returns the
 * decoded length, or -1 on malformed input or overflow. \u escapes above
 * U+007F are written as UTF-8.
 */
long tpb_json_unescape(const char *in, char *out, size_t cap, const char **end);

/* ---- CSV (RFC 4180) ---- */
/** Append a field, quoted when it holds a comma, quote, CR or LF. */
void tpb_csv_field(tpb_buf_t *b, const char *s);
/** The bytes of s as the JSON and CSV writers write its text (valid UTF-8: a byte that is not
 *  part of a UTF-8 sequence becomes two), quotes aside. */
size_t tpb_text_len(const char *s);
/** Append a number field (shortest exact form; NaN -> empty). */
void tpb_csv_num(tpb_buf_t *b, double v);

/**
 * Split one CSV record (without its line end) in place into at most max
 * fields, undoing the quoting. Returns the field count, or -1 if malformed.
 */
int tpb_csv_split(char *line, char **fields, int max);

#endif /* TPB_BUF_H */
