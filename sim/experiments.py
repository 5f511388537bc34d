"""Experiments: a published table re-run by simulation and scored, simulated beside published.

An experiment YAML (experiments/*.yaml) names its source table, a base scenario, one
scenario change per row, the published values of each row (copied from the source) and a
tolerance per metric. Published values are only ever compared with, never fed to a run:
`row_scenario` builds the scenario from `scenario` and `set` alone.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import os
import statistics
from concurrent.futures import BrokenExecutor, as_completed
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from sim import scenario as scenario_mod
from sim.config import OltpsimError, Source, build, param, read_yaml, replace_path, suggest
from sim.metrics import batch_means_halfwidth
from sim.executors import executor_failed, open_executor
from sim.report import figure, table
from sim.result import BY_NAME_PREFIXES, Result, figure_unit
from sim.shapes import ClaimSpec, Verdict, verdict


@dataclass(frozen=True, kw_only=True)
class MetricSpec:
    result: str = param("the Result figure compared (tpm, elapsed, cpu, status, a key of extra, or a transaction "
                        "type's, wait event's or device's figure: rt.new_order.p90, wait.log file sync.avg_ms, "
                        "device.array.util_pct)")
    unit: str = param("unit as printed", default="")
    tolerance: str = param('"10%" (relative), "5 points" (absolute, per element for lists), or "equal"')
    relative_to: str | None = param("label of a row: compare this row's figure as a % change from that row's "
                                    "(published as e.g. 19 for '+19%')", default=None)

    def check(self, src: Source) -> None:
        try:
            self.rule()
        except ValueError:
            raise src.at("tolerance").bad(self.tolerance, '"10%", "5 points" (a finite number, 0 or more) or "equal"') from None

    def rule(self) -> tuple[str, float]:
        t = self.tolerance.strip()
        if t == "equal":
            return "equal", 0.0
        if t.endswith("%"):
            kind, tol = "relative", float(t[:-1]) / 100.0
        elif t.endswith("points"):
            kind, tol = "points", float(t[: -len("points")])
        else:
            raise ValueError(t)
        if not (math.isfinite(tol) and tol >= 0):   # -10% or nan% failed every figure, inf% passed every one
            raise ValueError(t)
        return kind, tol

    def check_published(self, src: Source, value: Any) -> None:
        """A published value the scoring can compare (it subtracted and divided after every row had run:
        '1000 TPM' or [1000] ended reproduce in a TypeError, 0 under a relative tolerance in a division
        by zero)."""
        kind, _tol = self.rule()
        if kind == "equal":   # an outcome ('out_of_memory') or a count, compared as given
            return
        def number(v: Any) -> bool:
            return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        if self.result == "cpu":
            if not (isinstance(value, list) and len(value) == 3 and all(number(v) for v in value)):
                raise src.bad(value, "[idle, usr, sys]: three numbers in %, as vmstat's id, us and sy")
        elif not number(value):
            unit = self.unit or "the figure's unit"
            raise src.bad(value, f"a number, in {unit} (no unit written)")
        elif kind == "relative" and value == 0:
            raise src.bad(value, f"a number other than 0: tolerance {self.tolerance} is a share of it (an "
                                 "absolute one is written as '5 points')")
        elif value < 0 and self.relative_to is None and figure_unit(self.result) in NEVER_NEGATIVE:
            raise src.bad(value, f"a number at least 0: {self.result} in {figure_unit(self.result)} is never negative")


# The units of figures that are never below 0: a throughput, a rate, a time (a % may be a change: extra.change_pct;
# so may any figure relative_to a row)
NEVER_NEGATIVE = ("TPM", "tx/s", "IOPS", "MB/s", "s", "ms")


@dataclass(frozen=True, kw_only=True)
class RowSpec:
    label: str = param("the row as the source labels it")
    set: dict[str, Any] = param("scenario changes for this row (dotted keys; plain keys are workload params)",
                                default={})
    published: dict[str, Any] = param("published values by metric name (empty: a blind prediction)", default={})
    quick: bool = param("part of the quick subset even when its experiment is not", default=False)


@dataclass(frozen=True, kw_only=True)
class ExperimentSpec:
    id: str = param("experiment id: a published table's as in reference/published.yaml; your own table's, any "
                    "name no built-in experiment has")
    title: str = param("what the table shows")
    source: str = param("document and table the published values come from")
    notes: str = param("choices made where the source is silent, and why", default="")
    quick: bool = param("part of the quick subset that CI runs", default=False)
    scenario: dict[str, Any] = param("base scenario shared by every row")
    metrics: dict[str, MetricSpec] = param("metrics compared, by name")
    rows: tuple[RowSpec, ...] = param("one entry per published row")
    predict: tuple[str, ...] = param("extra figures printed for every row (blind predictions)", default=())
    claims: tuple[ClaimSpec, ...] = param("what the table's shape shows, checked on published and simulated "
                                          "figures (sim/shapes.py)", default=())

    def claim_metric(self, claim: ClaimSpec) -> str:
        return claim.metric if claim.metric is not None else next(iter(self.metrics))

    def check(self, src: Source) -> None:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", self.id):   # it names files: --plot's ID.png
            raise src.at("id").bad(self.id, "a name of letters, digits, '.', '_' and '-', e.g. my.server")
        if not self.rows:   # (reproduce printed an empty scoreboard, '0/0 figures within tolerance', and exit 0)
            raise src.at("rows").bad([], "at least one row: a label, the settings that differ and what was measured")
        if not self.predict and not any(r.published for r in self.rows):   # (every row ran, for '0/0 figures')
            raise src.at("rows").error("no row has published values and there is no predict: nothing would be "
                                       "compared or printed; expected what you measured in a row's published "
                                       "(published: {tpm: 120000}), or the figures to predict (predict: [tpm])")
        for i, row in enumerate(self.rows):
            first = next(j for j, r in enumerate(self.rows) if r.label == row.label)
            if first < i:   # results are keyed by label: the first row would be scored on the second's run
                raise src.at("rows").at(i).at("label").bad(row.label, f"a label no other row has (rows[{first}] "
                                                           "has it)")
            for name in row.published:
                if not self.metrics:   # ('no metric of that name; metrics: ' and nothing after it)
                    raise src.at("metrics").bad({}, f"a metric for each figure the rows publish (rows[{i}] publishes "
                                                    f"{name!r}), e.g. {name}: {{result: {name}, tolerance: 10%}}")
                if name not in self.metrics:
                    raise src.at("rows").at(i).at("published").at(name).error(
                        f"no metric of that name{suggest(name, self.metrics)}; metrics: {', '.join(self.metrics)}")
                self.metrics[name].check_published(src.at("rows").at(i).at("published").at(name), row.published[name])
        labels = [r.label for r in self.rows]
        for name, m in self.metrics.items():
            if m.relative_to is not None and m.relative_to not in labels:
                raise src.at("metrics").at(name).at("relative_to").bad(m.relative_to, "the label of a row: "
                                                                       + ", ".join(labels))
        published = {r.label: r.published for r in self.rows}
        for i, claim in enumerate(self.claims):
            metric = self.claim_metric(claim)
            if metric not in self.metrics:
                raise src.at("claims").at(i).at("metric").bad(metric, "one of the metrics: " + ", ".join(self.metrics))
            claim.check_rows(src.at("claims").at(i), published, metric)
            m = self.metrics[metric]
            for label in (lb for series in claim.labels() for lb in series if not published[lb]):
                if m.relative_to is not None or m.result not in self.predict:   # (its simulated side printed n/a)
                    also = f", or {m.result} in predict (printed for every row)" if m.relative_to is None else ""
                    raise src.at("claims").at(i).at("series").bad(
                        label, f"a row with a published {metric}{also}: row {label!r} publishes nothing, so the "
                               "claim had no simulated figure of it to judge")


@dataclass
class Figure:
    """One compared (or predicted) figure of the scoreboard."""

    experiment: str
    row: str
    metric: str
    unit: str
    published: Any
    simulated: Any
    error: float | None      # relative (fraction) or points, per `error_kind`
    error_kind: str          # relative | points | equal | prediction
    ok: bool | None          # None for predictions
    status: str = "ok"
    seeds: int = 1           # runs behind `simulated` (their mean)
    spread: float | None = None  # 95% half-width of that mean across the seeds, in the error's unit


def _builtin_dir() -> Path:
    return Path(str(resources.files("experiments")))


def experiment_paths() -> dict[str, Path]:
    out = {}
    for p in sorted(_builtin_dir().glob("*.yaml")):
        data = read_yaml(p)
        if isinstance(data, dict) and "id" in data:
            out[str(data["id"])] = p
    return out


def load_experiment(path: Path | str) -> ExperimentSpec:
    return build(ExperimentSpec, _profiles_beside(read_yaml(path), Path(path).parent), Source(str(path)))


def _profiles_beside(data: Any, folder: Path) -> Any:
    """A profile YAML the file names by a relative path (its scenario's, a row's) is the one beside the file,
    wherever reproduce is run from (it was looked for in the working folder)."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    if "scenario" in data:
        data["scenario"] = scenario_mod.profile_beside(data["scenario"], folder)
    if isinstance(data.get("rows"), list):
        data["rows"] = [{**row, "set": scenario_mod.profile_beside(row["set"], folder)}
                        if isinstance(row, dict) and "set" in row else row for row in data["rows"]]
    return data


