"""Sensitivity: which part of the machine (or setting) moves the figure most, per percent changed.

The planner's question before an upgrade, "a faster clock, faster memory or more drives?", answered by
simulation: each factor runs a step below and a step above its value (10% by default), every other setting as
the scenario has it, and the figure's elasticity is

    E = ln(y_high / y_low) / ln(x_high / x_low)

the % change of the figure per 1% change of the factor (+1: TPM scales with the clock; 0: the figure does not
care; an elapsed time falls as the clock rises, E < 0). The runs are a sweep (sim/sweep.py): replication r of
every point draws the same random numbers, so the two ends of a factor differ by the factor, not by noise, and
its interval comes from the spread of the replications' elasticities; from one replication, from the runs' own
95% intervals of the figure (TPM, a mean response time), combined as if independent, which common random
numbers make conservative.

A factor is one or more settings scaled together (a drive's seek curve, track_seek, avg_seek and full_seek, is
one factor: moved alone, avg_seek leaves the curve and is refused). A whole-number factor (drives, cores) steps
by the nearest whole numbers the scenario accepts (a T2 core's strands in multiples of its pipelines). An end the
scenario refuses (mlp below 1) leaves the factor one-sided: base to the other end.

By default the factors are the machine's: the clock, issue CPI (a newer core at the same clock), last-level cache,
cores (sockets where a socket holds one core; sockets too on a board of several), strands (where a core has more
than one), memory latency, bandwidth and size, and for each device the base run did I/O on its drives' count, its
controllers' count, seek curve, spindle speed, media rate and controller (a flash array's bricks and service time);
the buffer cache when the scenario sizes one.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sim.config import OltpsimError
from sim.result import half_width, is_number, shown_unit
from sim.scenario import Scenario, apply_overrides, read_mapping, resolve, setting_path
from sim.sweep import OUTPUT_STATUSES, sweep, t_half_width
from sim.units import exact_quantity, format_quantity

DEFAULT_STEP = 0.10
# (a spec key: its siblings scaled with it, so that the spec stays one machine)
_CPU = ("clock", "cpi_issue", "llc_size", "cores_per_socket", "strands_per_core")
_MEMORY = (("latency", "remote_latency"), "bandwidth_per_socket", "size")
_DISK_GROUP = ("count", "controllers", "disk.rpm", ("disk.avg_seek", "disk.track_seek", "disk.full_seek"), "disk.media_rate",
               "controller.bandwidth", "controller.overhead")
_FLASH = ("bricks", "service_time", "fabric_latency", "fabric_bandwidth")


@dataclass(frozen=True)
class Factor:
    """Settings scaled together by one ratio: their values at the base, and at the low and high ends (None: an end
    the scenario refuses, the factor one-sided)."""

    name: str                  # as --factor writes it: 'hardware.memory.latency+remote_latency'
    keys: tuple[str, ...]
    kinds: tuple[str | None, ...]
    base: tuple                # (a whole-number setting's as int)
    low: tuple | None
    high: tuple | None
    refused: str = ""          # why neither end runs

    @property
    def ends(self) -> list[tuple[str, tuple[float, ...]]]:
        return [(side, v) for side, v in (("low", self.low), ("high", self.high)) if v is not None]

    def setting(self, values: tuple) -> dict[str, Any]:
        return _setting(self.keys, values, self.kinds)

    def shown(self, values: tuple[float, ...] | None) -> str:
        if values is None:
            return "—"
        v, kind = values[0], self.kinds[0]
        return format_quantity(v, kind) if kind else f"{v:g}"


def parse_factor(text: str) -> tuple[str, ...]:
    """'hardware.memory.latency+remote_latency' -> its keys (a part without a dot is a sibling of the first key)."""
    parts = [p.strip() for p in text.split("+")]
    if not parts[0] or not all(parts):
        raise OltpsimError(f"--factor {text!r}: expected a setting, or settings scaled together joined by +, e.g. "
                           "hardware.cpu.clock or hardware.memory.latency+remote_latency")
    first = setting_path(parts[0])
    parent = first.rpartition(".")[0]
    keys = (first, *(setting_path(p) if "." in p else f"{parent}.{p}" for p in parts[1:]))
    if len(set(keys)) < len(keys):
        raise OltpsimError(f"--factor {text!r}: a setting named twice; expected each once")
    return keys


def _lookup(sc: Scenario, key: str) -> tuple[Any, dict]:
    """A setting's value in the resolved scenario (SI units) and its declaration's metadata (its unit kind)."""
    head, _, rest = key.partition(".")
    node: Any = {"hardware": sc.profile, "params": sc.params}.get(head) or getattr(sc.spec, head, None)
    meta: dict = {}
    for part in rest.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif dataclasses.is_dataclass(node) and part in {f.name for f in dataclasses.fields(node)}:
            meta = dict(next(f for f in dataclasses.fields(node) if f.name == part).metadata)
            node = getattr(node, part)
        else:
            raise OltpsimError(f"--factor {key}: no such setting in the scenario; expected a setting with a number "
                               "for its value, e.g. hardware.cpu.clock, database.db_cache, think_time")
    return node, meta


def make_factor(sc: Scenario, data: dict, source: str, keys: tuple[str, ...], step: float) -> Factor:
    """The factor's ends, each checked as a whole scenario: a whole number (the first key only) steps to the nearest
    the scenario accepts, the others moving by the ratio it moved (cores_per_socket+llc_size: the cache per core
    kept); a refused end is dropped."""
    found = [_lookup(sc, k) for k in keys]
    name = keys[0] + "".join(f"+{k.rpartition('.')[2]}" if k.rpartition(".")[0] == keys[0].rpartition(".")[0]
                             else f"+{k}" for k in keys[1:])
    for k, (v, _meta) in zip(keys, found):
        if not is_number(v) or v <= 0:
            raise OltpsimError(f"--factor {name}: {k} is {v!r} in this scenario; expected a positive number to scale "
                               "(a setting the scenario leaves unset has none)")
    base = tuple(v for v, _m in found)
    kinds = tuple(m.get("kind") for _v, m in found)
    whole = isinstance(base[0], int)
    if any(isinstance(v, int) for v in base[1:]):
        raise OltpsimError(f"--factor {name}: {', '.join(k for k, v in zip(keys, base) if isinstance(v, int))}: a "
                           "whole number moves by its own steps; expected it first, or in a factor of its own")

    def accepted(values: tuple) -> str:
        try:
            resolve(apply_overrides(data, _setting(keys, values, kinds), source), source)
        except OltpsimError as exc:
            return str(exc)
        return ""

    ends, why = {}, []
    for side, sign in (("low", -1), ("high", +1)):
        if whole:   # the nearest whole numbers past the step that the scenario accepts (down to 1, up to twice)
            b = base[0]
            ratios = [(b + sign * d) / b for d in range(max(1, round(step * b)), b + 1) if b + sign * d >= 1]
        else:
            ratios = [1 + sign * step]
        for ratio in ratios:
            values = tuple(round(v * ratio) if whole and i == 0 else v * ratio for i, v in enumerate(base))
            problem = accepted(values)
            if not problem:
                ends[side] = values
                break
            why.append(problem)
    refused = "" if ends else (why[0] if why else f"no whole number near {base[0]} to step to")
    return Factor(name, keys, kinds, base, ends.get("low"), ends.get("high"), refused)


def _setting(keys: tuple[str, ...], values: tuple, kinds: tuple) -> dict[str, Any]:
    """Overrides as --set writes them: a quantity with its unit, exactly; a number as it is."""
    return {k: exact_quantity(v, kind) if kind else v for k, v, kind in zip(keys, values, kinds)}


def default_keys(sc: Scenario, devices: list[str]) -> list[tuple[str, ...]]:
    """The machine's factors (the module's docstring), those with a value in this scenario: the storage of the
    devices the base run did I/O on."""
    groups: list[tuple[str, ...]] = []

    def add(prefix: str, entries) -> None:
        for entry in entries:
            keys = tuple(f"{prefix}.{e}" for e in ((entry,) if isinstance(entry, str) else entry))
            present = tuple(k for k in keys if _has_value(sc, k))
            if present and present[0] == keys[0]:
                groups.append(present)

    add("hardware.cpu", _CPU)
    cpu = sc.profile.cpu
    if cpu.strands_per_core == 1:   # (1 -> 2 is a threading the chip lacks, not an upgrade on offer)
        groups.remove(("hardware.cpu.strands_per_core",))
    cores = groups.index(("hardware.cpu.cores_per_socket",))
    if cpu.cores_per_socket == 1 and cpu.sockets > 1:   # (one CPU a socket: more of them are sockets, not a 2nd core)
        groups[cores] = ("hardware.cpu.sockets",)
    elif cpu.sockets > 1:   # (a board of chips: a chip more or less, as a T5440 is sold with 2 or 4)
        groups.insert(cores + 1, ("hardware.cpu.sockets",))
    add("hardware.memory", _MEMORY)
    for name in devices:
        if name in sc.profile.storage.disk_groups:
            add(f"hardware.storage.disk_groups.{name}", _DISK_GROUP)
        elif name in sc.profile.storage.flash_arrays:
            add(f"hardware.storage.flash_arrays.{name}", _FLASH)
    if sc.spec.database.db_cache is not None:
        groups.append(("database.db_cache",))
    return groups


def _has_value(sc: Scenario, key: str) -> bool:
    try:
        v, _meta = _lookup(sc, key)
    except OltpsimError:
        return False
    return is_number(v) and v > 0


@dataclass
class Sensitivity:
    """The answer: one row per factor (`table`, pandas), ranked by the size of its elasticity; `runs` is the
    sweep's table of every run."""

    metric: str
    step: float
    base: float                 # the figure's mean at the base
    base_busiest: str
    factors: list[Factor]
    table: Any
    runs: Any
    replications: int
    out: Path
    base_dop: str = ""          # the instance's degree of parallelism at the base, where the workload reports one

    def plot(self, path=None):
        return plot(self, path)

    @property
    def base_outcome(self) -> str:
        """Why the base gave no figure ('out_of_memory: ...'), '' where it did."""
        return _outcome(self.runs, 0)

    def text(self) -> str:
        """The table the command prints: factors ranked by |E|, the figure's % change at each end, E and its
        interval, and the busiest resource at an end where it is another than the base's."""
        from sim.report import figure, table

        scale, unit = shown_unit(self.metric)
        label = f"{self.metric} ({unit})" if unit else self.metric
        rows = []
        for r in self.table.to_dict("records"):
            moved = [f"{side}: {r[f'busiest.{side}']}" for side in ("low", "high")
                     if _another_bound(r[f"busiest.{side}"], self.base_busiest)]
            rows.append([_short(r["factor"]), r["base"], f"{r['low']} → {r['high']}", _pct(r["change.low"]),
                         _pct(r["change.high"]), _signed(r["elasticity"]),
                         "" if math.isnan(r["elasticity.ci95"]) else f"± {r['elasticity.ci95']:.2f}",
                         "; ".join([*moved, *([f"DOP {self.base_dop} at the base: {r['dop']}"] if r["dop"] else [])])
                         or r["outcome"][:80]])
        runs = "replication" if self.replications == 1 else "replications"
        head = (f"{label} at the base: {figure(scale * self.base) if is_number(self.base) else '—'}"
                f"{'; busiest ' + self.base_busiest if self.base_busiest else ''}. Each factor {100 * self.step:g}% "
                f"below and above ({self.replications} {runs}, common random numbers):")
        body = table(["factor", "base", "low → high", "change at low", "at high", "elasticity", "95% CI",
                      "busiest where another, or outcome"], rows, "lllrrrll")
        notes = [f"elasticity: the % change of {self.metric} per 1% change of the factor, between its ends (+1: in "
                 "proportion; 0: it does not matter here)."]
        if unit in ("s", "ms"):   # (a planner reads +1 as the good direction from TPM)
            notes.append(f"{self.metric} is a time: lower is better, so a negative elasticity is a gain (-1: 10% more "
                         "of the factor, about 10% less time).")
        if self.replications == 1 and len(self.table) and self.table["elasticity.ci95"].isna().all():
            notes.append(f"95% CI: none, the runs gave {self.metric} no interval of their own (only TPM and a mean "
                         "response time have one, from a run of enough batches); -r 3 gives it from the replications' "
                         "pairs.")
        elif self.replications == 1:
            notes.append("95% CI: from each run's own interval, as if the two ends were independent; common random "
                         "numbers make the true one narrower (-r 3 gives it from the replications' pairs).")
        if len(self.table) and (self.table["dop"] != "").any():
            notes.append("DOP: the instance's default degree of parallelism follows cpu_count, so a factor that moves "
                         "the CPUs moves it too; --set dop=N holds it, to see the CPUs alone.")
        if any(_short(f.name) != f.name for f in self.factors):
            notes.append("A factor under hardware. is named without it (cpu.clock is hardware.cpu.clock), a "
                         "device's by the device (array.count is hardware.storage.disk_groups.array.count); "
                         f"{self.out / 'sensitivity.csv'} names them in full, as --factor takes them.")
        return "\n".join([*textwrap.wrap(head, 100), "", "\n".join(line.rstrip() for line in body.splitlines()), "",
                          *(line for note in notes for line in textwrap.wrap(note, 100))])


