"""Sweeps: many what-ifs at once, run where there are cores, never losing a finished run.

A sweep is a base scenario, the settings to vary (a cartesian grid of values, or an explicit
list of points) and a number of replications. Replication 0 runs with the scenario's own
seed (so it matches `oltpsim run`), replication r > 0 with a seed derived from (that seed, r)
alone: every point of a replication draws the same random numbers (common random numbers),
so the difference between two points is the change, not noise (a TPC-C terminal draws from its
own streams, so it runs the same work at every point: workloads/tpcc.py _Streams). Confidence intervals come
from the spread across replications (Student t).

Every point is checked before anything runs. A value that makes no valid scenario anywhere
(a typo, a unit that does not parse) is bad input: one error, nothing runs. A combination
the model refuses while each of its values works elsewhere (a redo device the other profile
lacks) is an outcome: recorded as "invalid" with its reason, like a run that ends
"out_of_memory" or fails with an error; the sweep carries on.

The output folder holds:

    points.jsonl     one JSON line per finished run (point x replication), flushed and fsynced
                     as it finishes. Started again with the same arguments, a sweep skips the
                     runs found here (keyed by a hash of the resolved inputs, the
                     replication and the model's code) and completes the rest.
    results.csv      one row per run: the varied settings, every input (in.*), every output;
    results.parquet  the same table, typed.
    summary.csv      one row per point: mean and 95% half-width across replications.
    sweep.json       what was asked.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import hashlib
import io
import itertools
import json
import math
import numbers
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from sim.config import ConfigError, OltpsimError, dotted, make_folder, parse_scalar, read_text, read_yaml, what_it_is
from sim.executors import check_scheduler, executor_failed, kind_of, open_executor
from sim.metrics import batch_means_halfwidth
from sim.result import figure_unit
from sim.scenario import TOP_KEYS, Scenario, apply_overrides, blame_given, read_mapping, resolve, setting_path
import workloads

# Runs whose figures enter the means and intervals: not a batch job cut off at max_time
# ("timeout": its elapsed time is only a lower bound), nor a failed run.
OUTPUT_STATUSES = ("ok",)


# ---------------------------------------------------------------- what to run

def parse_vary(items: Iterable[str]) -> dict[str, list]:
    """--vary options: 'users=8,16,32', "database.db_cache=1 GB,2 GB" or 'users=[8, 16]'."""
    out: dict[str, list] = {}
    for item in items:
        key, eq, text = item.partition("=")
        key, text = key.strip(), text.strip()
        if not eq or not key or not text:
            raise OltpsimError(f"--vary {item!r}: expected KEY=V1,V2,..., e.g. users=8,16,32 or "
                               f"database.db_cache='1 GB','2 GB'")
        if key in out:
            raise OltpsimError(f"--vary {key}: given twice; list all its values in one --vary")
        if text.startswith("{") and "," in text:   # its commas split it: '{new_order: 1' was refused as no mapping
            raise OltpsimError(f"--vary {item!r}: the commas of a mapping split it into values; expected the values "
                               f"as a YAML list, e.g. {key}=[{{new_order: 1, payment: 1}}, {{new_order: 1}}]")
        values = parse_scalar(text) if text.startswith("[") else [parse_scalar(v.strip()) for v in text.split(",")]
        if text.startswith("[") and not isinstance(values, list):   # '[8, 16' : a YAML list not closed
            raise OltpsimError(f"--vary {item!r}: got {text!r}; expected a YAML list such as [8, 16, 32], or "
                               "values separated by commas")
        if not isinstance(values, list) or not values or any(v is None for v in values):
            raise OltpsimError(f"--vary {item!r}: expected a comma-separated list of values, none of them empty")
        # 8 and 8.0 are one value (as a setting they run the same point)
        seen = [json.dumps(int(v) if isinstance(v, float) and v.is_integer() else v, sort_keys=True, default=str)
                for v in values]
        twice = next((v for v, t in zip(values, seen) if seen.count(t) > 1), None)
        if twice is not None:   # the same point twice: a slip, and it would run twice over
            raise OltpsimError(f"--vary {key}: value {twice!r} given twice; expected each value once")
        out[key] = values
    return out


def grid(vary: dict[str, list]) -> list[dict]:
    """The cartesian product of the varied values, the first key varying slowest."""
    keys = list(vary)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(vary[k] for k in keys))]


def read_points(path: str | Path) -> list[dict]:
    """An explicit list of points: a YAML list of mappings, or a CSV with one column per setting."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
        rows = list(reader)
        header = [h.strip() for h in reader.fieldnames or []]
        for i, h in enumerate(header):   # a column without a name, or named twice, would be silently dropped
            if not h or h in header[:i]:
                raise OltpsimError(f"{path}: line 1, column {i + 1}: got {h!r}; expected a setting name not "
                                   "empty and not in another column")
        for line, row in enumerate(rows, start=2):
            if row.get(None):   # DictReader files the cells beyond the header under None
                raise OltpsimError(f"{path}: line {line}: got {len(header) + len(row[None])} cells (extra: "
                                   f"{', '.join(map(repr, row[None]))}); expected at most {len(header)}, one per "
                                   "column of the header")
        # (an empty cell leaves that setting as the scenario has it, at that point)
        points = [{k.strip(): parse_scalar(v.strip()) for k, v in row.items() if k and v is not None and v.strip()}
                  for row in rows]
    else:
        points = read_yaml(path)
        if isinstance(points, dict) and "points" in points:
            other = next((k for k in points if k != "points"), None)
            if other is not None:   # (replications: 3 beside the points was silently ignored)
                raise OltpsimError(f"{path}: {other}: unknown key; expected only points: a list of mappings of "
                                   "settings (replications and fixed settings go on the command line)")
            points = points["points"]
    if not isinstance(points, list) or not points or not all(isinstance(p, dict) and p for p in points):
        raise OltpsimError(f"{path}: got {what_it_is(points)}; expected a non-empty list of points, each a mapping "
                           "of settings (YAML: '- {users: 8, database.db_cache: 1 GB}'; CSV: a header row of "
                           "settings)")
    for i, p in enumerate(points):
        for key in p:
            if not isinstance(key, str) or not key.strip():
                raise OltpsimError(f"{path}: [{i}]: got the key {key!r}; expected a setting name such as users "
                                   "or database.db_cache")
    return points