def _is_file_name(i: str) -> bool:
    """A path, not an id: 'Mine.YAML' and 'exp/' were looked up as ids ('unknown experiment', no word of the file)."""
    return Path(i).suffix.lower() in (".yaml", ".yml") or "/" in i or os.sep in i


# the file each experiment of the user's own came from, by id: a figure its runs lack, found only once they ran,
# is blamed on the file (it named 'experiment ID', which the user finds in no file name)
_FILES: dict[str, Path] = {}


def _open_experiment(i: str) -> ExperimentSpec:
    """An experiment of the user's own (their measurements beside the model), by the path of its YAML."""
    path = Path(i)
    if not path.is_file():
        raise OltpsimError(f"{path}: cannot read: {'a folder' if path.is_dir() else 'no such file'}; expected a "
                           "built-in experiment id (oltpsim experiments) or the path of an experiment YAML")
    exp = load_experiment(path)
    builtin = experiment_paths().get(exp.id)
    if builtin is not None and builtin.resolve() != path.resolve():   # its figures would pass as the paper's
        raise OltpsimError(f"{path}: id: got {exp.id!r}; expected an id no built-in experiment has (oltpsim "
                           "experiments): figures are keyed by it")
    for i, row in enumerate(exp.rows):   # a bad setting was blamed on 'experiment ID [label]', not on the file
        where = f"{path}: rows[{i}] ({row.label})"
        scenario_mod.resolve(row_scenario_data(exp, row, where), where)
    _FILES[exp.id] = path
    return exp


