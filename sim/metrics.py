"""Statistics that cost O(1) per observation: tallies with percentiles, wait events, levels.

Tallies (a response time per transaction) and time-weighted levels (a queue length, busy
servers) are kept apart, as salabim and Ciw do. Everything has `reset()` so that the
warm-up can be deleted explicitly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# Log-spaced histogram for percentiles: 2% relative bins from 100 ns to ~28 hours.
_H_MIN, _H_RATIO = 1e-7, 1.02
_H_BINS = int(math.log(1e5 / _H_MIN) / math.log(_H_RATIO)) + 2
_LOG_RATIO = math.log(_H_RATIO)
_log = math.log


class Mean:
    """Count, mean and largest of observed values, with no histogram: for figures observed once per
    I/O whose percentiles nothing reads (a Tally's histogram bin cost ~5% of a run with many I/Os)."""

    __slots__ = ("n", "total", "max")

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.n = 0
        self.total = self.max = 0.0

    def add(self, x: float) -> None:
        self.n += 1
        self.total += x
        if x > self.max:
            self.max = x

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else float("nan")


class Tally:
    """Count, mean, variance and percentiles (to 2%) of observed values (seconds)."""

    __slots__ = ("n", "total", "total_sq", "hist", "max", "min")

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        self.n = 0
        self.total = self.total_sq = 0.0
        self.max = 0.0
        self.min = math.inf
        self.hist = [0] * _H_BINS  # a list: numpy item updates cost more than the whole add

    def add(self, x: float) -> None:
        self.n += 1
        self.total += x
        self.total_sq += x * x
        if x > self.max:
            self.max = x
        if x < self.min:
            self.min = x
        if x <= _H_MIN:
            self.hist[0] += 1
        else:
            i = int(_log(x / _H_MIN) / _LOG_RATIO) + 1
            self.hist[i if i < _H_BINS else _H_BINS - 1] += 1

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else float("nan")

    def percentile(self, q: float) -> float:
        if not self.n:
            return float("nan")
        target = q / 100.0 * self.n
        cum = np.cumsum(np.asarray(self.hist, dtype=np.int64))
        i = min(int(np.searchsorted(cum, target, side="left")), _H_BINS - 1)
        # within its 2% bin, spread the bin's values evenly between its edges, cut to the values seen:
        # a nearly constant time then has percentiles about its mean, not a bin middle below it
        lo = max(_H_MIN * _H_RATIO ** (i - 1) if i else 0.0, self.min)
        hi = min(_H_MIN * _H_RATIO ** i, self.max)   # (the last bin also holds what lies past it: taken as 2% too)
        below = int(cum[i - 1]) if i else 0
        share = (target - below - 0.5) / self.hist[i] if self.hist[i] else 0.5   # mid-ranks: 1 value, the middle
        return lo + min(max(share, 0.0), 1.0) * max(hi - lo, 0.0)


class Level:
    """A time-weighted level: call set(value) whenever it changes."""

    __slots__ = ("env", "value", "area", "t_last", "since")

    def __init__(self, env, value: float = 0.0):
        self.env, self.value = env, value
        self.area = 0.0
        self.t_last = self.since = env.now

    def set(self, value: float) -> None:
        now = self.env._now
        self.area += (now - self.t_last) * self.value
        self.t_last, self.value = now, value

    def add(self, delta: float) -> None:
        now = self.env._now   # set(), inlined
        self.area += (now - self.t_last) * self.value
        self.t_last, self.value = now, self.value + delta

    def area_now(self) -> float:
        """The level's integral since the last reset, read-only."""
        return self.area + (self.env.now - self.t_last) * self.value

    def mean(self) -> float:
        self.set(self.value)
        span = self.env.now - self.since
        return self.area / span if span > 0 else self.value

    def reset(self) -> None:
        self.set(self.value)
        self.area = 0.0
        self.since = self.env.now


@dataclass
class WaitStat:
    waits: int = 0
    time: float = 0.0


class WaitEvents:
    """AWR's wait-event view: for each named event, how many waits and how much time."""

    def __init__(self):
        self.events: dict[str, WaitStat] = {}

    def add(self, name: str, seconds: float) -> None:
        st = self.events.get(name)
        if st is None:
            st = self.events[name] = WaitStat()
        st.waits += 1
        st.time += seconds

    def reset(self) -> None:
        self.events.clear()


class BatchMeans:
    """A steady run's throughput in batches, for its confidence interval.

    Batch means are treated as independent, which they are only when a batch is long against the
    system's memory: on a disk-bound TPC-C run (Stock-Level ~4 s) 1-s batch means have a lag-1
    autocorrelation of +0.45, and 120-s runs' intervals covered the long-run mean 89 times in 100 seeds,
    not 95. So adjacent batches are merged in pairs (the batch length doubles, as in Fishman's LBATCH)
    while the lag-1 autocorrelation of the means exceeds LAG1_LIMIT, from LAG1_FROM batches: then 97 in
    100 (88 at 30 s, against 80), and an AR(1) series of lag-1 0.5 is covered 92% of the time, not 75%
    (tests/test_metrics.py). A limit of 0.1 merges uncorrelated batches now and then (a quarter of the
    time at 20 batches), which only widens their interval; at 0.2 the AR(1) series was covered 90%.
    Pairs are also merged when MAX_KEPT accumulate, so that a long run of short batches costs
    O(MAX_KEPT) a batch, not O(batches) (a sum over every batch had made a 1-ms batch's check take
    10 ms at 360,000 batches)."""

    MAX_KEPT = 128
    LAG1_LIMIT = 0.1
    LAG1_FROM = 20

    def __init__(self, keep: int = MAX_KEPT):
        """keep: batches kept before pairs merge, at least MAX_KEPT (a run's run.min_batches x 2: merged, as
        many as it needs)."""
        self.max_kept = max(self.MAX_KEPT, keep)
        self.kept: list[float] = []    # means of batches of `per` base batches each
        self.per = 1
        self.count = 0                 # base batches seen
        self.total = 0.0
        self._part, self._part_n = 0.0, 0   # base batches since the last kept one

    def add(self, value: float) -> None:
        """One base batch's mean."""
        self.count += 1
        self.total += value
        self._part += value
        self._part_n += 1
        if self._part_n == self.per:
            self.kept.append(self._part / self.per)
            self._part, self._part_n = 0.0, 0
            if len(self.kept) >= self.max_kept:
                self.kept, self.per = self._merged(self.kept), self.per * 2

    def _merged(self, means: list[float]) -> list[float]:
        """Pairs merged; an odd last batch goes back to the part not yet kept."""
        if len(means) % 2:
            self._part += means[-1] * self.per
            self._part_n += self.per
        return [(means[i] + means[i + 1]) / 2.0 for i in range(0, len(means) - 1, 2)]

    @property
    def mean(self) -> float:
        """The mean over every base batch (a batch's mean weighs the same whatever the grouping)."""
        return self.total / self.count if self.count else float("nan")

    def batches(self) -> tuple[list[float], int]:
        """The batch means the interval is computed from, pairs merged while they are autocorrelated, and the
        base batches in each."""
        means, per = self.kept, self.per
        while len(means) >= self.LAG1_FROM and lag1(means) > self.LAG1_LIMIT:
            means, per = [(means[i] + means[i + 1]) / 2.0 for i in range(0, len(means) - 1, 2)], per * 2
        return means, per


class RatioBatchMeans:
    """The interval of a ratio of two totals over a run, such as a mean response time (seconds of response over
    transactions completed), from batches: each batch's two totals are kept as BatchMeans keep one figure, and
    the interval is the ratio estimator's, from the residuals z = s - R n of the kept batches (R the run's
    ratio), merged in pairs while they are autocorrelated (BatchMeans.batches). A batch's mean response would
    weigh a batch of 3 transactions as one of 300, and a batch with none has none.

    The TP monitor's queue of the 65,000-user rx5670 wanders over ~20 s with the terminals still keying or
    thinking (+-250 of ~64,000): its New-Order response times from a short window were 106-290 ms over four
    seeds, where its tpmC moved 3%. This is the interval that shows it."""

    def __init__(self, keep: int = BatchMeans.MAX_KEPT):
        self.num, self.den = BatchMeans(keep), BatchMeans(keep)   # merged together: both see every batch

    def add(self, numerator: float, denominator: float) -> None:
        """One base batch's totals."""
        self.num.add(numerator)
        self.den.add(denominator)

    @property
    def ratio(self) -> float:
        return self.num.total / self.den.total if self.den.total else float("nan")

    # Merged batches too few to merge again whose lag-1 autocorrelation is still above this have no interval (2%
    # of independent sets of 10 batches are refused: the estimate's SD is ~1/sqrt(10)).
    UNRESOLVED = 0.5

    def halfwidth(self, confidence: float = 0.95) -> float:
        """Half-width of the ratio's confidence interval (delta method: the residuals' Student t interval over
        the mean denominator); infinite (no interval) from fewer than LAG1_FROM batches, where whether they are
        autocorrelated cannot be judged, with no denominator, or with batches still plainly autocorrelated when
        too few remain to merge (a run too short for the figure's memory). The 65,000-user run's New-Order
        response from fourteen and ten 2-s batches had been 329 +- 31 and 79 +- 10 ms under two seeds: its
        queue's memory is ~15 s."""
        s, n = np.asarray(self.num.kept), np.asarray(self.den.kept)
        if len(n) < BatchMeans.LAG1_FROM or not n.sum():
            return float("inf")
        z = s - self.ratio * n
        # residuals at the totals' rounding are none: a constant response (Stock-Level with every block cached)
        # left ~1e-13 s of noise whose lag-1 autocorrelation, anything in -1..1, could refuse it an interval
        z = list(np.where(np.abs(z) <= 1e-9 * np.abs(s), 0.0, z))
        while len(z) >= BatchMeans.LAG1_FROM and lag1(z) > BatchMeans.LAG1_LIMIT:
            z = [(z[i] + z[i + 1]) / 2.0 for i in range(0, len(z) - 1, 2)]   # (a pair's mean residual over
            n = (n[0:len(n) - 1:2] + n[1::2]) / 2.0                          # its mean denominator: the same)
        if lag1(z) > self.UNRESOLVED:
            return float("inf")
        return batch_means_halfwidth(z, confidence) / float(np.mean(n))


def lag1(values: list[float]) -> float:
    """Lag-1 autocorrelation of a series (0 for a constant one)."""
    a = np.asarray(values, dtype=float)
    d = a - a.mean()
    v = float(d @ d)
    return float(d[:-1] @ d[1:]) / v if v > 0.0 else 0.0


def batch_means_halfwidth(batches: list[float], confidence: float = 0.95) -> float:
    """Half-width of the confidence interval of the mean of batch means (Student t)."""
    n = len(batches)
    if n < 2:
        return float("inf")
    # Student t quantile: scipy.stats.t.ppf(q, df) (loc 0, scale 1) is stdtrit(df, q); importing
    # scipy.stats costs ~0.2 s of CPU per process, as much as a short run.
    from scipy.special import stdtrit

    arr = np.asarray(batches, dtype=float)
    return float(stdtrit(n - 1, 0.5 + confidence / 2) * arr.std(ddof=1) / math.sqrt(n))