def replication_seed(base: int, replication: int) -> int:
    """The seed of a replication: a function of (base seed, replication) only, never of the point."""
    if replication == 0:
        return base
    return int(np.random.SeedSequence([base, replication]).generate_state(1)[0])


@dataclass(frozen=True)
class Run:
    """One planned run: a point of the sweep in one replication."""

    point: int
    replication: int
    settings: dict           # the varied settings, as given
    key: str                 # stable hash of the resolved inputs and the replication
    scenario: Scenario | None
    problem: str = ""        # why a refused combination cannot run


def _canonical(sc: Scenario) -> dict:
    spec = dataclasses.asdict(sc.spec)
    spec["params"] = dataclasses.asdict(sc.params)
    return {"scenario": spec, "profile": dataclasses.asdict(sc.profile)}


@functools.lru_cache(maxsize=1)
def model_fingerprint() -> str:
    """A hash of the model's code (every source file of sim/ and workloads/): part of a run's key, so that a
    sweep started again reuses only the runs the same model made; after a change of the code, every run is
    made again (a finished run of an older model would have been taken as this one's)."""
    digest = hashlib.sha256()
    for package in (sys.modules["sim"], workloads):
        root = Path(package.__file__).parent
        for f in sorted(root.rglob("*.py")):
            digest.update(f.relative_to(root).as_posix().encode())
            digest.update(f.read_bytes())
    return digest.hexdigest()[:16]