def _plan(factors: list[Factor]) -> tuple[list[dict], list[dict[str, int]]]:
    """The sweep's points (the base first) and, for each factor, the point of its base and of each end it runs."""
    points, at = [{}], []
    for f in factors:
        at.append({"base": 0})
        for side, values in f.ends if not f.refused else []:
            at[-1][side] = len(points)
            points.append(f.setting(values))
    return points, at


def sensitivity(scenario: str | Path | dict, factors: list[str] | None = None, step: float = DEFAULT_STEP, *,
                replications: int = 1, metric: str | None = None, overrides: dict | None = None,
                out: str | Path | None = None, executor=None, workers: int | None = None,
                scheduler: str | None = None, progress: bool | None = None) -> Sensitivity:
    """Each factor a step below and above its value; `factors` as --factor writes them (default: the machine's)."""
    if not 0 < step < 1:
        raise OltpsimError(f"--step {step:.4g}: expected a fraction between 0% and 100%, e.g. 10%")
    if metric == "extra.tpm_change_pct":   # (its elasticity would be a % change of a %, its sign the base's)
        raise OltpsimError(f"--metric {metric}: a change already (the throughput beside a background job against it "
                           "alone, in %, signed): a % change of it means nothing; expected one of the levels it is "
                           "made of, tpm (beside the job) or extra.tpm_alone, or the job's elapsed")
    raw, source = read_mapping(scenario, "sensitivity")
    data = apply_overrides(raw, overrides or {})
    sc = resolve(data, source)
    asked = [parse_factor(f) for f in factors or []]
    for i, keys in enumerate(asked):   # (the same runs twice over, and the sweep refuses a point given twice)
        if set(keys) in [set(k) for k in asked[:i]]:
            raise OltpsimError(f"--factor {factors[i]}: given twice; expected each factor once")
    made = [make_factor(sc, data, source, keys, step) for keys in asked]
    for f in made:   # checked before anything runs: a factor asked for that cannot move is bad input
        if f.refused:
            raise OltpsimError(f"--factor {f.name}: neither end {100 * step:g}% away runs: {f.refused}")
    out = Path(out if out is not None else f"sensitivity-{sc.profile.name}-{sc.spec.workload}")
    common = dict(overrides=overrides, out=out, executor=executor, workers=workers, scheduler=scheduler,
                  progress=progress, replications=replications)
    if not asked:   # the base first: its devices say which storage matters
        first = sweep(scenario, points=[{}], **common)
        # (no figure to move, or one of 0 that no % change is made from: nothing more; a metric only a run knows,
        # device.X.iops, is checked now, not after every factor)
        ok = first.table["status"].isin(OUTPUT_STATUSES).any()
        gave = ok and any(v > 0 for v in _values(first.table, 0, _metric(first, metric)).values())
        made = [make_factor(sc, data, source, keys, step)
                for keys in (default_keys(sc, _busy_devices(first.table)) if gave else [])]
    points, at = _plan(made)
    res = sweep(scenario, points=points, **common)
    m = _metric(res, metric)
    ran = _ok_runs(res.table, 0)[m]
    if len(ran) and not any(is_number(v) for v in ran):   # (a flag or a text: the base ran, so it is the metric)
        v = ran.iloc[0].item() if hasattr(ran.iloc[0], "item") else ran.iloc[0]   # (numpy's False prints np.False_)
        raise OltpsimError(f"--metric {m}: {v!r} at the base, not a number; expected a figure with a number "
                           f"(tpm, elapsed, extra.iops...); the results are saved in {res.out}")
    answer = _answer(made, at, res.table, m, step, replications, res.out)
    answer.table.to_csv(res.out / "sensitivity.csv", index=False)
    return answer