def select(ids: list[str] | str | None = None, quick: bool = False) -> list[ExperimentSpec]:
    """Experiments by id: a list of ids, one id, or None for all (prefixes allowed: 'tseries'
    selects every tseries.* experiment); an item ending .yaml is an experiment file of the user's own."""
    paths = experiment_paths()
    if isinstance(ids, str):   # select('tseries.rman'): one id, not its letters
        ids = [ids]
    if ids is not None and not isinstance(ids, (list, tuple)):   # select(5) was a TypeError: int is not iterable
        raise OltpsimError(f"experiment ids: got {ids!r}; expected a list of experiment ids or prefixes, one id, "
                           "or None for all of them (oltpsim experiments lists them)")
    for i in ids or []:
        if not isinstance(i, str) or not i.strip():   # '' is a prefix of every id: it would select them all
            raise OltpsimError(f"experiment id: got {i!r}; expected an experiment id or its prefix, e.g. tseries.rman "
                               "or tseries (oltpsim experiments lists them)")
    if ids:
        chosen = []
        for i in ids:
            if _is_file_name(i):
                chosen.append(i)
                continue
            match = [k for k in paths if k.startswith(i)]
            if not match and Path(i).is_dir():   # (it said 'unknown experiment', no word of the folder)
                raise OltpsimError(f"{i}: a folder; expected a built-in experiment id (oltpsim experiments) or the "
                                   "path of an experiment YAML")
            if not match:
                raise OltpsimError(f"unknown experiment {i!r}{suggest(i, paths)}; known: {', '.join(paths)}")
            chosen += [m for m in match if m not in chosen]
    else:
        chosen = list(paths)
    exps = [_open_experiment(k) if _is_file_name(k) else load_experiment(paths[k]) for k in chosen]
    duplicated = sorted({e.id for e in exps if [x.id for x in exps].count(e.id) > 1})
    if duplicated:   # results are keyed by experiment id: two of one id would score each other's runs
        raise OltpsimError(f"experiment id {duplicated[0]!r} selected twice (a file of your own with a built-in "
                           "experiment's id, or two files of one id); give each experiment its own id")
    if not quick:
        return exps
    subset = [e if e.quick else dataclasses.replace(e, rows=_quick_rows(e)) for e in exps]
    return [e for e in subset if e.rows]


