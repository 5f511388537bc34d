"""The statistics collectors against direct computations: a tally's moments and percentiles
against numpy on the same sample (2% log bins: within 1% of the inverted-CDF percentile), a
time-weighted level against its area computed by hand, and the batch-means half-width against
scipy's Student t."""

from __future__ import annotations

import math

import numpy as np
import pytest
import simpy
from scipy import stats

from sim.metrics import BatchMeans, Level, Mean, RatioBatchMeans, Tally, WaitEvents, batch_means_halfwidth, lag1


def test_tally_moments_and_max_match_numpy():
    x = np.random.default_rng(1).lognormal(-5.0, 1.0, 5_000)
    t = Tally()
    for v in x:
        t.add(float(v))
    assert t.n == 5_000
    assert t.total == pytest.approx(x.sum(), rel=1e-12)
    assert t.mean == pytest.approx(x.mean(), rel=1e-12)
    assert t.total_sq == pytest.approx((x * x).sum(), rel=1e-12)
    assert t.max == x.max()
    t.reset()
    assert t.n == 0 and t.total == 0.0 and t.max == 0.0 and math.isnan(t.mean)
    assert math.isnan(t.percentile(50)) and sum(t.hist) == 0


@pytest.mark.parametrize("q", [1, 10, 50, 90, 95, 99, 99.9])
def test_tally_percentile_is_the_inverted_cdf_to_one_percent(q):
    """Bins are 2% wide and the percentile is the bin's geometric middle: within 1% of the exact
    sample percentile (the first value whose cumulative count reaches q% of n)."""
    x = np.random.default_rng(2).lognormal(-4.0, 1.5, 20_000)
    t = Tally()
    for v in x:
        t.add(float(v))
    exact = np.percentile(x, q, method="inverted_cdf")
    assert t.percentile(q) == pytest.approx(exact, rel=0.0101)


def test_tally_percentile_never_exceeds_the_max_and_handles_the_ends():
    t = Tally()
    for _ in range(10):
        t.add(0.005)
    assert 0.005 / 1.02**0.5 <= t.percentile(50) <= 0.005
    assert t.percentile(100) <= 0.005
    tiny = Tally()
    tiny.add(0.0)
    tiny.add(1e-9)
    assert tiny.hist[0] == 2 and 0.0 <= tiny.percentile(50) <= 1e-9      # within the values seen
    # a nearly constant time (one 2% bin): its percentiles stay among its values and in order about
    # the mean, not at the bin's middle below it (a stock_level p99 had printed under its mean)
    flat = Tally()
    for v in np.linspace(0.06580, 0.06600, 501):
        flat.add(float(v))
    assert flat.min <= flat.percentile(50) <= flat.mean <= flat.percentile(90) <= flat.percentile(99) <= flat.max
    assert flat.percentile(50) == pytest.approx(flat.mean, rel=1e-3)
    huge = Tally()
    huge.add(1e9)                          # past the last bin (~28 h): counted in it, not lost
    assert huge.hist[-1] == 1 and huge.percentile(50) <= 1e9
    edge = Tally()                         # values stepping 0.1% across the top bins: none lost
    for k in range(2_400):
        edge.add(5e4 * 1.001**k)
    assert sum(edge.hist) == edge.n == 2_400
    top = Tally()                          # the documented range reaches ~28 h: 27.8 h is still to 1%
    for _ in range(3):
        top.add(100_000.0)
    top.add(1e6)
    assert top.percentile(50) == pytest.approx(100_000.0, rel=0.0201)   # within its 2% bin
    two = Tally()
    two.add(0.001)
    two.add(0.1)
    assert two.percentile(50) == pytest.approx(0.001, rel=0.0201)   # half the mass reached at 1 ms (its bin)
    assert two.percentile(51) == pytest.approx(0.1, rel=0.0201)


