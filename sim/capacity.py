"""Capacity: the largest load a configuration carries within limits (a service level).

The planner's question, "how many users does this server take with New-Order's 90th percentile
under 5 s and the CPUs at most 80% busy?", answered by simulation: the scenario runs at growing
values of one whole-number setting (users by default), doubling until a run breaks a limit, then
bisecting between the last value that met every limit and the first that did not, until they are
within `precision` of each other. Every probe is a full run under the same seed (common random
numbers), so neighbouring probes differ by their load, not by their noise.

The search assumes what a closed system gives: the figures the limits name worsen as the load
grows. A probe the model refuses (more users than the warehouses take), that runs out of memory
or that is cut at run.max_time breaks every limit: it is past the capacity.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import operator
import re
from concurrent.futures import BrokenExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import workloads
from sim.config import ConfigError, OltpsimError, suggest, what_it_is
from sim.executors import executor_failed, open_executor
from sim.result import FIGURES, Result, figure_unit, finite, known_figure, stat_problem
from sim.scenario import Scenario, apply_overrides, blame_given, read_mapping, resolve, setting_path
from sim.units import UnitError, format_quantity, parse

_OPS: dict[str, Callable[[float, float], bool]] = {"<=": operator.le, "<": operator.lt, ">=": operator.ge,
                                                    ">": operator.gt}
_LIMIT = re.compile(r"^\s*(?P<figure>[^<>=\s][^<>=]*?)\s*(?P<op><=|>=|<|>)\s*(?P<value>[^<>=]+?)\s*$")
# A figure derived here for the limits: what a planner caps ("CPUs at most 80% busy"), vmstat's 100 - id.
DERIVED = {"cpu_busy": lambda row: 100.0 - row["cpu_idle"]}
_EXAMPLES = "'rt.new_order.p90 <= 5 s', 'cpu_busy <= 80%', 'device.array.util_pct < 60%', 'run_queue <= 64'"
_WHOLE = "expected a whole-number setting of the load, e.g. users (tpcc), sessions (slob)"


def _kind(figure: str) -> str:
    """How a limit on this figure is written: a time ('5 s'), a percentage ('80%') or a plain number."""
    return {"s": "time", "ms": "time_ms", "%": "percent"}.get(figure_unit(figure), "number")


@dataclass(frozen=True)
class Limit:
    """figure OP value, the value in the figure's own unit (seconds, ms, percent, or as reported)."""

    figure: str
    op: str
    value: float
    text: str

    def holds(self, row: dict) -> bool:
        x = figure_value(row, self.figure)
        return x is not None and not math.isnan(x) and _OPS[self.op](x, self.value)

    def shown(self, x: float | None) -> str:
        """The figure's value as the limit is written (3.2 s, 79.1%)."""
        if x is None or math.isnan(x):
            return "none"
        kind = _kind(self.figure)
        if kind == "time":
            return format_quantity(x, "time")
        # a large number whole ('339,960', as the TPM column), never '3.4e+05' beside it
        number = f"{x:,.0f}" if abs(x) >= 1e4 else f"{x:.4g}"
        return {"time_ms": f"{x:.3g} ms", "percent": f"{x:.1f}%"}.get(kind, number)


def parse_limit(text: str, where: str = "--limit") -> Limit:
    """'rt.new_order.p90 <= 5 s' -> Limit; a bad one names itself and what is expected."""
    if not isinstance(text, str):
        raise OltpsimError(f"{where}: got {what_it_is(text)} {text!r}; expected FIGURE OP VALUE, e.g. {_EXAMPLES}")
    m = _LIMIT.match(text)
    if not m:
        raise OltpsimError(f"{where} {text!r}: expected FIGURE OP VALUE with OP one of <=, <, >=, >, e.g. {_EXAMPLES}")
    figure, op, value = m["figure"], m["op"], m["value"]
    if not (known_figure(figure) or figure in DERIVED):
        raise OltpsimError(f"{where} {text!r}: no such figure {figure!r}{suggest(figure, [*FIGURES, *DERIVED])}; "
                           f"expected cpu_busy, one of {', '.join(FIGURES)}, or a run's figure under rt., device., "
                           "wait. or extra. (the columns of a result's to_frame(), e.g. rt.new_order.p90)")
    kind = _kind(figure)
    try:
        if kind == "time":
            number = parse(value, "time")
        elif kind == "time_ms":
            number = parse(value, "time") * 1e3
        elif kind == "percent":
            number = parse(value, "fraction") * 100.0
        else:
            number = float(value)
        if not math.isfinite(number):   # float() takes 'nan' and 'inf': a limit no run, or every run, meets
            raise ValueError(value)
        if (kind == "percent" and not 0 <= number <= 100) or (kind.startswith("time") and number < 0):
            raise ValueError(value)     # 'cpu_busy <= 180%' or '<= -5 ms': a limit every run, or none, meets
    except (UnitError, ValueError) as exc:
        wanted = {"time": "a time with a unit, like '5 s' or '500 ms'", "time_ms": "a time with a unit, like '20 ms'",
                  "percent": "a percentage from 0% to 100%, like '80%'",
                  "number": "a plain number (the figure has no unit)"}[kind]
        raise OltpsimError(f"{where} {text!r}: got {value!r} for {figure}; expected {wanted}"
                           + (f" ({exc})" if kind != "number" else "")) from None
    return Limit(figure, op, number, f"{figure} {op} {value}")