def _quick_rows(exp: ExperimentSpec) -> tuple:
    """The quick rows, and the rows a metric relative to another row needs (a quick row scored against a row that
    was not run had crashed the scoring, after the runs)."""
    quick = [r for r in exp.rows if r.quick]
    refs = {m.relative_to for m in exp.metrics.values() if m.relative_to} if quick else set()
    return tuple(r for r in exp.rows if r.quick or r.label in refs)


def row_scenario_data(exp: ExperimentSpec, row: RowSpec, source: str | None = None) -> dict:
    data = dict(exp.scenario)
    data = scenario_mod.apply_overrides(data, dict(row.set), source or f"experiment {exp.id} [{row.label}]")
    data = replace_path(data, "name", f"{exp.id} [{row.label}]")
    return data


def _run_point(data: dict, source: str) -> Result:
    from sim.run import run

    try:
        return run(scenario_mod.resolve(data, source))
    except OltpsimError as exc:
        return Result(label=data.get("name", ""), profile=str(data.get("profile")), workload=str(data.get("workload")),
                      inputs={}, status="error", message=str(exc))


def _run_key(data: dict) -> str:
    """What makes two runs the same run: the whole scenario but its name."""
    return json.dumps({k: v for k, v in data.items() if k != "name"}, sort_keys=True, default=str)


def run_experiments(exps: list[ExperimentSpec], jobs: int = 1, progress: bool = False,
                    seeds: int = 1) -> dict[tuple[str, str], list[Result]]:
    """Run every row of every experiment (in parallel processes when jobs > 1): one Result per
    seed, the row's run.seed and the `seeds - 1` after it. A row whose scenario another row
    already has (a table repeating another's configurations) is run once for both."""
    rows: dict[tuple[str, str], list[str]] = {}
    runs: dict[str, tuple[dict, str]] = {}
    for e in exps:
        for r in e.rows:
            data, src = row_scenario_data(e, r), f"experiment {e.id} [{r.label}]"
            # Resolve every scenario first: a bad one stops everything before anything runs.
            first = scenario_mod.resolve(data, src).spec.run.seed
            keys = []
            for k in range(seeds):
                d = data if k == 0 else scenario_mod.apply_overrides(data, {"run.seed": first + k}, src)
                keys.append(_run_key(d))
                runs.setdefault(keys[-1], (d, src))
            rows[(e.id, r.label)] = keys
    done: dict[str, Result] = {}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(runs), desc="reproduce", unit="run", leave=False)
    if jobs <= 1 or len(runs) == 1:
        for key, (data, src) in runs.items():
            done[key] = _run_point(data, src)
            if bar:
                bar.update()
    else:
        with open_executor("process", jobs) as opened:   # (Ctrl-C stops its workers at once)
            pool = opened.executor
            futs = {pool.submit(_run_point, data, src): key for key, (data, src) in runs.items()}
            try:
                for fut in as_completed(futs):
                    done[futs[fut]] = fut.result()
                    if bar:
                        bar.update()
            except BrokenExecutor as exc:   # a worker died (killed, out of memory): a traceback, exit 1, had said so
                if bar:
                    bar.close()   # (the message on a line of its own, not written into the bar)
                raise executor_failed(exc, list(dict.fromkeys(runs[k][1] for k in futs.values() if k not in done))) from exc
    if bar:
        bar.close()
    return {(eid, label): [dataclasses.replace(done[k], label=f"{eid} [{label}]") for k in keys]
            for (eid, label), keys in rows.items()}