def test_level_is_the_area_under_the_curve_over_the_span():
    env = simpy.Environment()
    lv = Level(env, 2.0)

    def script():
        yield env.timeout(1.0)
        lv.set(5.0)            # 2 over [0, 1]
        yield env.timeout(2.0)
        lv.add(-4.0)           # 5 over [1, 3], then 1
        yield env.timeout(1.0)
    env.process(script())
    env.run()
    assert lv.value == 1.0
    assert lv.mean() == pytest.approx((2 * 1 + 5 * 2 + 1 * 1) / 4.0)
    env.run(until=5.0)
    lv.reset()                             # the 1 held over [4, 5] is warm-up: dropped
    assert lv.mean() == 1.0                # zero span: the current value
    env.run(until=6.0)
    lv.set(3.0)
    env.run(until=7.0)
    assert lv.mean() == pytest.approx((1 * 1 + 3 * 1) / 2.0)   # since the reset at 5


def test_a_level_never_set_is_zero_and_a_short_span_is_averaged_too():
    env = simpy.Environment()
    lv = Level(env)                       # e.g. the busy level of a drive no I/O ever reached
    env.run(until=0.25)
    lv.set(4.0)
    env.run(until=0.5)
    assert lv.mean() == pytest.approx((0 * 0.25 + 4 * 0.25) / 0.5)
    idle = Level(env)
    env.run(until=3.0)
    assert idle.mean() == 0.0 and idle.value == 0.0


def test_wait_events_count_and_sum_per_name():
    w = WaitEvents()
    for name, s in (("db file sequential read", 0.01), ("log file sync", 0.002), ("db file sequential read", 0.03)):
        w.add(name, s)
    seq = w.events["db file sequential read"]
    assert (seq.waits, seq.time) == (2, pytest.approx(0.04))
    assert (w.events["log file sync"].waits, w.events["log file sync"].time) == (1, 0.002)
    w.reset()
    assert w.events == {}


@pytest.mark.parametrize("n, conf", [(2, 0.95), (5, 0.95), (20, 0.9), (30, 0.99)])
def test_batch_means_halfwidth_is_student_t_times_the_standard_error(n, conf):
    b = np.random.default_rng(n).normal(100.0, 7.0, n)
    expected = stats.t.ppf(0.5 + conf / 2, n - 1) * np.std(b, ddof=1) / math.sqrt(n)
    assert batch_means_halfwidth(list(b), conf) == pytest.approx(expected, rel=1e-9)


def test_batch_means_halfwidth_needs_two_batches_and_is_zero_for_equal_ones():
    assert batch_means_halfwidth([]) == math.inf
    assert batch_means_halfwidth([3.0]) == math.inf
    assert batch_means_halfwidth([4.0, 4.0, 4.0]) == 0.0
    # n = 2, batches 0 and 2: std 1.414, t(0.975, 1) = 12.706: 12.706 * 1.414 / 1.414
    assert batch_means_halfwidth([0.0, 2.0]) == pytest.approx(12.7062047, rel=1e-6)


def test_a_mean_counts_totals_and_keeps_the_largest_like_a_tally_without_its_histogram():
    x = np.random.default_rng(5).exponential(0.01, 5_000)
    m, t = Mean(), Tally()
    for v in x:
        m.add(float(v))
        t.add(float(v))
    assert (m.n, m.total, m.max) == (t.n, t.total, t.max) and m.mean == t.mean
    m.reset()
    assert (m.n, m.total, m.max) == (0, 0.0, 0.0) and math.isnan(m.mean)


# --------------------------------------------------------------------------- batch means

def _ar1(rng, n, phi, mean=100.0):
    """n values of a stationary AR(1) series with lag-1 autocorrelation phi and unit innovations."""
    x = np.empty(n)
    x[0] = rng.normal(0.0, 1.0 / math.sqrt(1.0 - phi * phi))
    for i in range(1, n):
        x[i] = phi * x[i - 1] + rng.normal()
    return mean + x


def _coverage(phi, n, merge, seeds=400):
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(seeds):
        b = BatchMeans()
        for v in _ar1(rng, n, phi):
            b.add(float(v))
        means = b.batches()[0] if merge else b.kept
        hits += abs(b.mean - 100.0) <= batch_means_halfwidth(means)
    return hits / seeds


