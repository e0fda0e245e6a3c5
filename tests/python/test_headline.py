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

    def test_layers_without_a_block_are_answers(self):
        items = hl.answers({"answer": [use("qkv_proj", "col", 2, 11100.0)]}, {"ranks": []})
        self.assertEqual([k for k, _ in items], ["use"])
        self.assertTrue(items[0][1].startswith("Use col even at TP 2"))


if __name__ == "__main__":
    unittest.main()
