"""tpbal_schema: the tools' keys come from what tpbal prints (tpbal --print-schema; the file
is held to it by tests/schema.sh), and a new variant field reaches every key and label."""
import unittest
from unittest import mock

import tpbal_results as tr
import tpbal_schema as ts


class Schema(unittest.TestCase):
    def test_identity_is_the_schemas(self):
        self.assertEqual(tr.KEY_FIELDS, ts.IDENTITY)
        self.assertEqual(tr.KEY_DEFAULTS, ts.IDENTITY_DEFAULTS)
        self.assertEqual(tr.KEY_DEFAULTS["sequence_parallel"], "off")
        self.assertNotIn("shape", tr.KEY_FIELDS)  # a layer renamed still compares
        self.assertEqual(ts.VARIANT, ("sequence_parallel",))

    def test_groups(self):
        self.assertEqual(ts.fields("layer"),
                         ("shape", "m", "n", "k", "split", "sequence_parallel", "comm_only"))
        self.assertEqual(ts.fields("choice"), ("split", "sequence_parallel", "policy"))
        self.assertEqual(ts.fields("block"), ("tp", "placement", "sequence_parallel", "policy"))

    def test_variant_of_an_older_record(self):
        self.assertEqual(ts.variant({"split": "row"}), ("off",))
        self.assertEqual(ts.variant({"sequence_parallel": "on"}), ("on",))
        self.assertEqual(ts.variant_dict({}), {"sequence_parallel": "off"})
        self.assertEqual(ts.split_label({"split": "row", "sequence_parallel": "on"}), "row+sp")
        self.assertEqual(ts.split_label({"split": "col"}), "col")

    def test_a_new_variant_reaches_keys_and_labels(self):
        with mock.patch.object(ts, "VARIANT", ("sequence_parallel", "tag")), \
                mock.patch.dict(ts._DEFAULT, {"tag": "a"}):
            self.assertEqual(ts.variant({"split": "row"}), ("off", "a"))
            self.assertEqual(ts.variant({"tag": "b"}), ("off", "b"))
            self.assertEqual(ts.split_label({"split": "col", "tag": "b"}), "col+tag=b")
            self.assertEqual(ts.split_label({"split": "col", "tag": "a"}), "col")
            self.assertEqual(ts.variant_off(), {"sequence_parallel": "off", "tag": "a"})


if __name__ == "__main__":
    unittest.main()
