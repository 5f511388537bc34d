"""Two runs side by side: what a what-if changed, in its settings and in its figures, and whether a change in
throughput or a response time is more than the runs' own noise.

The figures are the runs' flat() rows (every figure the report prints, by the names sweeps and capacity limits
use); a figure is shown where it moved by at least MOVED of itself (POINTS for a percentage, a change in points:
vmstat's us, a device's %b), or where one run has it and the other not (an event only one waited on).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from sim.config import OltpsimError, read_text
from sim.report import figure, settings as written, table
from sim.result import HALF_WIDTH, Result, figure_unit, half_width, is_number, shown_unit

MOVED = 0.01    # of the figure: a smaller change is not shown (every=True shows it)
POINTS = 0.5    # percentage points, for a figure in %
PROVENANCE = ("simulated_time", "measured_time", "wall_time", "events", "seed")   # how it was run, not what it showed
# Shown only with every=True: counts that grow with the measured time (the runs' lengths differ), the tails of
# a response time beside its mean and p90, the run's own bookkeeping, and the memory account's lines.
DETAIL_SUFFIXES = (".count", ".waits", ".time_s", ".p50", ".p99", ".drive_ops_per_s", ".avg_service_ms")
DETAIL_PREFIXES = ("throughput_per_s", "extra.batch", "extra.memory.", "extra.response_time_law.law")


def load(path: str | Path) -> Result:
    """A Result as `oltpsim run --json` wrote it."""
    text = read_text(path)
    expected = "expected a result written by oltpsim run --json"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OltpsimError(f"{path}: not JSON ({exc.msg}, line {exc.lineno}); {expected}") from None
    fields = {f.name for f in dataclasses.fields(Result)}
    required = {f.name for f in dataclasses.fields(Result)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    if not isinstance(data, dict) or not required <= set(data):
        missing = sorted(required - set(data)) if isinstance(data, dict) else []
        raise OltpsimError(f"{path}: " + (f"no {', '.join(missing)}" if missing else "not a mapping") + f"; {expected}")
    unknown = sorted(set(data) - fields)
    if unknown:
        raise OltpsimError(f"{path}: {', '.join(unknown)}: not a figure of a result; {expected}")
    return Result(**data)


def settings(a: Result, b: Result) -> list[tuple[str, str, str]]:
    """(setting, A's value, B's) for every input the two runs differ in, as --set writes it."""
    sa, sb = ({k: v for k, v, _default in written(r)} for r in (a, b))
    for r, s in ((a, sa), (b, sb)):   # (a profile, a workload: not among the declared settings)
        s.update({k: str(r.inputs.get(k)) for k in ("profile", "workload")})
    keys = list(dict.fromkeys([*sa, *sb]))
    return [(k, sa.get(k, "—"), sb.get(k, "—")) for k in keys if sa.get(k) != sb.get(k)]


def differences(a: Result, b: Result, every: bool = False) -> list[dict]:
    """One dict per figure that moved (every: per figure either run has): its name, unit, A's and B's values, the
    change (relative, or in points for a %), and for a figure with a 95% interval whether the change is beyond
    both runs' intervals combined (None where either has none)."""
    fa, fb = a.flat(), b.flat()
    out = []
    for name in dict.fromkeys([*fa, *fb]):
        if name.startswith("in.") or name in PROVENANCE or name in HALF_WIDTH.values() or name.endswith(".mean_ci95"):
            continue
        if not every and (name.endswith(DETAIL_SUFFIXES) or name.startswith(DETAIL_PREFIXES)):
            continue
        # (NaN or inf is no figure, as in the JSON `run --json` writes: null; a run beside itself moved nowhere)
        va, vb = (None if isinstance(v, float) and not math.isfinite(v) else v
                  for v in (fa.get(name), fb.get(name)))
        unit = figure_unit(name)
        row = {"figure": name, "unit": unit, "a": va, "b": vb, "change": None, "points": unit == "%", "beyond_noise": None}
        if is_number(va) and is_number(vb):
            row["change"] = vb - va if unit == "%" else ((vb - va) / abs(va) if va else (0.0 if vb == va else math.inf))
            moved = abs(row["change"]) >= (POINTS if unit == "%" else MOVED)
            ha, hb = half_width(fa, name), half_width(fb, name)
            if ha is not None and hb is not None:
                row["beyond_noise"] = abs(vb - va) > math.hypot(ha, hb)
        else:
            moved = va != vb and (va is not None or vb is not None)
        if every or moved:
            out.append(row)
    return out


def _value(v: Any, scale: float = 1.0) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    return figure(scale * v) if math.isfinite(v) else "—"


def _shown(row: dict) -> list[str]:
    """A row of the text: a response time in ms, as the report prints them (flat() keeps seconds)."""
    scale, unit = shown_unit(row["figure"])
    return [row["figure"], unit, _value(row["a"], scale), _value(row["b"], scale), _change(row)]


def _change(row: dict) -> str:
    c = row["change"]
    if c is None:   # (a figure one run has and the other not: an event only one waited on; or a text)
        return {(True, False): "only in A", (False, True): "only in B"}.get((row["a"] is not None, row["b"] is not None), "")
    text = f"{c:+.1f} pt" if row["points"] else ("new" if math.isinf(c) else f"{100 * c:+.1f}%")
    if row["beyond_noise"] is not None:
        text += " beyond noise" if row["beyond_noise"] else " within noise"
    return text


def text(a: Result, b: Result, every: bool = False, names: tuple[str, str] = ("A", "B"),
         sources: tuple[str, str] = ("", "")) -> str:
    """The comparison as the report prints: the two runs, the settings that differ, the figures that moved."""
    na, nb = names
    parts = ["\n".join(f"{n}: {src + ' = ' if src else ''}{r.label} ({r.profile}, {r.workload}, seed {r.seed}, {r.status})"
                       for n, r, src in ((na, a, sources[0]), (nb, b, sources[1])))]
    diff = settings(a, b)
    parts.append("Settings that differ\n" + table(["setting", na, nb], [list(d) for d in diff]) if diff
                 else "Settings: the same")
    rows = differences(a, b, every)
    what = ("Every figure" if every else f"Figures that moved (by {100 * MOVED:g}% or more, {POINTS:g} points for a %; "
            "--all: every figure, counts and percentiles too)")
    parts.append(what + "\n" + table(["figure", "unit", na, nb, "change"],
                                     [_shown(r) for r in rows])
                 if rows else "Figures: none moved")
    if any(r["beyond_noise"] is not None for r in rows):
        parts.append("beyond/within noise: the change against both runs' 95% intervals combined (sqrt(hwA² + hwB²)); "
                     "runs with the same seed share their random draws, so a change within it may still be real")
    return "\n\n".join(parts)
