"""Every field the tools read is checked for its kind (issue 57, the fifth hostile probe): a
list where a number or a key belongs, a number far out of its range, a config given twice,
each a one-line refusal naming the field instead of a traceback further on."""
import json
import os
import tempfile
import unittest

import fixtures as fx
import tpbal_fleet as tfl
import tpbal_results as tr


class ConfigFields(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, configs, needle, ranks=None):
        d = fx.write_dir(os.path.join(self.tmp.name, "r%d" % len(os.listdir(self.tmp.name))),
                         configs, ranks=ranks)
        with self.assertRaises(tr.BadInput) as e:
            res = tr.load(d)
            if ranks is not None:
                tr.read_ranks(os.path.join(d, "ranks.csv"))
            self.fail("accepted: %s" % [c.get("id") for c in res.configs])
        self.assertIn(needle, str(e.exception))
        self.assertNotIn("\n", str(e.exception))

    def test_a_list_where_an_object_or_a_number_belongs(self):
        self.refused([fx.config(0, straggler=[1, 2])], "'straggler' is [1, 2], not an object")
        self.refused([fx.config(0, block_pos=[1])], "'block_pos' is [1], not an integer")
        self.refused([fx.config(0, disturbed=[])], "'disturbed' is [], not an object or null")

    def test_values_out_of_their_range(self):
        self.refused([fx.config(0, shards=[-5, 133])], "'shards' is [-5, 133], not a list of "
                     "sizes")
        alternating = [1e-100 if i % 2 else 1e200 for i in range(41)]
        self.refused([fx.config(0, step_samples_us=alternating)],
                     "not a list of times from 0 to 1e15 us")

    def test_a_config_id_given_twice(self):
        self.refused([fx.config(3), fx.config(3, tp=1)], "config id 3 is given twice (line 2")

    def test_a_rank_row_given_twice(self):
        head = "id,tp,rank,world_rank,host\n"
        rows = "0,2,0,0,a\n0,2,1,1,a\n"
        self.refused([fx.config(0)], "line 4 repeats config 0's rank 1 (line 3)",
                     ranks=head + rows + "0,2,1,1,a\n")

    def test_well_formed_records_still_read(self):
        d = fx.write_dir(os.path.join(self.tmp.name, "ok"),
                         [fx.config(0, straggler={"rank": 1, "last_frac": 0.5,
                                                  "lateness_us": None}, block_pos=0,
                                    shards=[128, 128], disturbed=None), fx.config(1, tp=1)])
        self.assertEqual(len(tr.load(d).configs), 2)


class FleetFields(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def fleet(self, **change):
        doc = {"schema": tfl.SCHEMA, "threshold": 0.9,
               "ranks": [{"rank": 0, "host": "a", "gflops": 10.0, "gflops_half": 0.05}],
               "nodes": [{"node": 0, "host": "a", "allreduce_busbw_gbs": 3.0,
                          "allreduce_busbw_half": 0.1}],
               "links": [{"from": 0, "to": 1, "busbw_gbs": 2.0, "busbw_half": 0.1}]}
        for part, fn in change.items():
            fn(doc[part])
        path = os.path.join(self.tmp.name, "fleet-%d.json" % len(os.listdir(self.tmp.name)))
        with open(path, "w") as fh:
            json.dump(doc, fh)
        return path

    def test_fields_of_the_wrong_kind(self):
        tfl.load(self.fleet())  # well formed
        for change, needle in (
                ({"ranks": lambda r: r[0].update(gflops_half=1000)},
                 "'ranks' whose 'gflops_half' is 1000, not a half-width"),
                ({"nodes": lambda n: n[0].update(node=[0])}, "'nodes' whose 'node' is [0]"),
                ({"links": lambda ln: ln[0].pop("from")}, "'links' whose 'from' is missing"),
                ({"nodes": lambda n: n[0].update(host=7)}, "'nodes' whose 'host' is 7")):
            with self.assertRaises(tr.BadInput) as e:
                tfl.load(self.fleet(**change))
            self.assertIn(needle, str(e.exception))


if __name__ == "__main__":
    unittest.main()