def _metric(res, metric: str | None) -> str:
    """The figure asked for (default: the workload's own), refused where the runs have no such column."""
    m = metric or res.metric
    if m not in res.table:
        raise OltpsimError(f"--metric {m}: no such figure in the runs; the results are saved in {res.out}")
    return m


def _short(name: str) -> str:
    """A factor's name in the printed table: a hardware key without 'hardware.', a device's from the device."""
    if not name.startswith("hardware."):
        return name
    short = name.removeprefix("hardware.")
    for section in ("storage.disk_groups.", "storage.flash_arrays."):
        short = short.removeprefix(section)
    return short


def _another_bound(end: str, base: str) -> bool:
    """Whether an end's busiest resource ('array %b 42%') is another bound than the base's: another name, at least
    half busy; one that tops a list of idle resources because the base's bound eased (or fell under result.busiest's
    90% for '1 strand full') is not. (A ninth T2 core leaves the strands 85% busy and LGWR at 92%: LGWR is the
    bound now, below the base's 96% strands.)"""
    if not end:
        return False
    (name, _, pct), base_name = end.rpartition(" "), base.rpartition(" ")[0]
    return name != base_name and float(pct.rstrip("%")) >= 50


def _pct(x: float) -> str:
    return "—" if not is_number(x) else f"{100 * x:+.1f}%"


