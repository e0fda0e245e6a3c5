"""tpbal_stats: the statistics of tpbal-compare's decisions (pure, stdlib only).

A config's step time in run A and run B is compared by the ratio of their medians,
r = median(B) / median(A), with a 95 % interval. Each median's interval comes from
its order statistics (distribution-free: the median of n samples lies between the
l-th and u-th smallest with binomial probability), widened for the autocorrelation
of consecutive iterations (a slow stretch of the machine makes neighbours alike:
the effective sample size of an AR(1) series is n (1 - rho) / (1 + rho)), and at
least as wide as the batch-means interval (the spread of the medians of consecutive
batches of iterations: a machine that drifts during the run shows there), and, for a
baseline of several runs, for the spread between the runs' medians. The two
half-widths add in log space.

Against a tolerance t (5 % by default) the decision is
  regression    the whole interval is slower than 1 + t
  improved      the whole interval is faster than 1 / (1 + t)
  ok            the whole interval lies within [1 / (1 + t), 1 + t]
  inconclusive  otherwise: these samples cannot tell at this tolerance
and the smallest change the comparison could have detected is (1 + t) e^h - 1, h
the interval's half-width in log space.

The same method is tpbal's own (src/base/interval.c), for the speed-up of a policy over
even in a run's answer; tests/python/test_golden.py holds the two to the same numbers.
Where the two configs were measured side by side in interleaved blocks (--interleave),
tpbal uses the paired interval instead (paired): the median interval of the paired
iterations' ratios, which a change of the machine's speed does not reach.
"""
import math

Z95 = 1.959964


def median(v):
    s = sorted(v)
    n = len(s)
    if not n:
        return float("nan")
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def lag1(v):
    """Lag-1 autocorrelation of a series (0 for fewer than 3 samples or no spread)."""
    n = len(v)
    if n < 3:
        return 0.0
    m = sum(v) / n
    den = sum((x - m) ** 2 for x in v)
    if den <= 0.0:
        return 0.0
    return sum((v[i] - m) * (v[i + 1] - m) for i in range(n - 1)) / den


def effective_n(v, ordered):
    """Samples worth of independent information: n, less for a positively
    autocorrelated series in iteration order (quantiles are not a series: n)."""
    n = len(v)
    if not ordered:
        return float(n)
    rho = min(max(lag1(v), 0.0), 0.95)
    return max(3.0, min(float(n), n * (1.0 - rho) / (1.0 + rho)))


def log_halfwidth(v, ordered=True):
    """Half-width in log space of a 95 % interval of the median of v (inf for < 3
    samples). From the order statistics n/2 -+ z sqrt(n)/2 of the effective n."""
    s = sorted(x for x in v if x > 0)
    n = len(s)
    if n < 3:
        return math.inf
    ne = effective_n(v, ordered)
    # the interval's ranks at the effective size, mapped back onto the n samples
    d = Z95 * math.sqrt(ne) / 2.0 * (n / ne)
    lo = s[max(0, int(math.floor(n / 2.0 - d)))]
    hi = s[min(n - 1, int(math.ceil(n / 2.0 + d)) - 1)]
    m = median(s)
    h = max(math.log(m / lo), math.log(hi / m))
    return max(h, batch_halfwidth(v)) if ordered else h


T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262}


def t975(df):
    """t(0.975) for df degrees of freedom: the table to 9, a Cornish-Fisher expansion above
    (as tpb_interval_t975)."""
    if df < 1:
        return math.inf
    if df <= 9:
        return T975[df]
    z = Z95
    return z + (z ** 3 + z) / (4.0 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96.0 * df * df)


