/* suggest.c - the nearest candidate to a mistyped word (see suggest.h). */
#include "base/suggest.h"

#include <ctype.h>
#include <string.h>

#define LONGEST 64 /* longer words are compared on their first LONGEST characters */

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

size_t tpb_suggest_distance(const char *a, const char *b, size_t cap)
{
    size_t la = strnlen(a, LONGEST), lb = strnlen(b, LONGEST);
    if ((la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    size_t d[LONGEST + 1][LONGEST + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            d[i][j] = min3(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (ca != cb));
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < d[i][j])
                d[i][j] = d[i - 2][j - 2] + 1; /* two neighbours swapped */
        }
    return d[la][lb] > cap ? cap + 1 : d[la][lb];
}

int tpb_suggest(const char *word, const char *const *cands, int n)
{
    int best = -1;
    size_t best_d = 3;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(cands[i]), cap = len / 3 < 2 ? (len / 3 ? len / 3 : 1) : 2;
        size_t d = tpb_suggest_distance(word, cands[i], cap);
        if (d <= cap && d < best_d) {
            best = i;
            best_d = d;
        }
    }
    return best;
}