def _check_one_figure_once(lims: list[Limit]) -> None:
    """Two limits on one figure bound it from both sides, or one is redundant: 'cpu_busy <= 80%' twice
    over printed two columns, and '<= 80%' with '>= 90%' ran only to report the first load broken."""
    for i, lim in enumerate(lims):
        for other in lims[:i]:
            if other.figure != lim.figure:
                continue
            if (other.op[0] == "<") == (lim.op[0] == "<"):
                raise OltpsimError(f"--limit {lim.text!r}: {lim.figure} is limited twice from one side ({other.text!r} "
                                   "too); expected one limit a side: give the one that matters")
            upper, lower = (other, lim) if other.op[0] == "<" else (lim, other)
            both_closed = lower.op == ">=" and upper.op == "<="   # then one value meets both
            if lower.value > upper.value or (lower.value == upper.value and not both_closed):
                raise OltpsimError(f"--limit {lim.text!r}: no {lim.figure} meets both it and {other.text!r}; expected "
                                   "limits a run can meet together")


def _check_names(lims: list[Limit], sc: Scenario) -> None:
    """A device the profile does not have, a transaction type the workload does not run, or a figure no wait
    event, type or device has, is a slip no run can mend: said before the first run (it was found after it, which
    at full length costs minutes; a wait event's was never found: 'wait.log file sync.avg' read as no waits)."""
    devices = sc.profile.storage.device_names()
    types = getattr(workloads.get(sc.spec.workload), "TYPES", ())   # the workloads that time transactions by type
    for lim in lims:
        prefix, _, rest = lim.figure.partition(".")
        name = rest.rpartition(".")[0]
        if problem := stat_problem(lim.figure):
            raise OltpsimError(f"--limit {lim.text!r}: {problem}")
        if prefix == "device" and name not in devices:
            raise OltpsimError(f"--limit {lim.text!r}: no device {name!r}{suggest(name, devices)} in profile "
                               f"{sc.spec.profile}; expected one of {', '.join(devices)}")
        if prefix == "rt" and name not in types:
            known = f"one of {', '.join(types)}" if types else "none: it times no transaction types"
            raise OltpsimError(f"--limit {lim.text!r}: workload {sc.spec.workload} has no transaction type {name!r}"
                               f"{suggest(name, types)}; expected {known}")


def _waits_never_seen(lims: list[Limit], seen: set[str], results: dict[int, Result]) -> list[str]:
    """A wait event a run did not wait on is no waits, which meets the limit; if no run of the search had it, the
    answer says so, with the events the runs did wait on: a misspelt name reads as met everywhere (it cannot be
    refused: a load the search never reached may wait on it)."""
    notes = []
    for lim in lims:
        if lim.figure.startswith("wait.") and lim.figure not in seen:
            stat = lim.figure.rpartition(".")[2]
            known = sorted({k for r in results.values() if r.status == "ok" for k in r.flat()
                            if k.startswith("wait.") and k.endswith("." + stat)})
            notes.append(f"No run of the search waited on {lim.figure[5:-len(stat) - 1]!r}, so {lim.text!r} held as "
                         f"no waits{suggest(lim.figure, known)}; the events they waited on: "
                         f"{', '.join(k[5:-len(stat) - 1] for k in known) or 'none'}.")
    return notes


