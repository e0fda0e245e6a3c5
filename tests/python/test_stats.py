"""tpbal-compare's statistics: intervals of medians and the four verdicts."""
import math
import random
import unittest

import tpbal_stats as st


def noisy(rng, n, center, cv):
    return [center * math.exp(rng.gauss(0.0, cv)) for _ in range(n)]


class Stats(unittest.TestCase):
    def test_median_and_lag1(self):
        self.assertEqual(st.median([3, 1, 2]), 2)
        self.assertEqual(st.median([4, 1, 2, 3]), 2.5)
        self.assertGreater(st.lag1([1, 1, 1, 5, 5, 5, 1, 1, 1, 5, 5, 5]), 0.3)
        self.assertLess(st.lag1([1, 5] * 10), -0.9)

    def test_interval_shrinks_with_samples_and_grows_with_autocorrelation(self):
        rng = random.Random(1)
        few, many = noisy(rng, 30, 100, 0.05), noisy(rng, 600, 100, 0.05)
        self.assertGreater(st.log_halfwidth(few), st.log_halfwidth(many))
        runs = sorted(noisy(rng, 300, 100, 0.05))  # sorted: maximally autocorrelated
        self.assertGreater(st.log_halfwidth(runs, ordered=True),
                           2 * st.log_halfwidth(runs, ordered=False))
        self.assertTrue(math.isinf(st.log_halfwidth([1.0, 2.0])))

    def test_the_median_interval_covers_the_true_median(self):
        # seeded draws, so deterministic; the figures are the coverage of 95 % intervals
        rng = random.Random(5)

        def coverage(gen, draws, ordered):
            hits = 0
            for _ in range(draws):
                v = gen()
                hits += abs(math.log(st.median(v) / 100.0)) <= st.log_halfwidth(v, ordered)
            return hits / draws

        def iid():
            return noisy(rng, 101, 100, 0.05)

        def ar1(rho=0.6):
            x, out = 0.0, []
            for _ in range(200):
                x = rho * x + math.sqrt(1 - rho * rho) * rng.gauss(0.0, 1.0)
                out.append(100.0 * math.exp(0.05 * x))
            return out

        self.assertTrue(0.93 <= coverage(iid, 2000, False) <= 0.99)  # 0.973
        self.assertTrue(0.95 <= coverage(iid, 2000, True) <= 0.999)  # 0.990: batch means
        # consecutive iterations alike: the correction keeps the coverage, ignoring it not
        self.assertGreaterEqual(coverage(ar1, 1000, True), 0.93)  # 0.988
        self.assertLess(coverage(ar1, 1000, False), 0.88)  # 0.78

    def test_four_verdicts(self):
        self.assertEqual(st.decide(1.20, 0.02, 0.05), "regression")
        self.assertEqual(st.decide(0.80, 0.02, 0.05), "improved")
        self.assertEqual(st.decide(1.01, 0.02, 0.05), "ok")
        self.assertEqual(st.decide(1.06, 0.05, 0.05), "inconclusive")
        self.assertAlmostEqual(st.detectable(0.0, 0.05), 0.05)

    def test_a_run_against_itself_holds_whatever_its_noise(self):
        rng = random.Random(2)
        wild = noisy(rng, 20, 100, 0.8)
        s = st.compare_samples(wild, list(reversed(wild)), 0.05)
        self.assertEqual((s["verdict"], s["ratio"], s["half"]), ("ok", 1.0, 0.0))

    def test_a_ten_percent_slowdown_is_seen_and_noise_is_not(self):
        rng = random.Random(3)
        a = noisy(rng, 200, 100, 0.04)
        same = noisy(rng, 200, 100, 0.04)
        slow = noisy(rng, 200, 110, 0.04)
        self.assertEqual(st.compare_samples(a, same, 0.05)["verdict"], "ok")
        self.assertEqual(st.compare_samples(a, slow, 0.05)["verdict"], "regression")
        # a few wild samples: too noisy to tell, and it says what it could have seen
        s = st.compare_samples(noisy(rng, 8, 100, 0.3), noisy(rng, 8, 104, 0.3), 0.05)
        self.assertEqual(s["verdict"], "inconclusive")
        self.assertGreater(s["detectable"], 0.2)

    def test_points_and_baselines(self):
        self.assertEqual(st.compare_samples(100.0, 130.0, 0.05)["verdict"], "inconclusive")
        self.assertEqual(st.compare_samples(100.0, 100.0, 0.05)["verdict"], "ok")
        rng = random.Random(4)
        b = noisy(rng, 300, 100, 0.02)
        self.assertEqual(st.compare_samples(120.0, b, 0.05)["verdict"], "improved")
        # the spread between a baseline's runs widens the interval
        tight = st.compare_samples(noisy(rng, 300, 100, 0.02), b, 0.05)
        wide = st.compare_samples(noisy(rng, 300, 100, 0.02), b, 0.05,
                                  a_spread=st.spread_halfwidth([90, 100, 112]))
        self.assertGreater(wide["half"], tight["half"])
        self.assertEqual(st.spread_halfwidth([100]), 0.0)


if __name__ == "__main__":
    unittest.main()
