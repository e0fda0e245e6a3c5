/*
 * suggest.h - "did you mean ...?": the candidate nearest to a mistyped word, by the optimal
 * string alignment distance (insertions, deletions, substitutions and swaps of two neighbours,
 * each 1; case ignored). Pure.
 */
#ifndef TPB_SUGGEST_H
#define TPB_SUGGEST_H

#include <stddef.h>

/** The distance between a and b (case ignored), or `cap` + 1 if it is more than cap. */
size_t tpb_suggest_distance(const char *a, const char *b, size_t cap);

/**
 * The index of the candidate nearest to `word`, or -1 if none is near enough: at most 2 edits
 * and at most a third of the candidate's length, at least 1. Ties: the first.
 */
int tpb_suggest(const char *word, const char *const *cands, int n);

#endif /* TPB_SUGGEST_H */