def _transients(setting: str, bounds: list[Probe | None]) -> list[str]:
    """The runs the answer rests on that the response time law finds not steady (sim/run.py): their response
    times are a transient's, so the answer may move with a longer warm-up."""
    law = "extra.response_time_law."
    return [f"The run at {setting}={p.value} was not steady: a mean response of "
            f"{format_quantity(p.row[law + 'response_ms'] / 1e3, 'time')} where the response time law gives "
            f"{format_quantity(p.row[law + 'law_response_ms'] / 1e3, 'time')}, its queues "
            f"{'still filling' if p.row[law + 'response_ms'] < p.row[law + 'law_response_ms'] else 'draining'}; "
            "a longer run.warmup (several responses long) gives steady figures, and may move the answer."
            for p in bounds if p and p.row.get(law + "steady") is False]


def figure_value(row: dict, figure: str) -> float | None:
    if figure in DERIVED:
        return DERIVED[figure](row)
    x = row.get(figure)
    if x is None and figure.startswith("wait.") and row.get("status") == "ok":
        return 0.0   # an event the run did not wait on: no waits, no time, no share (Result.flat has every other)
    return None if x is None or isinstance(x, (str, bool)) else float(x)


@dataclass
class Probe:
    """One run of the search: the setting's value, what the run showed and the limits it broke."""

    value: int
    row: dict                     # the run's flat figures (Result.flat), or just its status if refused
    broke: list[str]              # each broken limit with the figure's value, or why the run has no figures

    @property
    def meets(self) -> bool:
        return not self.broke


@dataclass
class Capacity:
    setting: str
    limits: list[Limit]
    probes: list[Probe]           # in the order they ran
    best: Probe | None            # the largest value that met every limit (None: not even the first)
    past: Probe | None            # the smallest value that broke one (None: none broke within the range)
    precision: float
    results: dict[int, Result] = field(default_factory=dict, repr=False)
    notes: list[str] = field(default_factory=list)   # said after the answer (a wait limit no run waited on)

    @property
    def value(self) -> int | None:
        return self.best.value if self.best else None

    @property
    def metric(self) -> str:
        """The workload's own figure, shown beside each load: TPM, or SLOB's and CALIBRATE_IO's IOPS."""
        for p in self.probes:
            if p.row.get("status") == "ok":
                primary = getattr(workloads.get(p.row["workload"]).Workload, "primary", None) or "tpm"
                return primary if primary in p.row else f"extra.{primary}"
        return "tpm"

    @property
    def metric_label(self) -> str:
        return {"tpm": "TPM", "extra.iops": "IOPS"}.get(self.metric, self.metric)

    def metric_shown(self, row: dict) -> str:
        """The workload's figure in a run's row as printed: 339,960 (TPM), or a batch job's elapsed as a time
        (its seconds bare, '11 elapsed', read as a count). '' for a run without it."""
        x = figure_value(row, self.metric) if row.get("status") == "ok" else None
        if x is None or math.isnan(x):
            return ""
        return format_quantity(x, "time") if _kind(self.metric) == "time" else f"{x:,.0f}"

    @property
    def table(self):
        """pandas: one row per probe, sorted by the setting: its value, whether it met the limits, what it
        broke, and every figure of its run."""
        import pandas as pd

        rows = [{self.setting: p.value, "meets": p.meets, "broke": "; ".join(p.broke), **p.row}
                for p in sorted(self.probes, key=lambda p: p.value)]
        return pd.DataFrame(rows)

    def answer(self) -> str:
        """The capacity in one or two sentences, with the figures that bound it (and any notes)."""
        return " ".join([self._answer(), *self.notes])

    def _answer(self) -> str:
        within = " and ".join(f"{lim.text} ({lim.shown(figure_value(self.best.row, lim.figure))})"
                              for lim in self.limits) if self.best else ""
        if self.best is None:
            text = (f"No capacity: at {self.setting}={self.past.value}, the smallest value tried, "
                    f"{'; '.join(self.past.broke)}.")
            # a lower bound (tpm >= X) broken at the start may be met at more load: the search, made for figures
            # that worsen as the load grows, never looks there; say so rather than claim no load meets it
            # so may any limit of a batch job, which more channels, sessions or DOP speed up (its elapsed falls)
            row = self.past.row
            batch = "workload" in row and workloads.get(row["workload"]).Workload.kind != "steady"
            low = [lim.text for lim in self.limits if (lim.op in (">", ">=") or batch) and row.get("status") == "ok"
                   and not lim.holds(row)]
            if low:
                why = f"a batch job may run faster with more {self.setting}, and " if batch else ""
                text += (f" {' and '.join(low)} may be met at a larger {self.setting}: {why}the search only grows the "
                         "load from --from while the limits are met; give a --from that meets them.")
            return text
        text = f"Capacity: {self.setting}={self.best.value}"
        shown = self.metric_shown(self.best.row)
        if shown:
            text += f" ({self.metric_label} {shown})" if _kind(self.metric) == "time" else f" ({shown} {self.metric_label})"
        text += f", within {within}."
        job = self.best.row.get("extra.background.workload")
        if job:   # (the limits held the figures beside the job, not those alone: 'alone' is the workload's rate before it)
            text += f" Its figures are the workload's beside {job}, from the job's start to its end."
        ranked = self.results[self.best.value].busiest()[:3] if self.best.value in self.results else []
        if ranked:   # what it would take to carry more
            text += f" Busiest there: {', '.join(f'{k} {v:.0f}%' for k, v in ranked)}."
        # the limits met do not say the load is worth it: past a peak (paging, contention) more users carry less
        # work, which a planner must see beside the answer (not for a batch job's elapsed, lower is better)
        x = figure_value(self.best.row, self.metric)
        done = [(figure_value(p.row, self.metric), p) for p in self.probes
                if p.meets and p.row.get("status") == "ok" and _kind(self.metric) != "time"]
        peak = max(((y, p) for y, p in done if y is not None and not math.isnan(y)), default=None, key=lambda t: t[0])
        if x is not None and peak and peak[0] > 1.05 * x:
            text += (f" {self.metric_label} is higher at a smaller load, {self.metric_shown(peak[1].row)} at "
                     f"{self.setting}={peak[1].value}: more {self.setting} carry less work.")
        if self.past is None:
            return text + " Every value tried met the limits: the capacity may be higher than the range searched."
        gap = self.past.value - self.best.value
        return text + (f" At {self.past.value} ({gap} more): {'; '.join(self.past.broke)}.")