def _hash(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _label(settings: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items())


def plan(base: dict, source: str, points: list[dict], replications: int) -> list[Run]:
    """Check every point, then list the runs, replication by replication."""
    if replications < 1:
        raise OltpsimError(f"sweep: replications: got {replications}; expected at least 1")
    checked = []
    for settings in points:
        where = f"{source} [{_label(settings)}]" if settings else source
        data = apply_overrides(base, settings, where)
        try:
            checked.append((settings, data, resolve(data, where), None))
        except OltpsimError as exc:
            checked.append((settings, data, None, exc))
    _refuse_bad_input(checked)
    model = model_fingerprint()
    runs = []
    for r in range(replications):
        for i, (settings, data, sc, exc) in enumerate(checked):
            if sc is None:
                runs.append(Run(i, r, settings, _hash({"refused": data, "replication": r, "model": model}), None,
                                str(exc)))
                continue
            seed = replication_seed(sc.spec.run.seed, r)
            sc = dataclasses.replace(sc, spec=dataclasses.replace(
                sc.spec, run=dataclasses.replace(sc.spec.run, seed=seed)))
            runs.append(Run(i, r, settings, _hash({**_canonical(sc), "replication": r, "model": model}), sc))
    first: dict[str, Run] = {}
    for run in runs:   # one scenario twice ('100MB' and '100 MB') ran twice and kept one point's row for both
        other = first.setdefault(run.key, run)
        if other is not run:
            same = ", ".join(f"{k}={other.settings[k]!r} and {run.settings[k]!r}" for k in other.settings
                             if k in run.settings and other.settings[k] != run.settings[k])
            raise OltpsimError(f"{source} [{_label(run.settings)}]: the same scenario as point {other.point} "
                               f"[{_label(other.settings)}]{f' ({same} are one value)' if same else ''}; "
                               "expected each point once")
    return runs


def _refuse_bad_input(checked: list[tuple]) -> None:
    """A value that fails at every point it appears in is bad input, not an outcome."""
    works, first_problem = set(), {}
    for settings, _data, sc, exc in checked:
        for k, v in settings.items():
            tag = (k, json.dumps(v, default=str))
            first_problem.setdefault(tag, str(exc))
            if sc is not None:
                works.add(tag)
    failing = [(k, v, problem) for (k, v), problem in first_problem.items() if (k, v) not in works]
    # blame the setting the problem names (users=8 and database.block_size=3 KB that only meet at one
    # point both fail everywhere; the problem is at database.block_size)
    named = [t for t in failing if f": {setting_path(t[0])}" in t[2]]
    every_point = all(sc is None for _s, _d, sc, _p in checked)
    if named or (failing and not every_point):
        k, v, problem = (named or failing)[0]
        raise OltpsimError(f"{k}={json.loads(v)!r} makes no valid scenario at any point: {problem}")
    if every_point:   # and no varied setting is to blame: the scenario itself (users 0 under every name)
        raise checked[0][3]


# ---------------------------------------------------------------- where results go

class Journal:
    """points.jsonl: one JSON line per finished run, on disk before the next one is recorded."""

    def __init__(self, path: Path):
        self.path = path
        self._repair_tail()

    def _repair_tail(self) -> None:
        # A kill in the middle of a write leaves a partial last line: cut it, keep the rest.
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            with self.path.open("r+b") as f:
                f.truncate(data.rfind(b"\n") + 1)

    def read(self) -> dict[str, dict]:
        records: dict[str, dict] = {}
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue
                records[rec["key"]] = rec
        return records

    def append(self, record: dict) -> None:
        line = json.dumps(record, default=_json_default) + "\n"
        with self.path.open("a") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())


def _json_default(x: Any) -> Any:
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return str(x)


def _flatten(prefix: str, value: Any, out: dict) -> None:
    leaves = dotted(prefix, value) if isinstance(value, dict) else {prefix: value}
    for k, v in leaves.items():
        out[k] = json.dumps(v, default=_json_default) if isinstance(v, (list, tuple)) else v


def _row(run: Run, outcome: dict) -> dict:
    """The table row of a run: its place in the sweep, every input, every output."""
    row: dict[str, Any] = {"point": run.point, "replication": run.replication, **run.settings}
    if run.scenario is not None:
        spec = _canonical(run.scenario)["scenario"]
        for k in TOP_KEYS:
            row[f"in.{k}"] = spec.pop(k)
        row["in.profile"] = run.scenario.profile.name
        for k, v in spec.items():
            _flatten(f"in.{k}", v, row)
    for k, v in outcome.get("row", {}).items():
        if not (k.startswith("in.") and k in row) and not isinstance(v, dict):
            _flatten(k, v, row)
    row["status"], row["message"] = outcome["status"], outcome.get("message", "")
    row["seed"] = run.scenario.spec.run.seed if run.scenario is not None else None
    return row


