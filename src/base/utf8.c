/* utf8.c - one UTF-8 sequence decoded (RFC 3629: no overlong forms, no surrogates, nothing past
 * U+10FFFF). */
#include "base/utf8.h"

size_t tpb_utf8_decode(const unsigned char *p, unsigned *cp)
{
    unsigned c = p[0], need, min;
    *cp = c;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        need = 1, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        need = 2, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        need = 3, min = 0x10000;
    else
        return 0;
    unsigned v = c & (0x3f >> need);
    for (unsigned i = 1; i <= need; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0; /* a NUL ends it too */
        v = v << 6 | (p[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return need + 1;
}