def batch_halfwidth(v, batches=5):
    """Batch means: the t interval of the log median from the medians of `batches`
    consecutive batches of the series (0 for fewer than 4 samples a batch)."""
    n = len(v)
    if n < 4 * batches:
        return 0.0
    meds = [median(v[b * n // batches:(b + 1) * n // batches]) for b in range(batches)]
    if min(meds) <= 0:
        return 0.0
    logs = [math.log(x) for x in meds]
    mean = sum(logs) / batches
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (batches - 1))
    return t975(batches - 1) * sd / math.sqrt(batches)


def spread_halfwidth(medians):
    """Half-width in log space from the spread of several runs' medians (0 for one run):
    the t prediction interval of one more run around their log mean, since the run it
    is compared with scatters from run to run as theirs did."""
    ms = [m for m in medians if m > 0]
    k = len(ms)
    if k < 2:
        return 0.0
    logs = [math.log(m) for m in ms]
    mean = sum(logs) / k
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (k - 1))
    tq = t975(k - 1)
    return tq * sd * math.sqrt(1.0 + 1.0 / k)


def compare_runs(ma, mb, tol, floor=0.0):
    """Two sides of several runs each (--repeat passes, or baselines): their runs' medians
    ma and mb, a run as the unit: the ratio of their geometric means with a Welch t
    interval on the logs (never narrower than floor, what the iterations alone say; none
    at all for the same runs on both sides). None when a side has fewer than 2 medians > 0."""
    la = [math.log(x) for x in ma if x > 0]
    lb = [math.log(x) for x in mb if x > 0]
    if len(la) < 2 or len(lb) < 2:
        return None
    def mv(v):
        m = sum(v) / len(v)
        return m, sum((x - m) ** 2 for x in v) / (len(v) - 1)
    (mua, va), (mub, vb) = mv(la), mv(lb)
    sa, sb = va / len(la), vb / len(lb)
    se2 = sa + sb
    if se2 > 0:  # Welch-Satterthwaite degrees of freedom
        df = se2 ** 2 / ((sa ** 2 / (len(la) - 1) if sa else 0) + (sb ** 2 / (len(lb) - 1) if sb else 0))
    else:
        df = len(la) + len(lb) - 2
    h = max(t975(max(1, int(df))) * math.sqrt(se2), floor)
    if sorted(la) == sorted(lb):
        h = 0.0  # the same runs: a run against itself, whatever their spread
    r = math.exp(mub - mua)
    return {"ratio": r, "lo": r * math.exp(-h), "hi": r * math.exp(h), "half": h,
            "verdict": decide(r, h, tol), "detectable": detectable(h, tol),
            "runs": [len(la), len(lb)]}


def paired(a, b, rounds):
    """Two series measured in interleaved blocks (round j: iterations [j n / rounds,
    (j + 1) n / rounds) of each, side by side, so that a[i] and b[i] ran one block apart):
    median(b) / median(a) with the half-width of the median of the paired ratios b_i / a_i
    (log_halfwidth of that series), as tpb_interval_paired. Identical samples: 0; fewer
    than 3 rounds or a time that is not > 0: inf."""
    n = len(a)
    ma, mb = median(a), median(b)
    if not (ma > 0.0) or not (mb > 0.0) or len(b) != n:
        return None
    h = 0.0
    if sorted(a) != sorted(b):
        h = math.inf
        if 3 <= rounds <= n and all(x > 0 for x in a) and all(y > 0 for y in b):
            h = log_halfwidth([y / x for x, y in zip(a, b)])
    r = mb / ma
    return {"ratio": r, "lo": r * math.exp(-h) if math.isfinite(h) else 0.0,
            "hi": r * math.exp(h) if math.isfinite(h) else math.inf, "half": h}


def decide(ratio, half, tol):
    """The verdict of a ratio B/A of a lower-is-better time, with half-width `half` in
    log space, at tolerance tol (a fraction)."""
    if not (ratio > 0.0) or math.isnan(half):
        return "inconclusive"
    d, t = math.log(ratio), math.log1p(tol)
    if d - half > t:
        return "regression"
    if d + half < -t:
        return "improved"
    if d - half >= -t and d + half <= t:
        return "ok"
    return "inconclusive"


def detectable(half, tol):
    """The smallest slowdown these samples would call a regression, as a fraction."""
    return math.inf if math.isinf(half) else math.expm1(math.log1p(tol) + half)


def compare_samples(a, b, tol, a_ordered=True, b_ordered=True, a_spread=0.0, b_spread=0.0):
    """Everything about one config's step: ratio of medians, its 95 % interval, the
    verdict and the smallest detectable change. a or b may be a single number (a
    reference without samples: no interval on that side). Identical samples are no
    change at all, whatever their noise (a run compared with itself holds)."""
    one_a, one_b = not isinstance(a, (list, tuple)), not isinstance(b, (list, tuple))
    ma = a if one_a else median(a)
    mb = b if one_b else median(b)
    if not (ma > 0.0) or not (mb > 0.0):
        return None
    if one_a and one_b:  # two single numbers say nothing of their noise
        h = 0.0 if ma == mb else math.inf
    elif not one_a and not one_b and sorted(a) == sorted(b):
        h = 0.0  # the same samples: a run against itself, whatever the spreads
    else:
        ha = 0.0 if one_a else log_halfwidth(a, a_ordered)
        hb = 0.0 if one_b else log_halfwidth(b, b_ordered)
        h = math.sqrt(ha * ha + hb * hb + a_spread ** 2 + b_spread ** 2)
    r = mb / ma
    return {"ratio": r, "lo": r * math.exp(-h) if math.isfinite(h) else 0.0,
            "hi": r * math.exp(h) if math.isfinite(h) else math.inf, "half": h,
            "verdict": decide(r, h, tol), "detectable": detectable(h, tol)}