def _status(runs: list[Result]) -> str:
    statuses = [r.status for r in runs]
    if len(set(statuses)) == 1:
        return statuses[0]
    return "mixed (" + ", ".join(f"{s} {statuses.count(s)}" for s in dict.fromkeys(statuses)) + ")"


def _mean(values: list[Any]) -> Any:
    """The figure of a row run under several seeds: the mean (element by element for a list);
    a text figure (an outcome) only if every seed gives the same."""
    if len(values) == 1:
        return values[0]
    if any(v is None for v in values):
        return None
    if all(isinstance(v, list) for v in values):
        return [statistics.fmean(col) for col in zip(*values)]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return statistics.fmean(values)
    return values[0] if all(v == values[0] for v in values) else None


def _spread(values: list[Any], kind: str, pub: Any) -> float | None:
    """Half-width of the 95% Student-t interval of the mean across seeds, in the error's unit:
    a fraction of the published value, or points (the widest element of a list)."""
    if len(values) < 2 or any(v is None for v in values):
        return None
    if all(isinstance(v, list) for v in values):
        return max(batch_means_halfwidth(list(col)) for col in zip(*values))
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None
    hw = batch_means_halfwidth(list(values))
    return hw / abs(pub) if kind == "relative" and isinstance(pub, (int, float)) and pub else hw


# Result fields that are not figures of a run
_NOT_FIGURES = ("label", "profile", "workload", "inputs", "extra")


def _check_figures(exp: ExperimentSpec, results: dict[tuple[str, str], list[Result]]) -> None:
    """Every figure a metric or `predict` names is one the runs have: a misspelt one ('elapsd') printed
    '—' for every row, scored NO. A workload's own figures (extra) are known only once the rows have run."""
    ran = [r for row in exp.rows for r in results[(exp.id, row.label)] if r.status == "ok"]
    if not ran:
        return
    names = ["cpu", "throughput", *(f.name for f in dataclasses.fields(Result) if f.name not in _NOT_FIGURES)]
    names += [k for k in dict.fromkeys(k for r in ran for k in r.extra)]   # (a row may run another workload)
    by_name = {k for r in ran for k in r.flat() if k.startswith(BY_NAME_PREFIXES)}   # (too many to list: the form)
    named = [(f"metrics.{k}.result", m.result) for k, m in exp.metrics.items()]
    named += [(f"predict[{i}]", name) for i, name in enumerate(exp.predict)]
    where = f"{_FILES[exp.id]} (experiment {exp.id})" if exp.id in _FILES else f"experiment {exp.id}"
    for key, name in named:
        if name not in names and name not in by_name:
            raise OltpsimError(f"{where}: {key}: got {name!r}{suggest(name, [*names, *sorted(by_name)])}; expected a "
                               f"figure its {'/'.join(dict.fromkeys(r.workload for r in ran))} runs have: "
                               f"{', '.join(names)}, or rt.TYPE.STAT, wait.EVENT.STAT, device.NAME.STAT as "
                               "`oltpsim run --json`'s flat columns name them")
    # a mapping or a list (response, devices, top_events) or a text under a numeric tolerance: the scoring subtracted
    # it from the published number, or printed it as numbers, after every row had run: a TypeError, a traceback
    checked = [(f"metrics.{k}.result", m.result, m.rule()[0] == "equal") for k, m in exp.metrics.items()]
    checked += [(f"predict[{i}]", name, True) for i, name in enumerate(exp.predict)]   # a text prints as given
    for key, name, text_ok in checked:
        for r in ran:
            v = r.metric(name)
            if name == "cpu" or v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) \
                    or (isinstance(v, str) and text_ok):
                continue
            shown = f"a {type(v).__name__}" if isinstance(v, (dict, list)) else f"the text {v!r}"
            raise OltpsimError(f"{where}: {key}: {name} is {shown} in the run of {r.label}, not a number; expected a "
                               "figure that is one number (as tpm, elapsed or a number of extra: "
                               "commits_per_log_write), or a text such as status under tolerance: equal")