def run_one(scenario: Scenario) -> dict:
    """Run one point wherever the executor put it; any failure comes back as data."""
    import socket
    import traceback

    from sim.run import run

    # Where and at what CPU cost: wall time on a shared machine says little about either.
    where = {"worker": f"{socket.gethostname()}:{os.getpid()}"}
    cpu = time.process_time()
    try:
        result = run(scenario)
    except OltpsimError as exc:      # refused by the model while it was being built
        return {"status": "invalid", "message": str(exc), **where}
    except Exception as exc:         # noqa: BLE001 - a failing point must not stop the sweep
        return {"status": "error", "message": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=-4), **where}
    return {"status": result.status, "message": result.message, "row": result.flat(), "result": result.to_dict(),
            "cpu_time": time.process_time() - cpu, **where}


# ---------------------------------------------------------------- the sweep

@dataclass
class SweepResult:
    out: Path
    table: Any                  # pandas DataFrame, one row per run
    varied: list[str]
    computed: int               # runs simulated by this call
    reused: int                 # runs found finished in points.jsonl
    executor: str = ""
    files: list[Path] = field(default_factory=list)

    @property
    def metric(self) -> str:
        """The primary figure: the workload's own (TPM, elapsed time, IOPS: primary_metric)."""
        return primary_metric(self.table)

    def summary(self, metrics: list[str] | None = None):
        return summarize(self.table, self.varied, metrics or [self.metric])

    def plot(self, x: str, by: str | list[str] | None = None, metric: str | None = None, path=None):
        return plot(self.table, metric or self.metric, x, self.varied, by, path)


def default_out(scenario: str | Path | dict) -> Path:
    if isinstance(scenario, dict):
        stem = scenario.get("name") or f"{scenario.get('profile', 'scenario')}-{scenario.get('workload', '')}"
    else:
        stem = Path(scenario).stem
    return Path(f"sweep-{Path(str(stem)).name}")