def search(run_at: Callable[[list[int]], list[Probe]], start: int, stop: int, precision: float, width: int = 1,
           on_probe: Callable[[Probe], None] | None = None) -> tuple[list[Probe], Probe | None, Probe | None]:
    """Grow the load from `start` (x2 a round) until a probe breaks a limit (or `stop` is reached), then narrow
    until the last value that met them and the first that broke one are within `precision` x the former (at
    least 1 apart). `run_at(values)` runs `width` values a round (at once, on that many workers): growing, the
    round's values are x2^(1/width), x2^(2/width) ... x2, so a round still doubles the load (the runs at large
    loads cost the most: none goes past the serial search's next one); narrowing, they cut the bracket into
    width + 1 parts. Width 1 is doubling, then bisection."""
    probes: list[Probe] = []

    def round_of(values: list[int]) -> list[Probe]:
        done = sorted(run_at(values), key=lambda p: p.value)
        probes.extend(done)
        if on_probe:
            for p in done:
                on_probe(p)
        return done

    (first,) = round_of([start])
    if not first.meets:
        return probes, None, first
    best, past = first, None

    def take(done: list[Probe]) -> None:   # in order of load: the last met below the first broken
        nonlocal best, past
        for p in done:
            if p.meets and p.value > best.value and (past is None or p.value < past.value):
                best = p
            elif not p.meets and (past is None or p.value < past.value):
                past = p
                return

    while past is None and best.value < stop:
        n = best.value
        values = sorted({min(stop, max(n + 1, round(n * 2 ** (k / width)))) for k in range(1, width + 1)})
        take(round_of(values))
    while past is not None and past.value - best.value > max(1, math.floor(precision * best.value)):
        gap = past.value - best.value
        values = sorted({best.value + gap * k // (width + 1) for k in range(1, width + 1)} - {best.value})
        take(round_of(values))
    return probes, best, past


def capacity(scenario: str | Path | dict, limits: list[str | Limit], setting: str = "users", *, start: int = 1,
             stop: int = 100_000, precision: float = 0.02, overrides: dict | None = None, workers: int = 1,
             on_probe: Callable[[Probe], None] | None = None, progress=None) -> Capacity:
    """The largest value of `setting` (a whole number) whose run meets every limit.

    scenario: a scenario YAML path or mapping; limits: 'FIGURE OP VALUE' strings, or one ('rt.new_order.p90 <= 5 s',
    'cpu_busy <= 80%'), FIGURE a column of Result.flat() or cpu_busy; overrides: settings fixed for every probe.
    start/stop: the range searched; precision: how close the answer is to the first value that breaks a limit
    (0.02: within 2%, at least 1); workers: runs at once, each round (a local process pool; 1: in this process).
    `progress(value, fraction)` is called during each probe's run (in this process only)."""
    from sim.run import run

    if isinstance(limits, (str, Limit)):   # one limit given alone: iterating a string would take its letters
        limits = [limits]
    if not isinstance(limits, (list, tuple)):
        raise OltpsimError(f"capacity: limits: got {what_it_is(limits)} {limits!r}; expected a list of limits, e.g. "
                           f"[{_EXAMPLES}]")
    if not isinstance(setting, str) or not setting:
        raise OltpsimError(f"capacity: setting: got {what_it_is(setting)} {setting!r}; " + _WHOLE)
    if overrides is not None and not isinstance(overrides, dict):
        raise OltpsimError(f"capacity: overrides: got {what_it_is(overrides)} {overrides!r}; expected a mapping of "
                           "settings fixed for every run, e.g. {'profile': 't5220', 'think_time': '0 s'}")
    lims = [lim if isinstance(lim, Limit) else parse_limit(lim) for lim in limits]
    if not lims:
        raise OltpsimError("capacity: no limit given; expected one or more, e.g. " + _EXAMPLES)
    _check_one_figure_once(lims)
    for name, value, least in (("start", start, 1), ("stop", stop, start)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise OltpsimError(f"capacity: {name}: got {value!r}; expected a whole number of at least {least}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise OltpsimError(f"capacity: workers: got {workers!r}; expected a whole number of at least 1")
    if isinstance(precision, bool) or not isinstance(precision, (int, float)) or not 0 <= precision < 1:
        raise OltpsimError(f"capacity: precision: got {precision!r}; expected a fraction from 0 up to 1, e.g. 0.02")
    raw, source = read_mapping(scenario, "capacity")
    fixed = dict(overrides or {})
    same = next((k for k in fixed if setting_path(k) == setting_path(setting)), None)
    if same is not None:   # (params.users beside a search of users too)
        raise OltpsimError(f"--set {same}: the setting the search varies; leave it out (--from and --to bound it)")
    if setting_path(setting).startswith("run."):   # run.seed, run.min_batches: how a run is measured, not its load
        raise OltpsimError(f"capacity: {setting}: a setting of how each run is measured, not of its load; " + _WHOLE)
    base = apply_overrides(raw, fixed)

    def scenario_at(n: int) -> Scenario:
        return resolve(apply_overrides(base, {setting: n}, f"{source} [{setting}={n}]"), f"{source} [{setting}={n}]")

    try:   # the first value must make a scenario: anything wrong there is bad input, not an outcome
        first = scenario_at(start)
    except ConfigError as exc:
        if exc.path == setting_path(setting):   # the search's whole numbers are not what this setting takes
            # (the problem may be its own, e.g. a DBWR setting without a buffer cache: say it, then what the search does)
            raise OltpsimError(f"capacity: {setting}: {start} is refused: {exc.problem} (the search sets it to whole "
                               f"numbers from --from up: it is meant for a whole-number setting of the load, e.g. users "
                               "(tpcc), sessions (slob))") from None
        raise blame_given(exc, raw, fixed) from None
    _check_names(lims, first)
    resolved = first.describe().get(setting_path(setting))
    if isinstance(resolved, bool) or not isinstance(resolved, int) or resolved != start:
        raise OltpsimError(f"capacity: {setting}: {start} runs as {resolved!r}; " + _WHOLE)
    results: dict[int, Result] = {}
    seen: set[str] = set()   # the limits' figures some run has had (one no run has had is misspelt)

    def scenarios(values: list[int]) -> dict[int, Scenario | OltpsimError]:
        out: dict[int, Scenario | OltpsimError] = {}
        for n in values:
            try:
                out[n] = first if n == start else scenario_at(n)
            except OltpsimError as exc:   # past the capacity (more users than the warehouses take), not bad input
                out[n] = exc
        return out

    def run_at(values: list[int]) -> list[Probe]:
        todo = scenarios(values)
        runnable = [n for n in values if isinstance(todo[n], Scenario)]
        if pool is None or len(runnable) < 2:
            for n in runnable:
                results[n] = run(todo[n], progress=(lambda f, n=n: progress(n, f)) if progress else None)
        else:
            try:
                futures = {n: pool.submit(run, todo[n]) for n in runnable}
                for n, fut in futures.items():
                    results[n] = fut.result()
            except BrokenExecutor as exc:   # a worker died (killed, out of memory): a traceback, exit 1, had said so
                raise executor_failed(exc, [f"{setting}={n}" for n in runnable if n not in results]) from exc
        return [probe(n, todo[n]) for n in values]

    def probe(n: int, sc: Scenario | OltpsimError) -> Probe:
        if isinstance(sc, OltpsimError):
            return Probe(n, {"status": "refused", "message": str(sc)}, [f"refused: {sc}"])
        result = results[n]
        row = result.flat()
        if result.status != "ok":
            return Probe(n, row, [f"{result.status.replace('_', ' ')}: {result.message}"])
        # Thrashing carries nothing, however idle it leaves the CPUs: it meets no service level. (A run too short
        # for a transaction at a small load, with nothing on swap, is no bound on the capacity.)
        if result.paging_bound:
            return Probe(n, row, [f"no transaction completed in the measured {result.measured_time:g} s (paging-bound: "
                                  f"{result.extra['memory']['working_set_paged_out_pct']:.1f}% of every working set "
                                  "on swap)"])
        broke = []
        for lim in lims:
            if isinstance(row.get(lim.figure), str):   # (extra.read_wait_event): no number to compare
                raise OltpsimError(f"--limit {lim.text!r}: {lim.figure} is text ({row[lim.figure]!r} at {setting}={n}), "
                                   "not a number; expected a figure with a number")
            if figure_value(row, lim.figure) is None and lim.figure not in DERIVED:
                if lim.figure in seen:   # an earlier run had it: this one lacks it (an event not waited on here):
                    broke.append(f"{lim.figure} none: not in this run")   # not met, but the search goes on
                    continue
                # rt.TYPE.* exist only for types that completed: a short run at a small load may have none, which
                # is not a misspelling
                prefix = lim.figure[:lim.figure.find(".") + 1]   # (a hint under another prefix only misleads)
                why = {"rt.": "; a run has rt.TYPE.* only for transaction types that completed in it (a small --from or "
                              "a short run may have none)",
                       "extra.": "; extra.tp_monitor.* only behind a TP monitor (tpcc with sessions set)"
                       if lim.figure.startswith("extra.tp_monitor.") else ""}.get(prefix, "")
                if lim.figure in row:   # a figure of other workloads' runs (elapsed: a batch job's), none of this one's
                    raise OltpsimError(f"--limit {lim.text!r}: {lim.figure} has no value in a {result.workload} run; "
                                       "expected a figure it gives (the columns of Result.flat() with numbers)")
                raise OltpsimError(f"--limit {lim.text!r}: the run at {setting}={n} has no figure {lim.figure}"
                                   f"{suggest(lim.figure, [k for k in row if k.startswith(prefix)])}{why}; "
                                   "its figures: the columns of Result.flat()")
            if lim.figure in row:
                seen.add(lim.figure)
            if not lim.holds(row):
                broke.append(f"{lim.figure} {lim.shown(figure_value(row, lim.figure))}, not {lim.op} "
                             f"{lim.shown(lim.value)}")
        return Probe(n, row, broke)

    with open_executor("process", workers) if workers > 1 else contextlib.nullcontext() as opened:
        pool = opened.executor if opened is not None else None   # (Ctrl-C stops the workers at once)
        probes, best, past = search(run_at, start, stop, precision, workers, on_probe)
    return Capacity(setting, lims, probes, best, past, precision, results,
                    _waits_never_seen(lims, seen, results) + _transients(setting, [best, past]))


def to_dict(cap: Capacity) -> dict[str, Any]:
    """What --json writes: the answer, the limits and every probe's figures. A figure that is not a number
    (SLOB's read wait with no reads, an infinite interval) is null, as in Result.to_json: NaN is not JSON."""
    return finite({"setting": cap.setting, "capacity": cap.value, "answer": cap.answer(), "precision": cap.precision,
                   "limits": [dataclasses.asdict(lim) for lim in cap.limits],
                   "past": cap.past.value if cap.past else None,
                   "probes": [{"value": p.value, "meets": p.meets, "broke": p.broke, "figures": p.row} for p in cap.probes]})
