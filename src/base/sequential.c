/* sequential.c - alpha spending over the looks of a budgeted measurement (sequential.h). */
#include "base/sequential.h"

double tpb_seq_spend(double alpha, int look)
{
    return look < 1 ? 0.0 : alpha / ((double)look * (double)(look + 1));
}

double tpb_seq_conf(double alpha, int look)
{
    return 1.0 - tpb_seq_spend(alpha, look);
}

tpb_seq_look_t tpb_seq_paired(const double *a, const double *b, size_t n, int rounds, int look,
                              double alpha, double tol)
{
    tpb_seq_look_t l = {.conf = tpb_seq_conf(alpha, look), .look = look};
    l.ci = tpb_interval_paired_at(a, b, n, rounds, l.conf);
    l.verdict = tpb_interval_decide(l.ci.ratio, l.ci.half, tol);
    l.stop = l.verdict == TPB_VERDICT_BETTER || l.verdict == TPB_VERDICT_WORSE ||
             l.verdict == TPB_VERDICT_DRAW;
    return l;
}