def sweep(scenario: str | Path | dict, vary: dict[str, list] | None = None,
          points: list[dict] | str | Path | None = None, replications: int = 1, *,
          overrides: dict | None = None, out: str | Path | None = None, executor=None,
          workers: int | None = None, scheduler: str | None = None,
          progress: bool | None = None) -> SweepResult:
    """Run every point x replication, resuming from `out` if an earlier call left runs there.

    scenario: a scenario YAML path or mapping; vary: {setting: [values]} for a grid, or
    points: a list of {setting: value} (or a YAML/CSV file of them); overrides: settings
    fixed for the whole sweep. executor: "process" (default, `workers` processes, all cores
    if None), "serial", "dask" (the cluster at `scheduler`, else a LocalCluster of
    `workers`), or an Executor of your own.
    """
    if vary and points is not None:
        raise OltpsimError("give settings to vary or a list of points, not both")
    _check_arguments(vary, points, replications)
    raw, source = read_mapping(scenario, "sweep")
    base = apply_overrides(raw, overrides or {})
    given_points = points
    if isinstance(points, (str, Path)):
        points = read_points(points)
    pts = points if points is not None else grid(vary or {})
    if not pts:
        raise OltpsimError("no points to run: give settings to vary or a non-empty list of points")
    varied = list(dict.fromkeys(k for p in pts for k in p))
    for i, k in enumerate(varied):   # users and params.users are one setting: the table would show the one not run
        same = next((x for x in varied[:i] if setting_path(x) == setting_path(k)), None)
        if same is not None:
            raise OltpsimError(f"{k}: the same setting as {same} (both are {setting_path(k)}), varied under two names; "
                               "expected it under one name")
    for k, v in (overrides or {}).items():   # every point would set it anew: the fixed value was silently dropped
        both = next((x for x in varied if setting_path(x) == setting_path(k)), None)
        # (a point that leaves it out, an empty cell of a points file, takes the fixed value: that is allowed)
        if both is not None and all(any(setting_path(x) == setting_path(k) for x in p) for p in pts):
            raise OltpsimError(f"--set {k}={v}: {both} is varied too (--vary or --points), so the fixed value would "
                               "be ignored at every point; expected it in one place")
    try:
        runs = plan(base, source, pts, replications)
    except ConfigError as exc:
        # a setting fixed for the sweep (--set) that fails at every point is blamed on it, as `oltpsim run` does,
        # not on the scenario at the first point's label
        raise blame_given(exc, raw, overrides or {}) from None
    if scheduler and kind_of(executor, scheduler) == "dask":   # (one unreachable had left a folder behind)
        check_scheduler(scheduler)
    out = Path(out if out is not None else default_out(scenario))
    check_inputs_outside(out, scenario, given_points)
    out = make_folder("--out", out)
    (out / "sweep.json").write_text(json.dumps({"scenario": base, "source": source, "vary": vary, "points": points,
                                                "replications": replications, "runs": len(runs)},
                                               indent=2, default=_json_default))
    journal = Journal(out / "points.jsonl")
    done = journal.read()
    # a run that crashed ("error") is the code's failure, not the scenario's outcome: run it again
    todo = [r for r in runs if r.key not in done or done[r.key]["status"] == "error"]
    reused = len(runs) - len(todo)
    for r in todo:
        if r.scenario is None:   # a refused combination is an outcome: record it, do not run it
            journal.append(_record(r, {"status": "invalid", "message": r.problem}))
    todo = [r for r in todo if r.scenario is not None]
    if progress is None:
        progress = sys.stderr.isatty()
    computed, since = len(todo), time.time()
    while True:
        with open_executor(executor, workers, scheduler) as ex:
            try:
                _execute(todo, ex, journal, progress, initial=len(runs) - len(todo), total=len(runs))
                break
            except _PoolBroken as broken:   # a worker process died and took the pool with it
                if kind_of(executor, scheduler) != "process":   # (not a pool opened here afresh)
                    raise broken.error from broken.__cause__
                suspects = broken.suspects
                print(f"sweep: a worker process died ({type(broken.__cause__).__name__}) with {len(suspects)} "
                      f"run{'s' if len(suspects) != 1 else ''} in flight; each runs again alone", file=sys.stderr)
        # Which of the runs in flight killed it cannot be told: each runs again alone, in a pool of its own; one
        # that dies there too is recorded as crashed (as Dask records a run whose every worker died), and the
        # sweep goes on (a point that always killed its worker had stopped every re-run of the sweep at it)
        try:
            for run in suspects:
                journal.append(_record(run, _alone(run)))
        except KeyboardInterrupt:
            _interrupted(journal)
            raise
        recorded = journal.read()
        todo = [r for r in todo if recorded.get(r.key, {}).get("finished_at", 0.0) < since]
    records = journal.read()
    table = _runs_frame([_placed(r, records[r.key]) for r in runs])
    result = SweepResult(out, table, varied, computed=computed, reused=reused, executor=ex.description)
    result.files = write_tables(result)
    return result


# what a sweep writes in its folder (the command's plot beside them is a PNG, never an input)
OUTPUTS = ("sweep.json", "points.jsonl", "results.csv", "results.parquet", "summary.csv")


def check_inputs_outside(out: Path, *inputs) -> None:
    """An input file (the scenario, the points) that is one the sweep writes would be replaced by it: a points
    file kept as the folder's summary.csv was overwritten with the summary, and the sweep's record of what it
    ran with it."""
    for given in inputs:
        if isinstance(given, (str, Path)) and Path(given).is_file():
            for name in OUTPUTS:
                if (out / name).exists() and os.path.samefile(given, out / name):
                    raise OltpsimError(f"{given}: the sweep writes {out / name}, so it would replace this input file; "
                                       "expected an input outside --out, or another name")


def _placed(run: Run, record: dict) -> dict:
    """A journal's row as a run of this sweep: a run found finished keeps its figures, but its point number and
    varied settings are this sweep's (a finished run of an earlier sweep with other points, or the same values
    in another order, kept its old point number and was merged into another point's summary)."""
    old = record["row"]
    drop = {"point", "replication", *record.get("settings", {})}
    return {"point": run.point, "replication": run.replication, **run.settings,
            **{k: v for k, v in old.items() if k not in drop}}