def score(exp: ExperimentSpec, results: dict[tuple[str, str], list[Result]]) -> list[Figure]:
    """Each row's figures beside its published values; a row run under several seeds is scored on
    its mean (a change relative to another row: seed by seed, then the mean)."""
    _check_figures(exp, results)
    figures = []
    for row in exp.rows:
        runs = results[(exp.id, row.label)]
        status = _status(runs)
        for name, pub in row.published.items():
            m = exp.metrics[name]
            values = [r.metric(m.result) for r in runs]
            if m.relative_to is not None:
                refs = [r.metric(m.result) for r in results[(exp.id, m.relative_to)]]
                values = [100.0 * (v / ref - 1.0) if v is not None and ref else None for v, ref in zip(values, refs)]
            f = _compare(exp.id, row.label, name, m, pub, _mean(values), status)
            f.seeds, f.spread = len(runs), _spread(values, m.rule()[0], pub)
            figures.append(f)
        scored = {exp.metrics[name].result for name in row.published if exp.metrics[name].relative_to is None}
        for name in exp.predict:
            if name in scored:   # already printed beside its published value
                continue
            values = [r.metric(name) for r in runs]
            # in the unit of the metric that scores the same figure (tpm: TPM), where one does
            unit = next((m.unit for m in exp.metrics.values() if m.result == name and m.relative_to is None), "")
            figures.append(Figure(exp.id, row.label, name, unit, None, _mean(values), None, "prediction", None, status,
                                  len(runs), _spread(values, "points", None)))
    return figures


def check_claims(exp: ExperimentSpec, figures: list[Figure]) -> list[Verdict]:
    """Each shape claim of the experiment on its published and on its simulated figures (a claim
    over rows not run, as under --quick, is left out)."""
    out = []
    labels = {r.label for r in exp.rows}
    for claim in exp.claims:
        if any(lb not in labels for series in claim.labels() for lb in series):
            continue
        metric = exp.claim_metric(claim)
        published = {r.label: r.published.get(metric) for r in exp.rows}
        ran = [f for f in figures if f.experiment == exp.id and f.status == "ok" and isinstance(f.simulated, (int, float))]
        simulated = {f.row: f.simulated for f in ran if f.metric == metric}
        m = exp.metrics[metric]
        if m.relative_to is None:   # a withheld row's figure is its prediction of the result (ExperimentSpec.check)
            simulated = {**{f.row: f.simulated for f in ran if f.metric == m.result and f.error_kind == "prediction"},
                         **simulated}
        out.append(verdict(exp.id, claim, published, simulated))
    return out


def claims_table(verdicts: list[Verdict]) -> str:
    """The shape claims, published beside simulated."""
    word = {True: "yes", False: "NO", None: "n/a"}
    rows = [[v.experiment, v.claim, "withheld" if v.published is None else word[v.published], word[v.simulated]]
            for v in verdicts]
    return "Shape claims\n" + table(["experiment", "claim", "published", "simulated"], rows, "llll")


