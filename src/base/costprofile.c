/* costprofile.c - --cost-profile: parsing, block geometry and the kept inner entries. */
#include "base/costprofile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every cost finite and > 0, max / min bounded; *max the largest. */
static tpb_status_t check_costs(const double *c, int n, const char *what, double *max)
{
    double lo = INFINITY, hi = 0.0;
    for (int b = 0; b < n; b++) {
        if (!isfinite(c[b]) || c[b] <= 0.0)
            return tpb_err_set(TPB_ERR_INVALID,
                               "%s: the cost of block %d is %g: costs must be finite and > 0", what,
                               b, c[b]);
        lo = fmin(lo, c[b]);
        hi = fmax(hi, c[b]);
    }
    if (hi / lo > TPB_COST_MAX_RATIO)
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s: the largest cost is %.3g times the smallest, more than %.0e: "
                           "check the numbers",
                           what, hi / lo, TPB_COST_MAX_RATIO);
    *max = hi;
    return TPB_OK;
}

/* The next token of text[*at, len): skips blanks, commas and comments; 0 at the end. */
static size_t next_token(const char *text, size_t len, size_t *at)
{
    size_t i = *at;
    while (i < len) {
        if (text[i] == '#')
            while (i < len && text[i] != '\n')
                i++;
        else if (isspace((unsigned char)text[i]) || text[i] == ',')
            i++;
        else
            break;
    }
    size_t j = i;
    while (j < len && !isspace((unsigned char)text[j]) && text[j] != ',' && text[j] != '#')
        j++;
    *at = i;
    return j - i;
}

tpb_status_t tpb_cost_profile_parse(const char *text, size_t len, const char *what,
                                    tpb_cost_profile_t *out)
{
    double *c = malloc(TPB_COST_MAX_BLOCKS * sizeof(double));
    if (!c)
        return tpb_err_set(TPB_ERR_NOMEM, "%s: out of memory", what);
    int n = 0;
    double max = 0.0;
    size_t at = 0, tl;
    tpb_status_t st = TPB_OK;
    while (st == TPB_OK && (tl = next_token(text, len, &at)) > 0) {
        char tok[64], *end;
        if (n == TPB_COST_MAX_BLOCKS) {
            st = tpb_err_set(TPB_ERR_INVALID, "%s: more than %d blocks", what, TPB_COST_MAX_BLOCKS);
            break;
        }
        snprintf(tok, sizeof(tok), "%.*s", (int)(tl < 63 ? tl : 63), text + at);
        errno = 0;
        c[n] = strtod(tok, &end);
        if (tl >= sizeof(tok) || *end || end == tok || errno == ERANGE)
            st = tpb_err_set(TPB_ERR_INVALID,
                             "%s: block %d is '%s', not a number: one relative cost per block",
                             what, n, tok);
        n++;
        at += tl;
    }
    if (st == TPB_OK && n == 0)
        st = tpb_err_set(TPB_ERR_INVALID, "%s: no cost in it: one relative cost per block", what);
    if (st == TPB_OK)
        st = check_costs(c, n, what, &max);
    if (st != TPB_OK) {
        free(c);
        return st;
    }
    *out = (tpb_cost_profile_t){.nblocks = n, .cost = c, .max = max};
    snprintf(out->source, sizeof(out->source), "%s", what);
    return TPB_OK;
}

int tpb_cost_profile_is_builtin(const char *spec)
{
    return strncmp(spec, "skew:", 5) == 0;
}

tpb_status_t tpb_cost_profile_builtin(const char *spec, tpb_cost_profile_t *out)
{
    char *end;
    double r = tpb_cost_profile_is_builtin(spec) ? strtod(spec + 5, &end) : NAN;
    if (!tpb_cost_profile_is_builtin(spec) || end == spec + 5 || *end || !(r >= 1.0) ||
        r > TPB_COST_MAX_RATIO)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--cost-profile '%s': a built-in profile is skew:R with R in [1, %.0e] "
                           "(the first half R times as costly), else a file of costs",
                           spec, TPB_COST_MAX_RATIO);
    double *c = malloc(2 * sizeof(double));
    if (!c)
        return tpb_err_set(TPB_ERR_NOMEM, "--cost-profile: out of memory");
    c[0] = r;
    c[1] = 1.0;
    *out = (tpb_cost_profile_t){.nblocks = 2, .cost = c, .max = r};
    snprintf(out->source, sizeof(out->source), "%s", spec);
    return TPB_OK;
}

void tpb_cost_profile_free(tpb_cost_profile_t *p)
{
    free(p->cost);
    memset(p, 0, sizeof(*p));
}

tpb_status_t tpb_cost_fits(const tpb_cost_profile_t *p, long total, long g)
{
    if (p->nblocks > total / g)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--cost-profile %s: %d blocks on a dimension of %ld (%ld units of "
                           "granularity %ld): use fewer blocks, a larger shape or a smaller "
                           "--granularity",
                           p->source, p->nblocks, total, total / g, g);
    return TPB_OK;
}

long tpb_cost_block_start(const tpb_cost_profile_t *p, long total, long g, int b)
{
    if (b >= p->nblocks)
        return total;
    long units = total / g;
    return (long)b * units / p->nblocks * g; /* b <= 65536, units < 2^31: no overflow */
}

int tpb_cost_block_of(const tpb_cost_profile_t *p, long total, long g, long e)
{
    long units = total / g, u = e / g < units ? e / g : units - 1;
    int b = (int)(u * p->nblocks / units); /* a first guess, then exact */
    while (b > 0 && tpb_cost_block_start(p, total, g, b) > e)
        b--;
    while (b + 1 < p->nblocks && tpb_cost_block_start(p, total, g, b + 1) <= e)
        b++;
    return b;
}

long tpb_cost_kept(const tpb_cost_profile_t *p, int b, long inner)
{
    long kept = (long)ceil(p->cost[b] / p->max * (double)inner);
    kept = (kept + 15) / 16 * 16;
    return kept < 1 ? 1 : kept > inner ? inner : kept;
}

void tpb_cost_units(const tpb_cost_profile_t *p, long total, long g, double *ucost)
{
    long units = total / g;
    for (long u = 0; u < units; u++)
        ucost[u] = p->cost[tpb_cost_block_of(p, total, g, u * g)];
    ucost[units - 1] *= (double)(g + total % g) / (double)g;
}

double tpb_cost_range(const tpb_cost_profile_t *p, long total, long g, long lo, long hi)
{
    double sum = 0.0;
    for (int b = 0; b < p->nblocks; b++) {
        long s = tpb_cost_block_start(p, total, g, b), e = tpb_cost_block_start(p, total, g, b + 1);
        long a = lo > s ? lo : s, z = hi < e ? hi : e;
        if (z > a)
            sum += p->cost[b] * (double)(z - a) / (double)g;
    }
    return sum;
}