def _check_arguments(vary, points, replications) -> None:
    """What a notebook passes to sweep(), checked before anything is read or run."""
    if vary is not None and not (isinstance(vary, dict) and all(
            isinstance(k, str) and isinstance(v, (list, tuple)) and v for k, v in vary.items())):
        raise OltpsimError(f"sweep: vary: got {vary!r}; expected a mapping of settings to non-empty lists of values, "
                           "e.g. {'users': [8, 16, 32]}")
    if points is not None and not isinstance(points, (str, Path)) and not (
            isinstance(points, list) and all(isinstance(p, dict) for p in points)):
        raise OltpsimError(f"sweep: points: got {points!r}; expected a list of mappings of settings, e.g. "
                           "[{'users': 8}, {'users': 16}], or the path of a YAML or CSV file of them")
    if isinstance(replications, bool) or not isinstance(replications, int):
        raise OltpsimError(f"sweep: replications: got {replications!r}; expected a whole number, at least 1")


def _record(run: Run, outcome: dict) -> dict:
    return {"key": run.key, "point": run.point, "replication": run.replication, "settings": run.settings,
            "status": outcome["status"], "message": outcome.get("message", ""), "finished_at": time.time(),
            "worker": outcome.get("worker"), "cpu_time": outcome.get("cpu_time"),
            "row": _row(run, outcome), "result": outcome.get("result"), "traceback": outcome.get("traceback")}


def _in_flight(run: Run) -> str:
    return f"point {run.point} [{_label(run.settings)}] replication {run.replication}"


class _PoolBroken(Exception):
    """The executor failed with these runs in flight (`error`: what the user is told where it cannot be retried)."""

    def __init__(self, error: Exception, suspects: list[Run]):
        super().__init__(str(error))
        self.error, self.suspects = error, suspects


def _alone(run: Run) -> dict:
    """Run one point in a process pool of its own: its outcome, or a crash where its worker dies again."""
    from concurrent.futures import BrokenExecutor

    with open_executor("process", 1) as ex:
        try:
            return ex.executor.submit(run_one, run.scenario).result()
        except BrokenExecutor:
            return {"status": "error", "message": "its worker process died (killed, or out of memory), run alone too"}


def _execute(todo: list[Run], ex, journal: Journal, progress: bool, initial: int, total: int) -> None:
    from tqdm import tqdm

    pending: dict = {}
    queue = iter(todo)

    def fill() -> None:
        while len(pending) < ex.slots:
            run = next(queue, None)
            if run is None:
                return
            try:
                fut = ex.executor.submit(run_one, run.scenario)
            except Exception as exc:   # a pool a dead worker broke refuses new work (a traceback, exit 1, had said so)
                suspects = [*pending.values(), run]
                raise _PoolBroken(executor_failed(exc, [_in_flight(r) for r in suspects], journal.path), suspects) from exc
            pending[fut] = run

    with tqdm(total=total, initial=initial, desc="sweep", unit="run", disable=not progress,
              file=sys.stderr, dynamic_ncols=True) as bar:
        try:
            fill()
            while pending:
                finished, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                failed = None
                for fut in finished:
                    run = pending[fut]
                    try:
                        outcome = fut.result()
                    except Exception as exc:  # the executor failed, not the point's model
                        if type(exc).__name__ != "KilledWorker":   # (a pool broken: every run in it is lost)
                            failed = failed or (exc, run)
                            continue
                        # Dask: every worker that tried this run died (out of memory, a crash), and the cluster goes
                        # on: the run crashed, as one whose traceback is recorded, and the sweep with it
                        outcome = {"status": "error", "message": f"{type(exc).__name__}: {exc}"}
                    del pending[fut]
                    journal.append(_record(run, outcome))   # (a run finished beside a failure is kept too)
                    bar.update()
                if failed is not None:
                    exc, run = failed
                    suspects = [run, *(r for r in pending.values() if r is not run)]
                    raise _PoolBroken(executor_failed(exc, [_in_flight(r) for r in suspects], journal.path),
                                      suspects) from exc
                fill()
        except KeyboardInterrupt:   # keep what finished, say where it is, and stop (the executor stops its workers)
            for fut, run in pending.items():
                if fut.done() and not fut.cancelled() and fut.exception() is None:
                    journal.append(_record(run, fut.result()))
            bar.close()   # (the message on a line of its own, not written into the bar)
            _interrupted(journal)
            raise