def _compare(eid: str, label: str, name: str, m: MetricSpec, pub: Any, sim: Any, status: str) -> Figure:
    kind, tol = m.rule()
    if kind == "equal":
        return Figure(eid, label, name, m.unit, pub, sim, None, kind, sim == pub, status)
    if sim is None or (isinstance(sim, float) and math.isnan(sim)):
        return Figure(eid, label, name, m.unit, pub, sim, None, kind, False, status)
    if isinstance(pub, list):
        errs = [s - p for s, p in zip(sim, pub)]
        err = max(errs, key=abs)
        ok = all(abs(e) <= tol + 1e-9 for e in errs) if kind == "points" else \
            all(abs(s - p) <= tol * abs(p) for s, p in zip(sim, pub))
        return Figure(eid, label, name, m.unit, pub, [float(s) for s in sim], err, "points", ok, status)   # as measured
    if kind == "relative":
        err = (sim - pub) / abs(pub)   # a % change of -45 simulated at -40 is +11%, not -11%
        return Figure(eid, label, name, m.unit, pub, sim, err, kind, abs(err) <= tol + 1e-12, status)
    err = sim - pub
    return Figure(eid, label, name, m.unit, pub, sim, err, kind, abs(err) <= tol + 1e-9, status)


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, list):
        return "/".join(f"{x:.0f}" for x in v)
    if isinstance(v, float):
        return figure(v)
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _fmt_err(f: Figure) -> str:
    if f.error is None:
        return "" if f.error_kind in ("equal", "prediction") else "n/a"
    if f.error_kind == "relative":
        return f"{100 * f.error:+.1f}%"
    return f"{f.error:+.1f} pt"


def _fmt_spread(f: Figure) -> str:
    if f.spread is None:
        return ""
    if f.error_kind == "relative":
        return f"±{100 * f.spread:.1f}%"
    return f"±{f.spread:.1f} pt" if f.error_kind == "points" else f"±{figure(f.spread)}"


def _seeds(figures: list[Figure]) -> int:
    """Runs behind each simulated figure (one unless reproduce --seeds)."""
    return max((f.seeds for f in figures), default=1)


def scoreboard(figures: list[Figure], verdicts: list[Verdict] | None = None) -> str:
    seeds = _seeds(figures)
    rows = []
    for f in figures:
        verdict = "predicted" if f.ok is None else ("yes" if f.ok else "NO")
        sim = _fmt(f.simulated) if f.status in ("ok", "timeout") or f.metric == "outcome" else f.status
        row = [f.experiment, f.row, f.metric + (f" ({f.unit})" if f.unit else ""), _fmt(f.published), sim, _fmt_err(f)]
        rows.append(row + ([_fmt_spread(f)] if seeds > 1 else []) + [verdict])
    head = ["experiment", "row", "metric", "published", "simulated", "error"]
    head += [f"95% over {seeds} seeds"] if seeds > 1 else []
    text = table(head + ["within tol."], rows, "lllrrr" + ("r" if seeds > 1 else "") + "l")
    if verdicts:
        text += "\n\n" + claims_table(verdicts)
    return text + "\n\n" + summary_line(figures, verdicts)


def summary_line(figures: list[Figure], verdicts: list[Verdict] | None = None) -> str:
    scored = [f for f in figures if f.ok is not None]
    ok = sum(1 for f in scored if f.ok)
    rel = [abs(f.error) for f in scored if f.error_kind == "relative" and f.error is not None]
    pts = [abs(f.error) for f in scored if f.error_kind == "points" and f.error is not None]
    parts = [f"{ok}/{len(scored)} figures within tolerance"]
    if rel:
        parts.append(f"median |error| {100 * statistics.median(rel):.1f}% over {len(rel)} relative figures")
    if pts:
        # (CPU %, and % changes such as Haswell's +13%: 'CPU figures' miscounted them)
        parts.append(f"median |error| {statistics.median(pts):.1f} points over {len(pts)} figures scored in points")
    judged = [v for v in verdicts or [] if v.simulated is not None]
    if judged:
        parts.append(f"{sum(1 for v in judged if v.simulated)}/{len(judged)} shape claims hold")
    preds = sum(1 for f in figures if f.ok is None)
    if preds:
        parts.append(f"{preds} blind predictions")
    seeds = _seeds(figures)
    if seeds > 1:
        parts.append(f"simulated figures are means over {seeds} seeds")
    return "; ".join(parts)


def figures_to_dicts(figures: list[Figure]) -> list[dict]:
    return [dataclasses.asdict(f) for f in figures]


def _yerr(figs: list[Figure], width) -> list[float] | None:
    """Error bars: the 95% interval across seeds, where the figures have one."""
    if all(f.spread is None for f in figs):
        return None
    return [width(f) if f.spread is not None else 0.0 for f in figs]


