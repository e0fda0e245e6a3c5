/* utf8.h - one UTF-8 sequence decoded, for the writers that must emit valid UTF-8 whatever
 * bytes a name holds (base/buf.c) and for error lines that echo what the user gave
 * (base/status.c). Pure. */
#ifndef TPB_UTF8_H
#define TPB_UTF8_H

#include <stddef.h>

/** The length (1-4) of the valid UTF-8 sequence at p, its code point in *cp; 0 where p holds
 *  none (a stray continuation byte, an overlong form, a surrogate, a sequence cut short, by a
 *  NUL too), *cp then the byte's value. */
size_t tpb_utf8_decode(const unsigned char *p, unsigned *cp);

#endif