def test_batch_means_merged_while_autocorrelated_cover_the_mean_as_claimed():
    """An AR(1) series with lag-1 autocorrelation 0.5 (a disk-bound run's 1-s batches had 0.45): its 120 batch
    means taken as independent give an interval that covers the true mean 75% of the time (the variance of the
    mean is ~(1 + phi) / (1 - phi) = 3x what they assume); merged in pairs while autocorrelated, 92% (its
    geometric tail leaves some correlation in pairs; 400 seeds, binomial SD 1.1-1.3 points). An uncorrelated
    series keeps its 95%."""
    assert _coverage(0.5, 120, merge=False) < 0.8
    assert _coverage(0.5, 120, merge=True) >= 0.9
    assert abs(_coverage(0.0, 120, merge=True) - 0.95) <= 0.025


def _ratio_coverage(phi, batches=120, seeds=400):
    """Response times whose batch mean wanders as an AR(1) about 0.2 s (a TP monitor's queue), Poisson(20)
    transactions a batch: how often the ratio's interval covers 0.2 s."""
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(seeds):
        r = RatioBatchMeans()
        for level in _ar1(rng, batches, phi, mean=0.0):
            n = int(rng.poisson(20))
            r.add(float(rng.gamma(n, 0.2 * math.exp(0.3 * level))) if n else 0.0, n)
        hits += abs(r.ratio - 0.2 * math.exp(0.045)) <= r.halfwidth()   # (E[exp(0.3 x)] for x of variance 1)
    return hits / seeds


def test_a_mean_response_time_from_batches_is_covered_as_claimed():
    """The interval of a mean response time (seconds over transactions, batch by batch): 93.3% for independent
    batches (400 seeds, binomial SD 1.2 points), and 90.5% when the batches' level is autocorrelated 0.5 (merged
    in pairs as BatchMeans; taken as independent, such batches cover ~75%)."""
    assert abs(_ratio_coverage(0.0) - 0.95) <= 0.03
    assert 0.88 <= _ratio_coverage(0.5) <= 0.97   # merged pairs' interval neither too narrow nor needlessly wide


def test_a_mean_response_weighs_transactions_not_batches():
    """Batches of 1 transaction of 1 s and of 99 of 0.1 s: the mean is 10.9 / 100 s, not the batches' 0.55 s; a
    batch with none counts toward the interval, which needs LAG1_FROM batches (whether they are autocorrelated
    cannot be judged from fewer)."""
    r = RatioBatchMeans()
    batches = [(1.0, 1), (9.9, 99), (0.0, 0)] * 7
    for total, n in batches[:BatchMeans.LAG1_FROM - 1]:
        r.add(total, n)
    assert r.halfwidth() == math.inf
    for total, n in batches[BatchMeans.LAG1_FROM - 1:]:
        r.add(total, n)
    assert r.ratio == pytest.approx(0.109)
    s, n = np.array([b[0] for b in batches]), np.array([float(b[1]) for b in batches])
    z = s - 0.109 * n   # the delta method's residuals, over the mean count (a period of 3: lag-1 below 0.1)
    assert lag1(list(z)) < BatchMeans.LAG1_LIMIT
    assert r.halfwidth() == pytest.approx(batch_means_halfwidth(list(z)) / n.mean())
    assert RatioBatchMeans().halfwidth() == math.inf


def test_a_mean_response_has_an_interval_from_lag1_from_batches_and_none_without_transactions():
    """Exactly LAG1_FROM uncorrelated batches are enough for an interval (fewer are not: see above); batches in
    which no transaction of the type completed give no mean and no interval, not a NaN or a crash."""
    r = RatioBatchMeans()
    for total, n in ([(1.0, 1), (9.9, 99), (0.0, 0)] * 7)[:BatchMeans.LAG1_FROM]:
        r.add(total, n)
    assert 0.0 < r.halfwidth() < math.inf
    none = RatioBatchMeans()
    for _ in range(2 * BatchMeans.LAG1_FROM):
        none.add(0.0, 0)
    assert math.isnan(none.ratio) and none.halfwidth() == math.inf