def _interrupted(journal: Journal) -> None:
    print(f"sweep interrupted: {len(journal.read())} runs saved in {journal.path}; run the same command again "
          "to complete the rest", file=sys.stderr)


# ---------------------------------------------------------------- tables, intervals, plots

def _runs_frame(rows: list[dict]):
    import pandas as pd

    table = pd.DataFrame(rows)
    for col in table.columns:   # a cell left empty (a refused run's inputs, a point that leaves a setting to the
        # scenario) made a column of whole numbers floats: seed 1189033389.0, which --set run.seed refuses
        values = [row[col] for row in rows if row.get(col) is not None]
        if table[col].isna().any() and values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            table[col] = table[col].astype("Int64")
    return table.sort_values(["point", "replication"], kind="stable").reset_index(drop=True)


def primary_metric(table) -> str:
    """The figure summarised and plotted unless --metric says: the workload's own (its `primary`: TPM,
    a batch job's elapsed time, the IOPS of SLOB and CALIBRATE_IO), where the runs are of one workload."""
    names = table["in.workload"].dropna().unique() if "in.workload" in table else ()
    if len(names) == 1:
        primary = getattr(workloads.get(names[0]).Workload, "primary", None)
        for column in (primary, f"extra.{primary}"):
            if column in table and table[column].notna().any():
                return column
        for column in (primary, f"extra.{primary}"):   # no run gave figures (all out of memory): still its column
            if column in table:
                return column
    return "tpm" if "tpm" in table and table["tpm"].notna().any() else "elapsed"


def t_half_width(values: np.ndarray, confidence: float = 0.95) -> float:
    """Half-width of the Student-t interval of the mean of independent replications (none from one, or from an
    infinite figure: a run's own '—' interval, rt.TYPE.mean_ci95)."""
    return batch_means_halfwidth(values, confidence) if len(values) >= 2 and np.isfinite(values).all() else math.nan


def summarize(table, varied: list[str], metrics: list[str]):
    """One row per point: runs, failures, for each metric its mean and 95% half-width across the replications
    that produced figures, and the busiest resource (the one most of them found busiest, with its mean %)."""
    import pandas as pd

    rows = []
    for point, g in table.groupby("point", sort=True):
        ok = g[g["status"].isin(OUTPUT_STATUSES)]
        row = {"point": point, **{k: g[k].iloc[0] for k in varied if k in g}, "runs": len(g), "failed": len(g) - len(ok)}
        for m in metrics:
            vals = pd.to_numeric(ok[m], errors="coerce") if m in ok else pd.Series([], dtype=float)
            if m.startswith("wait.") and not m.endswith(".avg_ms"):   # a run that did not wait on the event had
                vals = vals.fillna(0.0)   # no waits and no time in them, not a missing figure (the point was blank,
                # its mean that of the others); its average wait is no number
            vals = vals.dropna().to_numpy()
            row[m] = float(vals.mean()) if len(vals) else math.nan
            row[f"{m}.ci95"] = t_half_width(vals)
        named = ok[ok["busiest"].notna() & (ok["busiest"] != "")] if "busiest" in ok else ok.iloc[0:0]
        if len(named):   # the resource its runs found busiest most often (a tie: the busier), with its mean utilisation
            pct = pd.to_numeric(named["busiest_pct"]).groupby(named["busiest"]).agg(["size", "mean"])
            top = max(pct.index, key=lambda k: (pct.loc[k, "size"], pct.loc[k, "mean"]))
            row["busiest"], row["busiest.pct"] = top, float(pct.loc[top, "mean"])
        if len(ok) < len(g):
            bad = g[~g["status"].isin(OUTPUT_STATUSES)].iloc[0]
            row["outcome"] = f"{bad['status']}: {bad['message']}"
        rows.append(row)
    return pd.DataFrame(rows)


