"""Shape claims: what a source says about the form of its table, checked on the published
figures and on the simulated ones.

A table is more than its cells: "Quick I/O runs within a few per cent of raw", "the gain of
Cached Quick I/O shrinks as the SGA grows", "UFS buffered is flat". An experiment states such a
claim over series of its rows (a row label with "{}" where the series' point goes, e.g.
"raw {}" over 100MB..2.5GB; without points, each series is the one row it names) and one of
five kinds:

- rising / falling: every step up (down) along the points, of one series or of the ratio of two;
- flat: every point within `tolerance` of the series' mean;
- close: the first series within `tolerance` of the second at every point (|a/b - 1|);
- above: the first series above every other at every point.

A claim must hold on the published figures (a test checks it: a claim is what the table shows,
not a wish); the scoreboard says whether it holds on the simulated ones. A claim may also name
withheld rows where the source's text says what their figures do ("a bigger buffer with 64-bit
Oracle further improves the performance"): then only the simulated side is judged, a blind
prediction of a trend. Nothing here feeds a run.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from sim.config import Source, param

KINDS = ("rising", "falling", "flat", "close", "above")
_SERIES = {"rising": (1, 2), "falling": (1, 2), "flat": (1, 1), "close": (2, 2), "above": (2, None)}  # how many


@dataclass(frozen=True, kw_only=True)
class ClaimSpec:
    claim: str = param("the claim in words, as the source makes it or its table shows it")
    kind: str = param("rising, falling, flat, close or above", choices=KINDS)
    series: tuple[str, ...] = param('row labels with "{}" where the point goes, e.g. "raw {}"')
    points: tuple[str, ...] = param('what "{}" takes, in order along the series (omit: each series is one row '
                                    'label)', default=())
    metric: str | None = param("the metric compared (omit: the experiment's first)", default=None)
    tolerance: str = param('"5%": how far a point of a flat series may be from its mean, or a close '
                           'series from the other', default="0%")

    def fraction(self) -> float:
        t = self.tolerance.strip()
        if not t.endswith("%"):
            raise ValueError(t)
        out = float(t[:-1]) / 100.0
        if not (math.isfinite(out) and out >= 0):   # (-5% held for no series, nan% for none either)
            raise ValueError(t)
        return out

    def labels(self) -> list[list[str]]:
        if not self.points:
            return [[s] for s in self.series]
        return [[s.replace("{}", p) for p in self.points] for s in self.series]

    def check(self, src: Source) -> None:
        low, high = _SERIES[self.kind]
        if len(self.series) < low or (high is not None and len(self.series) > high):
            want = f"{low}" if low == high else f"{low} or {high}" if high else f"at least {low}"
            raise src.at("series").bad(list(self.series), f"{want} series for a '{self.kind}' claim")
        if len(self.points) < 2 and self.kind in ("rising", "falling", "flat"):
            raise src.at("points").bad(list(self.points), "at least two points along the series")
        for s in self.series:
            if ("{}" in s) != bool(self.points):
                raise src.at("series").bad(s, 'a label with "{}" where each point goes' if self.points
                                           else 'a row label (no "{}": there are no points)')
        try:
            self.fraction()
        except ValueError:
            raise src.at("tolerance").bad(self.tolerance, 'a percentage, 0 or more, e.g. "5%"') from None

    def check_rows(self, src: Source, published: dict[str, dict[str, Any]], metric: str) -> None:
        """Every label the series name is a row, with `metric` published or nothing published (a withheld
        row); `published`: row label -> its published values."""
        for labels in self.labels():
            for label in labels:
                if label not in published:
                    raise src.at("series").bad(label, "the label of a row: " + ", ".join(published))
                if published[label] and metric not in published[label]:
                    raise src.at("metric").bad(metric, f"a metric published for row {label!r}")
                value = published[label].get(metric)
                if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                    # (a list, cpu's [idle, usr, sys], or a text outcome: never judged, printed 'withheld', 'n/a')
                    raise src.at("metric").bad(metric, f"a metric of single numbers: a claim compares them, and row "
                                                       f"{label!r} publishes {value!r}")


def holds(kind: str, series: list[list[float | None]], tolerance: float = 0.0) -> bool | None:
    """Does the claim hold on these series (one list of values per series, along the points)?
    None when a value is missing (a row that ran out of memory, a failed run), or is 0 where the claim divides
    by it (a row that completed nothing: 0 TPM had stopped the scoreboard with a ZeroDivisionError)."""
    if any(v is None or not isinstance(v, (int, float)) or math.isnan(v) for s in series for v in s):
        return None
    if kind in ("rising", "falling", "close") and len(series) == 2 and 0 in series[1]:
        return None
    if kind in ("rising", "falling"):
        xs = series[0] if len(series) == 1 else [a / b for a, b in zip(series[0], series[1])]
        steps = [b - a for a, b in zip(xs, xs[1:])]
        return all(d > 0 for d in steps) if kind == "rising" else all(d < 0 for d in steps)
    if kind == "flat":
        mean = statistics.fmean(series[0])
        if mean == 0:
            return None
        return all(abs(x / mean - 1.0) <= tolerance + 1e-12 for x in series[0])
    if kind == "close":
        return all(abs(a / b - 1.0) <= tolerance + 1e-12 for a, b in zip(series[0], series[1]))
    if kind == "above":
        return all(a > max(other[i] for other in series[1:]) for i, a in enumerate(series[0]))
    raise ValueError(f"unknown claim kind {kind!r}")


@dataclass
class Verdict:
    experiment: str
    claim: str
    published: bool | None
    simulated: bool | None


def verdict(eid: str, claim: ClaimSpec, published: dict[str, Any], simulated: dict[str, Any]) -> Verdict:
    """The claim on the published and on the simulated figures (row label -> value of `metric`)."""
    labels = claim.labels()
    tol = claim.fraction()
    pub = holds(claim.kind, [[published.get(lb) for lb in s] for s in labels], tol)
    sim = holds(claim.kind, [[simulated.get(lb) for lb in s] for s in labels], tol)
    return Verdict(eid, claim.claim, pub, sim)