def _signed(x: float) -> str:
    return "—" if not is_number(x) else f"{round(x, 2) + 0.0:+.2f}"   # (+ 0.0: no '-0.00' for a tiny negative)


def _busy_devices(table) -> list[str]:
    """The devices any run in the table did I/O on (the base's replications)."""
    return [c.split(".")[1] for c in table.columns if c.startswith("device.") and c.endswith(".iops")
            and any(is_number(v) and v > 0 for v in table[c])]


def _side(point: int, at: dict[str, int]) -> str:
    return next(side for side, p in at.items() if p == point)


def _ok_runs(table, point: int):
    """The runs of a point that gave figures."""
    return table[(table["point"] == point) & table["status"].isin(OUTPUT_STATUSES)]


def _values(table, point: int, metric: str) -> dict[int, float]:
    """The figure of each replication at a point, from runs that gave figures."""
    g = _ok_runs(table, point)
    return {int(r): float(v) for r, v in zip(g["replication"], g[metric]) if is_number(v)}


def _half_widths(table, point: int, metric: str) -> dict[int, float]:
    """A run's own 95% half-width of the figure, where it gives one (TPM's, a mean response time's)."""
    g = table[table["point"] == point]
    return {int(row["replication"]): hw for row in g.to_dict("records")
            if (hw := half_width(row, metric)) is not None}


