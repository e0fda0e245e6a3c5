"""The report's headline (tpbal_headline.py): a --block run is answered as a block first, its
GEMMs' own "use" lines kept as its parts, not as answers to run."""
import unittest

import tpbal_headline as hl


def use(shape, split, tp, step):
    return {"kind": "use", "question": "latency", "shape": shape, "m": 512, "n": 768, "k": 512,
            "tp": tp, "placement": "packed", "split": split, "sequence_parallel": "off",
            "policy": "even", "step_us": step, "layers_per_s": 10.0}


class Headline(unittest.TestCase):
    def test_block_first_its_gemms_as_parts(self):
        summ = {"answer": [use("qkv_proj", "col", 2, 11100.0), use("o_proj", "row", 1, 7700.0),
                           {"kind": "block_use", "question": "throughput", "block": "llama3-8b",
                            "tp": 2, "placement": "packed", "sequence_parallel": "off",
                            "policy": "even", "step_us": 92000.0, "tokens_per_s_rank": 2783.0}]}
        items = hl.answers(summ, {"ranks": []})
        self.assertEqual(items[0][0], "use")
        self.assertIn("Use TP 2 even for the block llama3-8b", items[0][1])
        self.assertIn("2783 tokens/s per rank", items[0][1])
        uses = [t for k, t in items if k == "use"]
        self.assertEqual(len(uses), 1, uses)  # one block cannot run TP 2 and TP 1 at once
        parts = [t for k, t in items if t.startswith("Part of the block")]
        self.assertEqual(len(parts), 2)
        self.assertIn("qkv_proj alone: col even at TP 2", parts[0])

    def test_block_use_says_its_runner_up_and_level(self):
        a = {"kind": "block_use", "question": "throughput", "block": "tiny", "tp": 1,
             "policy": "even", "step_us": 2370.0, "tokens_per_s_rank": 54102.0,
             "runner_up_tp": 2, "over_runner_up": 1.17, "over_runner_up_lo": 1.05,
             "over_runner_up_hi": 1.31, "verdict": "better", "confidence": 0.99931,
             "budget_looks": 8, "measured_after_tp": 1}
        items = hl.answers({"answer": [a]}, {"ranks": []})
        self.assertIn("; 1.17x TP 2 [1.05, 1.31] at 99.93 % after 8 look(s) of --budget: sure.",
                      items[0][1])
        del a["confidence"]
        a["verdict"] = "inconclusive"
        self.assertIn("; 1.17x TP 2 [1.05, 1.31]: not sure.", hl.answers(
            {"answer": [a]}, {"ranks": []})[0][1])

    def test_budget_note(self):
        summ = {"budget": {"seconds": 60, "spent_s": 12.5, "sets": 4, "extended": 3,
                           "for_straggler": 1, "for_ranking": 1, "open_budget_spent": 0,
                           "open_most_looks": 2}}
        (kind, text), = hl.budget_note(summ)
        self.assertEqual(kind, "note")
        self.assertIn("--budget 60 s: 12.5 s spent on more looks of 3 of 4 sets", text)
        self.assertIn("1 for a block's TP ranking alone); left open: 0 when the budget ran out, "
                      "2 after the most looks.", text)
        self.assertEqual(hl.budget_note({}), [])
        self.assertEqual(hl.budget_note({"budget": {"seconds": "x"}}), [])

    def test_layers_without_a_block_are_answers(self):
        items = hl.answers({"answer": [use("qkv_proj", "col", 2, 11100.0)]}, {"ranks": []})
        self.assertEqual([k for k, _ in items], ["use"])
        self.assertTrue(items[0][1].startswith("Use col even at TP 2"))

    def test_a_pick_says_how_sure_it_is(self):
        a = use("o_proj", "row", 2, 78.0)
        a.update(sure="not sure", runner_up="col even", runner_up_tp=2, margin=1.01,
                 margin_lo=0.97, margin_hi=1.05)
        (_, text), = hl.answers({"answer": [a]}, {"ranks": []})
        self.assertIn("; not sure: col even at TP 2 is within the interval (0.97x to 1.05x), "
                      "either will do.", text)
        a.update(sure="sure", margin_lo=1.15, margin_hi=1.25)
        (_, text), = hl.answers({"answer": [a]}, {"ranks": []})
        self.assertIn("; sure: 1.15x to 1.25x over the next, col even at TP 2.", text)
        a.update(sure="not enough data", margin_lo=None)
        (_, text), = hl.answers({"answer": [a]}, {"ranks": []})
        self.assertIn("; not enough data to tell it from col even at TP 2.", text)
        del a["sure"]  # an older run's record: nothing said
        (_, text), = hl.answers({"answer": [a]}, {"ranks": []})
        self.assertTrue(text.endswith("(latency)."), text)


if __name__ == "__main__":
    unittest.main()
