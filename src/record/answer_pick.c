/* answer_pick.c - how sure a use line's pick is: the pick against its runner-up (the next
 * best config the answer may recommend for the same shape and question), their steps' ratio
 * with its 95 % interval (tpb_interval_ratio: the two ran one after the other, not side by
 * side, so nothing is paired), scaled to the question's figure (a layer rate counts the
 * groups at once). Sure where the whole interval favours the pick. */
#include <math.h>

#include "base/interval.h"
#include "record/answer.h"

tpb_pick_t tpb_answer_pick(const tpb_history_t *pick, const tpb_history_t *runner, int rate)
{
    tpb_pick_t p = {.runner = NULL, .margin = NAN, .lo = NAN, .hi = NAN, .sure = -1};
    if (!pick || !runner || pick == runner)
        return p; /* nothing to compare with: no line */
    p.runner = runner;
    /* the step of the runner-up over the pick's: above 1 where the pick is faster */
    tpb_ratio_ci_t r = pick->steps && runner->steps && pick->nsteps > 0 && runner->nsteps > 0
                           ? tpb_interval_ratio(pick->steps, (size_t)pick->nsteps, runner->steps,
                                                (size_t)runner->nsteps)
                           : (tpb_ratio_ci_t){NAN, NAN, NAN, INFINITY};
    double scale = rate && runner->tp > 0 && pick->tp > 0
                       ? ((double)(pick->world / pick->tp) / (runner->world / runner->tp))
                       : 1.0;
    if (!isfinite(r.ratio) || !isfinite(r.half))
        return p; /* not enough data: sure stays -1 */
    p.margin = scale * r.ratio;
    p.lo = p.margin * exp(-r.half);
    p.hi = p.margin * exp(r.half);
    p.sure = p.lo > 1.0;
    return p;
}

void tpb_answer_pick_text(tpb_buf_t *txt, const tpb_pick_t *p, const char *question)
{
    if (!p->runner)
        return;
    const tpb_history_t *r = p->runner;
    if (p->sure < 0) {
        tpb_buf_printf(txt,
                       "#     %s: not enough data to tell it from %s at tp %d (too few steps for "
                       "an interval)\n",
                       question, tpb_config_key_label(&r->key), r->tp);
        return;
    }
    tpb_buf_printf(txt, "#     %s: %s, %.2fx [%.2f, %.2f] over the next, %s at tp %d%s\n", question,
                   p->sure ? "sure" : "not sure", p->margin, p->lo, p->hi,
                   tpb_config_key_label(&r->key), r->tp,
                   p->sure ? "" : " (its interval reaches 1: either will do; --iters to tell)");
}

void tpb_answer_pick_json(tpb_buf_t *js, const tpb_pick_t *p)
{
    if (!p->runner)
        return;
    tpb_json_kv_str(js, "sure", p->sure < 0 ? "not enough data" : p->sure ? "sure" : "not sure");
    tpb_json_kv_str(js, "runner_up", tpb_config_key_label(&p->runner->key));
    tpb_json_kv_int(js, "runner_up_tp", p->runner->tp);
    tpb_json_kv_num(js, "margin", p->margin);
    tpb_json_kv_num(js, "margin_lo", p->lo);
    tpb_json_kv_num(js, "margin_hi", p->hi);
}