def _outcome(table, point: int) -> str:
    g = table[(table["point"] == point) & ~table["status"].isin(OUTPUT_STATUSES)]
    return "" if g.empty else f"{g['status'].iloc[0]}: {g['message'].iloc[0]}"


def _dop(table, point: int) -> str:
    """The degree of parallelism the instance chose at a point (a parallel job's extra.dop), '' where none."""
    g = _ok_runs(table, point)
    dop = g["extra.dop"].dropna() if "extra.dop" in g else g.iloc[:0, 0]
    return "" if dop.empty else f"{dop.mode().iloc[0]:g}"


def _busiest(table, point: int) -> str:
    g = _ok_runs(table, point)
    if g.empty or "busiest" not in g:
        return ""
    name = g["busiest"].mode().iloc[0]
    return f"{name} {g[g['busiest'] == name]['busiest_pct'].mean():.0f}%" if name else ""


def elasticity(y_low: dict[int, float], y_high: dict[int, float], ratio: float,
               hw_low: dict[int, float], hw_high: dict[int, float]) -> tuple[float, float]:
    """(E, its 95% half-width) from the replications both ends have: the mean of their paired elasticities and
    Student's t across them; from one, the runs' own intervals as relative errors of ln y, in quadrature."""
    pairs = [r for r in sorted(y_low) if r in y_high and y_low[r] > 0 and y_high[r] > 0]
    if not pairs:
        return math.nan, math.nan
    e = np.array([math.log(y_high[r] / y_low[r]) for r in pairs]) / math.log(ratio)
    if len(pairs) >= 2:
        return float(e.mean()), t_half_width(e)
    r = pairs[0]
    if r in hw_low and r in hw_high:
        return float(e[0]), math.hypot(hw_low[r] / y_low[r], hw_high[r] / y_high[r]) / abs(math.log(ratio))
    return float(e[0]), math.nan


