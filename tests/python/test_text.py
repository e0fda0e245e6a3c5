"""The tools' text folded as tpbal folds its own (tpbal_text; src/record/wrap.c), and the
words they use defined once (tpbal_glossary, doc/GLOSSARY.md)."""
import io
import os
import unittest

import tpbal_glossary as tg
import tpbal_text as tt

VERDICT = ("#     row: weighted 1.01x over even [0.89, 1.15] (3 paired rounds), at most "
           "1.00x, predicted 1.00x: inconclusive: the interval reaches past 5 % either way; "
           "keep even, or measure longer (--iters)")


class Fold(unittest.TestCase):
    def test_comment_lines_fold_under_their_text(self):
        for w in range(40, 131, 7):
            out = tt.fold_line(VERDICT, w)
            self.assertTrue(all(len(x) <= w for x in out), (w, out))
            self.assertTrue(all(x.startswith("#         ") and x[10] != " " for x in out[1:]))
            self.assertEqual(" ".join(" ".join(x.lstrip("#").split()) for x in out),
                             " ".join(VERDICT.lstrip("#").split()))  # nothing lost or cut

    def test_as_tpbal_folds_a_tool_line(self):
        """The same expectation as test_result's for the C fold."""
        line = ("tpbal: dry run: about 0.82 s in all (0.74 s if every calibration settles at "
                "once): GEMMs 0.021 s")
        self.assertEqual(tt.fold_line(line, 60),
                         ["tpbal: dry run: about 0.82 s in all (0.74 s if every",
                          "    calibration settles at once): GEMMs 0.021 s"])
        self.assertEqual(tt.fold_line("tpbal-compare: " + "x " * 40, 40)[1][:4], "    ")

    def test_what_stays_whole(self):
        row = "  tp2 row 64x256x256 even fp32 " + "+0.0% " * 30  # a table row
        self.assertEqual(tt.fold_line(row, 40), [row])
        self.assertEqual(tt.fold_line(VERDICT, 0), [VERDICT])
        word = "#   /a/very/long/path/that/does/not/fit/in/forty/columns/x y"
        self.assertEqual(tt.fold_line(word, 40)[0],
                         "#   /a/very/long/path/that/does/not/fit/in/forty/columns/x")

    def test_width_of_a_pipe(self):
        self.assertEqual(tt.width(io.StringIO(), False), 120)
        self.assertEqual(tt.width(io.StringIO(), True), 0)
        buf = io.StringIO()
        tt.say(VERDICT + "\n# short", stream=buf)
        self.assertTrue(all(len(x) <= 120 for x in buf.getvalue().splitlines()))
        self.assertIn("\n# short\n", buf.getvalue())


class Words(unittest.TestCase):
    def test_glossary_doc_is_the_tools(self):
        """doc/GLOSSARY.md is tpbal_glossary's markdown (regenerated, never edited apart),
        each word once, the report's section the same words."""
        doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "doc",
                           "GLOSSARY.md")
        with open(doc, encoding="utf-8") as fh:
            self.assertEqual(fh.read(), tg.markdown(),
                             "regenerate: python3 src/tools/tpbal_glossary.py > doc/GLOSSARY.md")
        terms = [t for t, _ in tg.TERMS]
        self.assertEqual(len(terms), len(set(terms)))
        for word in ("window", "block", "set", "round", "look", "pass", "E", "%last", "sure"):
            self.assertIn(word, terms)
        page = "".join(tg.html_part())
        self.assertIn("id='words'", page)
        self.assertEqual(page.count("<li>"), len(terms))


if __name__ == "__main__":
    unittest.main()