def _spread_in_units(f: Figure) -> float:
    """The 95% half-width in the figure's own unit: a relative one is a fraction of the published value (a
    figure scored in points, or a prediction with nothing published, is in its unit already)."""
    if f.error_kind == "relative" and isinstance(f.published, (int, float)) and f.published:
        return f.spread * abs(f.published)
    return f.spread


def _panels(exp: ExperimentSpec, figures: list[Figure]) -> list[tuple[str, list[Figure], bool]]:
    """What plot() draws: (title, figures, cpu) per panel. A metric's panel takes the blind predictions of its
    result (a withheld row's); a text figure (an outcome) has none; a prediction of another figure has its own."""
    mine = [f for f in figures if f.experiment == exp.id]
    panels, taken = [], set()
    for name, m in exp.metrics.items():
        fs = [f for f in mine if f.metric == name or (m.relative_to is None and f.error_kind == "prediction"
                                                       and f.metric == m.result)]
        taken.update(id(f) for f in fs)
        if any(isinstance(f.published, list) for f in fs):   # [idle, usr, sys]: drawn as busy, 100 - idle
            panels.append((f"{name}: busy % (100 - idle)", [f for f in fs if isinstance(f.published, list)], True))
            continue
        fs = [f for f in fs if not isinstance(f.published, str) and not isinstance(f.simulated, (str, list))]
        if any(isinstance(v, (int, float)) for f in fs for v in (f.published, f.simulated)):   # (a row with
            # neither, one that ran out of memory, keeps its place on the axis)
            panels.append((f"{name} ({m.unit})" if m.unit else name, fs, False))
    for name in dict.fromkeys(f.metric for f in mine if f.error_kind == "prediction" and id(f) not in taken):
        fs = [f for f in mine if f.metric == name and f.error_kind == "prediction" and id(f) not in taken
              and isinstance(f.simulated, (int, float))]
        if fs:
            panels.append((f"{name} ({fs[0].unit}, predicted)" if fs[0].unit else f"{name} (predicted)", fs, False))
    return panels


def plot(exp: ExperimentSpec, figures: list[Figure], path: Path) -> Path:
    """Simulated beside published, one panel per metric (and per figure only predicted), rows along the x axis
    (with seeds > 1, the simulated means carry their 95% interval across the seeds as error bars)."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = _panels(exp, figures)
    rows = max([len(fs) for _, fs, _ in panels] or [1])
    width = max(5.0, 0.3 * rows + 1.5)   # a row label's room (35 rows had overlapped in 5 inches)
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(width * max(1, len(panels)), 3.6 + 0.05 * rows),
                             squeeze=False)
    if not panels:
        axes[0][0].set_axis_off()
        axes[0][0].text(0.5, 0.5, "no numeric figure to draw", ha="center", va="center")
    for ax, (title, fs, cpu) in zip(axes[0], panels):
        labels = [f.row for f in fs]
        if cpu:
            ax.plot(labels, [100 - f.published[0] for f in fs], "o-", label="published")
            ax.errorbar(labels, [100 - f.simulated[0] if isinstance(f.simulated, list) else float("nan") for f in fs],
                        yerr=_yerr(fs, lambda f: f.spread), fmt="s--", capsize=3, label="simulated")
        else:
            pub = [float("nan") if f.published is None else f.published for f in fs]
            if any(p == p for p in pub):
                ax.plot(labels, pub, "o-", label="published")
            ax.errorbar(labels, [f.simulated if isinstance(f.simulated, (int, float)) else float("nan") for f in fs],
                        yerr=_yerr(fs, _spread_in_units), fmt="s--", capsize=3,
                        label="simulated" if any(p == p for p in pub) else "simulated (prediction)")
        ax.set_xlim(-0.5, len(labels) - 0.5)   # every row, also one with no figure
        ax.set_title(title, fontsize=9)
        ax.tick_params(axis="x", labelrotation=30 if rows <= 8 else 60, labelsize=7)
        plt.setp(ax.get_xticklabels(), ha="right", rotation_mode="anchor")
        ax.legend(fontsize=7)
    fig.suptitle(textwrap.fill(exp.title, int(11 * width * max(1, len(panels)))), fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