def test_an_odd_last_batch_left_out_of_merged_pairs_does_not_narrow_the_interval():
    """Ten levels two batches each (lag-1 0.22: merged once into ten pairs) and a 21st batch of 200
    transactions, which no pair takes: the interval is the pairs' residuals over the pairs' mean count (20),
    not over a mean count the unpaired batch raises to 29 (an interval 30% too narrow)."""
    r = RatioBatchMeans()
    for level in (0.20, 0.26, 0.17, 0.23, 0.21, 0.15, 0.24, 0.19, 0.25, 0.18):
        for _ in range(2):
            r.add(level * 20, 20)
    r.add(0.2 * 200, 200)
    z = [20 * (level - r.ratio) for level in (0.20, 0.26, 0.17, 0.23, 0.21, 0.15, 0.24, 0.19, 0.25, 0.18)]
    assert lag1(z) < RatioBatchMeans.UNRESOLVED
    assert r.halfwidth() == pytest.approx(batch_means_halfwidth(z) / 20)


def test_a_mean_response_whose_batches_stay_correlated_has_no_interval():
    """30 batches of a level that drifts (lag-1 ~0.95): merged once to 15, still correlated, too few to merge
    again: no interval, rather than one 3x too narrow."""
    r = RatioBatchMeans()
    for i in range(30):
        r.add(0.2 * 20 * (1.0 + 0.02 * i), 20)
    assert r.halfwidth() == math.inf


def test_a_constant_response_has_an_interval_of_zero_whatever_its_rounding():
    """Every Stock-Level took 44.79 ms (every block cached, a fixed path): its batches' totals, sums of
    differences of clock readings, differ from 44.79 ms x n by ~1e-13 s, a residual whose lag-1
    autocorrelation is anything; it had read as still correlated and the report showed '—' for a mean known
    exactly. Rounding-sized residuals are none: the interval is 0."""
    r = RatioBatchMeans()
    for i in range(20):   # the rounding drifts one way, then the other: lag-1 0.9 if it counted
        n = 15 + i % 4
        r.add(0.04479 * n + (1e-13 if i < 10 else -1e-13), n)
    assert r.halfwidth() == 0.0


def test_batch_means_keep_the_mean_and_a_bounded_number_of_batches():
    """10,001 batches: at most MAX_KEPT kept (pairs merge as they accumulate, so each costs O(MAX_KEPT)), the
    mean is over every batch, and each kept batch is the mean of its `per` consecutive ones."""
    b = BatchMeans()
    values = [float(i % 7) for i in range(10_001)]
    for v in values:
        b.add(v)
    assert len(b.kept) < BatchMeans.MAX_KEPT and b.count == 10_001
    assert b.mean == pytest.approx(sum(values) / len(values))
    assert b.per == 128 and len(b.kept) == 10_001 // 128
    assert b.kept[3] == pytest.approx(sum(values[3 * 128:4 * 128]) / 128)
    means, per = b.batches()   # a series of period 7 averaged over 128: no autocorrelation left to merge
    assert per == 128 and means == b.kept


def test_lag1_of_a_series():
    assert lag1([1.0, 2.0, 1.0, 2.0, 1.0, 2.0]) == pytest.approx(-5 / 6)   # 5 products of -1/4 over 6 of 1/4
    assert lag1([3.0] * 5) == 0.0


def test_a_minimum_above_the_batches_kept_can_be_met():
    """Pairs merge when the batches kept reach max(MAX_KEPT, keep): a run's keep is twice its run.min_batches, so
    150 batches are reached (with 128 kept at most, a minimum of 128 or more never was: the run went to its
    cap)."""
    from sim.run import precise_enough
    b = BatchMeans(keep=2 * 150)
    stopped = None
    for i in range(5_000):
        b.add(640.0 + i % 2)
        if precise_enough(b, 150, 0.01):
            stopped = i + 1
            break
    assert stopped == 150 and len(b.batches()[0]) == 150