def _arrow_safe(table):
    """Parquet wants one type per column: a column mixing types (e.g. 8 and '8 GB') becomes text."""
    out = table.copy()
    for col in out.columns:
        if out[col].dtype == object:
            kinds = {type(v) for v in out[col] if v is not None and not (isinstance(v, float) and math.isnan(v))}
            if len(kinds) > 1:
                out[col] = out[col].map(lambda v: None if v is None else str(v))
    return out


def write_summary(res: SweepResult, metric: str | None = None) -> Path:
    """summary.csv: each point's mean and 95% interval of `metric` (default: the workload's figure) and of vmstat's."""
    metrics = list(dict.fromkeys([metric or res.metric, res.metric]))
    metrics += [m for m in ("cpu_idle", "cpu_usr", "cpu_sys", "run_queue") if m in res.table and m not in metrics]
    path = res.out / "summary.csv"
    res.summary(metrics).to_csv(path, index=False)
    return path


def write_tables(res: SweepResult) -> list[Path]:
    files = [res.out / "results.csv", write_summary(res)]
    res.table.to_csv(files[0], index=False)
    try:
        _arrow_safe(res.table).to_parquet(res.out / "results.parquet", index=False)
        files.insert(1, res.out / "results.parquet")
    except ImportError:
        print("sweep: pyarrow is not installed; results.parquet not written (pip install 'oltpsim[parquet]')",
              file=sys.stderr)
    return files


SCENARIO_VALUE = "—"   # a setting a point leaves to the scenario


def _missing(v) -> bool:
    import pandas as pd

    return v is None or (pd.api.types.is_scalar(v) and bool(pd.isna(v)))


def plot(table, metric: str, x: str, varied: list[str], by: str | list[str] | None = None, path=None):
    """`metric` against the setting `x`, with 95% CI error bars, one line per value of `by`
    (default: every other varied setting). Returns the matplotlib Figure; saves it to `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if x not in varied:
        raise OltpsimError(f"--plot {x}: not a varied setting; varied: {', '.join(varied) or 'none'}")
    by = [by] if isinstance(by, str) else list(by) if by is not None else [k for k in varied if k != x]
    for b in by:
        if b not in varied or b == x:
            raise OltpsimError(f"--by {b}: expected another varied setting: {', '.join(k for k in varied if k != x)}")
    if metric not in table:
        raise OltpsimError(f"--metric {metric}: no such column in the results")
    summ = summarize(table, varied, [metric])
    def number(v):   # (numpy's integers too: a column with a gap is pandas' Int64, whose cells are np.int64)
        return isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))

    for col in [x, *by]:   # a points file's empty cell: the scenario's value, as the text summary's "—" (a NaN
        # x crashed the plot, a NaN --by value dropped its points from it); 8.0 (a column with a gap) is 8
        summ[col] = summ[col].map(lambda v: SCENARIO_VALUE if _missing(v) else
                                  int(v) if number(v) and float(v).is_integer() else v).astype(object)
    xs = list(dict.fromkeys(summ[x]))
    numeric = all(number(v) for v in xs)
    if not numeric:   # categories: numbers in order, then the rest as given
        xs = sorted(v for v in xs if number(v)) + [v for v in xs if not number(v)]
    pos = (lambda v: v) if numeric else (lambda v: xs.index(v))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    groups = summ.groupby(by, sort=False) if by else [((), summ)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        if g[metric].isna().all():   # every run of these points failed: nothing to draw
            continue
        g = g.assign(_pos=[pos(v) for v in g[x]]).sort_values("_pos")
        # a point with one replication has no interval: no bar (a 0-wide one read as an exact figure)
        yerr = g[f"{metric}.ci95"].to_numpy(dtype=float)
        label = ", ".join(f"{b}={v}" for b, v in zip(by, key)) or None
        ax.errorbar(g["_pos"], g[metric], yerr=yerr, marker="o", capsize=3, label=label)
    if not numeric:
        ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    ax.set_xlabel(x)
    unit = figure_unit(metric)
    ax.set_ylabel(f"{metric} ({unit})" if unit else metric)
    interval = ("95% CI over replications" if summ[f"{metric}.ci95"].notna().any() else
                "one replication: no interval" if summ["runs"].max() <= 1 else "no interval")
    ax.set_title(f"{metric} against {x} ({interval})", fontsize=10)
    if by:
        ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=110)
    plt.close(fig)
    return fig