def _answer(factors: list[Factor], points: list[dict[str, int]], table, metric: str, step: float,
            replications: int, out: Path) -> Sensitivity:
    import pandas as pd

    base_y = _values(table, 0, metric)
    base = float(np.mean(list(base_y.values()))) if base_y else math.nan
    base_busiest = _busiest(table, 0)
    rows = []
    for f, at in zip(factors, points):
        lo, hi = at.get("low", 0), at.get("high", 0)   # (a one-sided factor runs from the base)
        x_lo, x_hi = (f.low or f.base)[0], (f.high or f.base)[0]
        y = {side: _values(table, p, metric) for side, p in at.items()}
        e, hw = (math.nan, math.nan) if f.refused else elasticity(
            y[_side(lo, at)], y[_side(hi, at)], x_hi / x_lo, _half_widths(table, lo, metric),
            _half_widths(table, hi, metric))
        row = {"factor": f.name, "base": f.shown(f.base), "low": f.shown(f.low), "high": f.shown(f.high),
               # the first setting's values in SI units, for pandas (the texts above are for reading)
               **{f"x.{side}": float(v[0]) if v else math.nan for side, v in (("base", f.base), ("low", f.low),
                                                                               ("high", f.high))}}
        for side in ("low", "high"):
            vals = y.get(side, {})
            row[f"{metric}.{side}"] = float(np.mean(list(vals.values()))) if vals else math.nan
            row[f"change.{side}"] = row[f"{metric}.{side}"] / base - 1 if base else math.nan
            row[f"busiest.{side}"] = _busiest(table, at[side]) if side in at else ""
        row["elasticity"], row["elasticity.ci95"] = e, hw
        # (a parallel job's DOP follows cpu_count: more cores can slow it through the policy, not the cores)
        dops = {side: _dop(table, p) for side, p in at.items()}
        row["dop"] = "" if len(set(dops.values())) < 2 else f"{dops.get('low', '—')} → {dops.get('high', '—')}"
        row["outcome"] = f.refused or "; ".join(f"{side}: {o}" for side, p in at.items() if side != "base"
                                                 for o in [_outcome(table, p)] if o)
        rows.append(row)
    columns = ["factor", "base", "low", "high", "x.base", "x.low", "x.high",
               *(f"{c}.{side}" for side in ("low", "high") for c in (metric, "change", "busiest")),
               "elasticity", "elasticity.ci95", "dop", "outcome"]
    frame = pd.DataFrame(rows, columns=columns)   # (the columns even with no row: a base with no figure runs none)
    if len(frame):
        # (descending by |E| with ties as given, no elasticity last: reversing an ascending sort reversed the ties)
        frame = frame.iloc[(-frame["elasticity"].abs()).fillna(1).argsort(kind="stable")].reset_index(drop=True)
    return Sensitivity(metric, step, base, base_busiest, factors, frame, table, replications, out, _dop(table, 0))


def plot(s: Sensitivity, path=None):
    """A tornado: each factor's % change of the figure at its low and high ends, the largest elasticity on top."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = s.table[s.table["elasticity"].notna()].iloc[::-1]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(t) + 1.5))
    ys = np.arange(len(t))
    from sim.report import figure

    for side, colour in (("low", "tab:blue"), ("high", "tab:orange")):
        ax.barh(ys, 100 * t[f"change.{side}"].fillna(0.0), color=colour, label=f"{side} end")
    ax.axvline(0, color="black", linewidth=0.8)
    # the table's short names, and each factor's own ends: a whole number's (7 -> 9 cores) are not the step's
    ax.set_yticks(ys, [f"{_short(n)}  {lo} → {hi}  E={_signed(e)}"
                       for n, lo, hi, e in zip(t["factor"], t["low"], t["high"], t["elasticity"])], fontsize=8)
    scale, unit = shown_unit(s.metric)
    better = "; lower is better" if unit in ("s", "ms") else ""
    ax.set_xlabel(f"change in {s.metric} from {figure(scale * s.base)}{' ' + unit if unit else ''} (%{better})")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig
