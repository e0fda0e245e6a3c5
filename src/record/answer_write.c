/* answer_write.c - the closing answer built once (answer.c) and rendered to the terminal's
 * lines (answer_text.c) and the JSON summary (answer_json.c) from the same model; the same for
 * a --block run's blocks (answer_block.c). */
#include "record/answer_model.h"

static void answer_write(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                         const char *const *hosts, double target_spread, int parts)
{
    tpb_answer_t a;
    if (tpb_answer_build(&a, hist, n, hosts, target_spread, parts) != 0) {
        tpb_buf_puts(txt, "# answer: out of memory\n");
        return;
    }
    tpb_answer_text(txt, &a);
    tpb_answer_json(js, &a);
    tpb_answer_free(&a);
}

void tpb_answer_write(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                      const char *const *hosts, double target_spread)
{
    answer_write(txt, js, hist, n, hosts, target_spread, 0);
}

void tpb_answer_parts(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                      const char *const *hosts, double target_spread)
{
    answer_write(txt, js, hist, n, hosts, target_spread, 1);
}

void tpb_answer_block(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *blocks, int n)
{
    tpb_block_answer_t a;
    if (tpb_block_answer_build(&a, blocks, n) != 0) {
        tpb_buf_puts(txt, "# blocks: out of memory for the answer\n");
        return;
    }
    tpb_block_answer_text(txt, &a);
    tpb_block_answer_json(js, &a);
    tpb_block_answer_free(&a);
}

void tpb_answer_overlap(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *ohist, int n)
{
    tpb_overlap_answer_t a;
    if (tpb_overlap_answer_build(&a, ohist, n) != 0) {
        tpb_buf_puts(txt, "# overlap: out of memory for the answer\n");
        return;
    }
    tpb_overlap_answer_text(txt, &a);
    tpb_overlap_answer_json(js, &a);
    tpb_overlap_answer_free(&a);
}
