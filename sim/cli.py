"""`oltpsim`: run a scenario, reproduce the published tables, inspect profiles and workloads."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
from pathlib import Path

import click

from sim.config import OltpsimError, declared, format_setting, make_folder, parse_scalar, suggest


class _Group(click.Group):
    """Turns user-input errors into one clear line and exit status 2, never a traceback (a failure of what runs
    the runs, a worker process that died, is one line too, and exit status 1: not bad input)."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except OltpsimError as exc:
            click.echo(f"oltpsim: error: {exc}", err=True)
            sys.exit(getattr(exc, "exit_code", 2))


def _parse_sets(sets: tuple[str, ...]) -> dict[str, str]:
    from sim.scenario import setting_path
    out = {}
    for s in sets:
        key, eq, value = s.partition("=")
        if not eq or not key.strip():
            raise OltpsimError(f"--set {s!r}: expected KEY=VALUE, e.g. users=64 or database.db_cache='2 GB'")
        key = key.strip()
        if not value.strip():   # (a shell variable that expanded to nothing, most often): never run with a null
            raise OltpsimError(f"--set {s!r}: no value; expected KEY=VALUE (KEY=null leaves {key} at its default)")
        # the later one would silently win: almost always a slip in a long command (users and params.users are one)
        path = setting_path(key)   # (a key and a mapping that holds it are one setting too: hardware.memory.size and
        #                            hardware.memory={...})
        same = next((k for k in out if setting_path(k) == path or setting_path(k).startswith(path + ".")
                     or path.startswith(setting_path(k) + ".")), None)
        if same is not None:
            also = "" if same == key else f" (as --set {same})"
            raise OltpsimError(f"--set {key}: given twice{also} ({out[same]!r}, then {value.strip()!r}); give it once")
        out[key] = value.strip()
    return out


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="oltpsim")
def main() -> None:
    """Simulate multicore and multithreaded servers running an Oracle-like OLTP database."""


def _a_path(_ctx, param, value):
    """An output path given as '' names nothing: refused, not silently dropped."""
    if value is not None and not str(value).strip():
        raise click.BadParameter("an empty path; expected a file or folder name", param=param)
    return value


def _require_scenario(scenario_file, profile, workload, varied=()) -> None:
    """A scenario file, or a profile and a workload (a sweep may vary them instead)."""
    if scenario_file is None and ((profile is None and "profile" not in varied) or
                                  (workload is None and "workload" not in varied)):
        raise OltpsimError("give a scenario file, or both --profile and --workload"
                           + (" (or vary them)" if varied else ""))


def _scenario_source(fn):
    """The options that name a scenario: a file, and/or a profile and workload overriding it."""
    fn = click.option("--workload", help="workload name (overrides the file's)")(fn)
    fn = click.option("--profile", help="hardware profile name or path (overrides the file's)")(fn)
    return click.argument("scenario_file", required=False, type=click.Path(dir_okay=False))(fn)


@main.command()
@_scenario_source
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="change one setting: users=64, database.db_cache='2 GB', run.seed=7 (the keys: oltpsim "
                   "workloads, oltpsim settings, a profile's own keys under hardware.)")
@click.option("--seed", type=click.IntRange(min=0),
              help="shortcut for --set run.seed=N: it overrides the scenario file's run.seed; given together with "
                   "--set run.seed, the two must be the same seed (different ones are an error)")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), callback=_a_path, help="also write the Result as JSON")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), callback=_a_path,
              help="draw the timeline (run.interval: --set run.interval='10 s') as a PNG: throughput or progress, "
                   "us/sy and r, each device's %b, DB CPU and the top wait events in sessions")
@click.option("--brief", is_flag=True, help="summary only")
def run(scenario_file, profile, workload, sets, seed, json_file, plot_file, brief):
    """Simulate one scenario and print what the system would show.

    Exits 1 when the run gives no figures (out of memory, error) or a batch job is cut at run.max_time
    before its end, 2 on bad input. --seed N and --set run.seed=N are the same setting: giving both with
    different seeds is bad input."""
    from sim import report, scenario
    from sim.run import run as run_scenario

    overrides = _parse_sets(sets)
    if seed is not None:
        given = overrides.get("run.seed")
        if given is not None and parse_scalar(given) != seed:   # which one was meant? refuse, never pick one
            raise OltpsimError(f"--seed {seed} and --set run.seed={given}: two different seeds; give one of them "
                               "(--seed N is the same as --set run.seed=N)")
        overrides["run.seed"] = str(seed)
    _require_scenario(scenario_file, profile, workload)
    _check_output_file("--json", json_file, (scenario_file, profile))
    _check_output_file("--plot", plot_file, (scenario_file, profile))
    if plot_file and json_file and os.path.abspath(plot_file) == os.path.abspath(json_file):
        raise OltpsimError(f"--plot {plot_file} and --json {json_file}: the same file; expected two")
    _check_picture(plot_file)
    sc = scenario.load(scenario_file, overrides, profile=profile, workload=workload)
    if plot_file and sc.spec.run.interval is None:
        raise OltpsimError(f"--plot {plot_file}: no timeline to draw; give run.interval too "
                           "(--set run.interval='10 s': the figures of every 10 s)")
    result = _with_progress(lambda cb: run_scenario(sc, progress=cb), sc.label)
    click.echo(report.summary(result) if brief else report.full(result))
    if json_file:
        _write("--json", json_file, result.to_json())
    if plot_file and result.timeline:
        from sim.timeline import plot
        plot(result, plot_file)
        click.echo(f"timeline drawn in {plot_file}")
    if result.status in report.NO_FIGURES or result.status == "timeout":   # no answer to the question asked
        hint = _out_of_memory_keys(result.workload, sc) if result.status == "out_of_memory" else ""
        click.echo(f"oltpsim: {result.status.replace('_', ' ')}: {result.message}{hint}", err=True)
        sys.exit(1)


# what fills the buffer cache when database.db_cache is not given (all cached), and what starts processes
_CACHED_DATA = {"tpcc": "params.warehouses", "slob": "params.schema_size (read_path sga)",
                "ctas": "params.table_size (in memory)"}
_PROCESSES = {"tpcc": "params.users / params.sessions (and a client process per user with params.users_on_host)",
              "slob": "params.sessions", "rman": "params.channels", "sqlldr": "params.sessions",
              "create_index": "params.dop", "ctas": "params.dop"}


def _out_of_memory_keys(workload: str, sc=None) -> str:
    # (a background job's data and processes share the memory: its keys too, under background.)
    named = [(workload, "")] + ([(sc.spec.background.workload, "background.")] if sc and sc.background else [])
    cached = [f"{at}{_CACHED_DATA[w]}" for w, at in named if w in _CACHED_DATA]
    procs = [f"{at}{_PROCESSES[w]}" for w, at in named if w in _PROCESSES]
    cached = f" (without it, {' and '.join(cached)})" if cached else ""
    procs = f" x {' + '.join(procs)}" if procs else ""
    return (f"{_whole_schema_cached(workload, sc)}; the settings that decide it: database.db_cache{cached} + "
            f"database.shared_pool (the SGA), database.server_memory per session{procs}, hardware.memory.size, "
            "hardware.memory.swap")


def _whole_schema_cached(workload: str, sc) -> str:
    """SLOB through the SGA without database.db_cache caches its whole schema (1 TB by default): say so, and
    what SLOB's physical-I/O set-up gives instead, first (the list of keys alone left the user to find it)."""
    if sc is None or workload != "slob" or sc.params.read_path != "sga" or sc.spec.database.db_cache is not None:
        return ""
    from sim.units import format_quantity
    return (f"; database.db_cache is not set, so the buffer cache holds the whole schema (schema_size "
            f"{format_quantity(sc.params.schema_size, 'size')}: SLOB's logical-I/O set-up). For SLOB's physical-I/O "
            "test give a cache far smaller than the schema (--set database.db_cache='1 GB'), or read_path=direct; "
            "for the logical-I/O test a schema_size that fits in memory")


def _refuse_named_twice(fixed: dict, profile: str | None, workload: str | None) -> None:
    """--profile t5220 with --set profile=t5440: which was meant? refused, never one picked (as `run` does)."""
    for key, value in (("profile", profile), ("workload", workload)):
        if value is not None and key in fixed:
            raise OltpsimError(f"--{key} {value} and --set {key}={fixed[key]}: the {key} given twice; give it once")


def _check_output_file(option: str, path: str | None, reads: tuple = ()) -> None:
    """Refuse an output file that cannot be written before the run, not after it: open it for
    appending (what the file system says, not what the permission bits promise) and take away a
    file the probe made. Nor may it be a file the command reads (`reads`: the scenario, profile or
    experiment files given): --json onto the scenario had replaced it with the result."""
    if path is None:
        return
    for given in reads:
        if given is not None and os.path.isfile(str(given)) and os.path.exists(path) \
                and os.path.samefile(str(given), path):
            raise OltpsimError(f"{option} {path}: that is the input file {given}; writing the result there would "
                               "replace it. Expected another file")
    folder = Path(path).parent
    if not folder.is_dir():
        raise OltpsimError(f"{option} {path}: folder {folder} does not exist; expected a file in an existing folder")
    target = os.path.realpath(path)   # (a dangling symlink's target is what the probe would make)
    if os.path.exists(target) and not os.path.isfile(target):
        return   # a named pipe or a device: opening it would consume its reader
    existed = os.path.exists(target)
    try:
        with open(target, "a"):
            pass
    except OSError as exc:
        raise OltpsimError(f"{option} {path}: cannot write: {exc.strerror}") from None
    if not existed:
        os.remove(target)


def _check_picture(path: str | None) -> None:
    """--plot's file must be one matplotlib draws: it picks the format by the suffix and failed with a traceback
    after every run was made (a .txt), or wrote tornado.png when given tornado (sensitivity; run's timeline too)."""
    if path is None:
        return
    from matplotlib.backend_bases import FigureCanvasBase

    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FigureCanvasBase.get_supported_filetypes():
        raise OltpsimError(f"--plot {path}: {'a .' + suffix if suffix else 'no suffix, not a'} file; expected a "
                           f"picture, e.g. {Path(path).stem or 'plot'}.png (or .svg, .pdf)")


def _write(option: str, path: str, text: str) -> None:
    try:
        Path(path).write_text(text)
    except OSError as exc:
        raise OltpsimError(f"{option} {path}: cannot write: {exc.strerror}") from None


def _with_progress(fn, label: str):
    if not sys.stderr.isatty():
        return fn(None)
    from tqdm import tqdm

    with tqdm(total=100, desc=label, unit="%", leave=False, file=sys.stderr) as bar:
        def cb(frac: float) -> None:
            bar.n = int(100 * frac)
            bar.refresh()
        return fn(cb)


@main.command()
@click.argument("ids", nargs=-1)
@click.option("--quick", is_flag=True, help="only the quick subset (what CI runs)")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="parallel processes (default: all cores)")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), callback=_a_path, help="write the scoreboard as JSON")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False), callback=_a_path, help="draw each table as a PNG in this folder")
@click.option("--seeds", type=click.IntRange(min=1), default=1, show_default=True,
              help="run every row under this many seeds (its run.seed and the ones after it) and score the mean, "
                   "with its 95% interval across the seeds")
def reproduce(ids, quick, jobs, json_file, plot_dir, seeds):
    """Re-run published tables and print simulated beside published.

    IDS: experiment ids or prefixes (oltpsim experiments), or paths of experiment YAMLs of your own
    (your measurements, in the form of experiments/*.yaml)."""
    from sim import experiments as ex

    exps = ex.select(list(ids) or None, quick=quick)
    if not exps:   # (only --quick leaves none: select refuses an id or file that names nothing)
        raise OltpsimError(f"--quick: none of {', '.join(ids) or 'the experiments'} is in the quick subset; expected "
                           "an experiment with quick: true, or rows with quick: true (or leave out --quick)")
    _check_output_file("--json", json_file, (*ids, *_profile_files(exps)))
    if plot_dir:
        make_folder("--plot", plot_dir)
    results = ex.run_experiments(exps, jobs=jobs or os.cpu_count() or 1, progress=sys.stderr.isatty(), seeds=seeds)
    figures = [f for e in exps for f in ex.score(e, results)]
    verdicts = [v for e in exps for v in ex.check_claims(e, figures)]
    click.echo(ex.scoreboard(figures, verdicts))
    if json_file:
        _write("--json", json_file, json.dumps({"figures": ex.figures_to_dicts(figures),
                                                "claims": [dataclasses.asdict(v) for v in verdicts],
                                                "summary": ex.summary_line(figures, verdicts)}, indent=2, default=str))
    if plot_dir:
        for e in exps:
            path = ex.plot(e, figures, Path(plot_dir) / f"{e.id}.png")
            click.echo(f"plot: {path}")


@main.command()
@click.argument("result_a", type=click.Path(dir_okay=False))
@click.argument("result_b", type=click.Path(dir_okay=False))
@click.option("--all", "every", is_flag=True, help="every figure, not only those that moved")
def compare(result_a, result_b, every):
    """Two runs side by side: the settings that differ and the figures that moved.

    RESULT_A, RESULT_B: results written by `oltpsim run --json`. A change in TPM or a mean response time is
    marked beyond or within the two runs' 95% intervals combined."""
    from sim import compare as cmp

    a, b = cmp.load(result_a), cmp.load(result_b)
    click.echo(cmp.text(a, b, every, sources=(result_a, result_b)))


def _profile_files(exps) -> list[str]:
    """The profile YAMLs of one's own that experiments name (their scenario's, a row's): files reproduce reads."""
    named = [e.scenario.get("profile") for e in exps] + [r.set.get("profile") for e in exps for r in e.rows]
    return [p for p in named if isinstance(p, str) and os.path.isfile(p)]


@main.command()
@_scenario_source
@click.option("--vary", "varies", multiple=True, metavar="KEY=V1,V2,...",
              help="values to sweep (all combinations): users=8,16,32  database.db_cache='1 GB','2 GB'")
@click.option("--points", "points_file", type=click.Path(dir_okay=False),
              help="an explicit list of points instead: YAML list of mappings, or CSV with a column per setting")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="a setting fixed for the whole sweep")
@click.option("--replications", "-r", type=int, default=1, show_default=True,
              help="runs per point; replication r uses the same seed at every point")
@click.option("--out", type=click.Path(file_okay=False), callback=_a_path,
              help="output folder (default: sweep-<scenario name>); rerun with it to resume")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="local worker processes (default: all cores)")
@click.option("--scheduler", metavar="tcp://HOST:PORT", help="run on the Dask cluster of this scheduler")
@click.option("--dask-local", type=click.IntRange(min=1), metavar="N", help="run on a Dask LocalCluster of N processes started here")
@click.option("--metric", help="figure summarised and plotted (default: the workload's own: tpm, elapsed for batch jobs, extra.iops for slob and calibrate_io)")
@click.option("--plot", "plot_x", metavar="SETTING", help="plot the metric against this varied setting")
@click.option("--by", multiple=True, metavar="SETTING", help="one line per value of this setting (default: the others)")
def sweep(scenario_file, profile, workload, varies, points_file, sets, replications, out, jobs, scheduler, dask_local,
          metric, plot_x, by):
    """Run many what-ifs: every point x replication, saved as it finishes, resumable."""
    from sim import sweep as sw
    from sim.report import figure, table
    from sim.result import shown_unit

    kind = _executor_kind(jobs, scheduler, dask_local)
    fixed = _parse_sets(sets)
    scenario = scenario_file or {}
    vary = sw.parse_vary(varies) or None
    points = sw.read_points(points_file) if points_file else None
    varied = list(dict.fromkeys(k for p in (points or sw.grid(vary or {})) for k in p))
    _require_scenario(scenario_file, profile, workload, varied)
    # (--profile and --workload name the scenario without a file: a sweep of profiles varies the one given)
    _refuse_named_twice(fixed, profile, workload)
    fixed.update({k: v for k, v in (("profile", profile), ("workload", workload)) if v is not None and k not in varied})
    _check_plot(plot_x, by, varied)
    if metric is not None:
        _check_metric(metric)
    out = Path(out or sw.default_out(scenario_file or f"{profile or 'profiles'}-{workload or 'workloads'}"))
    sw.check_inputs_outside(out, scenario_file, points_file)   # (the points are read here: sweep() sees a list)
    res = sw.sweep(scenario, vary, points, replications, overrides=fixed, out=out, executor=kind,
                   workers=dask_local or jobs, scheduler=scheduler)
    click.echo(f"{len(res.table)} runs on {res.executor}: {res.computed} simulated now, {res.reused} found "
               f"finished in {res.out / 'points.jsonl'}", err=True)
    m = metric or res.metric
    if m not in res.table:
        raise OltpsimError(f"--metric {m}: no such figure{suggest(m, res.table.columns)}; the results are saved in "
                           f"{res.out} (columns of results.csv)")
    if m != res.metric:   # the summary file holds the figure asked for too
        sw.write_summary(res, m)
    summ = res.summary([m])
    scale, unit = shown_unit(m)   # (its unit in the header; a response time in ms)
    rows = []
    for r in summ.to_dict("records"):   # (iterrows would turn every number into a float)
        ci = "" if math.isnan(r[f"{m}.ci95"]) else f"± {figure(scale * r[f'{m}.ci95'])}"
        outcome = r.get("outcome") if isinstance(r.get("outcome"), str) else ""
        status, _, why = outcome.partition(": ")
        outcome = f"{status}: {why.split(']: ', 1)[-1]}" if outcome else ""  # the point is on the row already
        top = r.get("busiest")
        top = f"{top} {r['busiest.pct']:.0f}%" if isinstance(top, str) and top else ""   # (busiest_pct: a metric)
        rows.append([r["point"], *(_point_value(r[k]) for k in res.varied), f"{r['runs'] - r['failed']}/{r['runs']}",
                     "" if math.isnan(r[m]) else figure(scale * r[m]), ci, top, outcome[:100]])
    click.echo(table(["point", *res.varied, "ok", f"{m} ({unit})" if unit else m, "95% CI", "busiest", "outcome"], rows,
                      "r" + "l" * len(res.varied) + "rrrll"))
    _say_not_steady(res.table)
    if plot_x:
        path = res.out / f"{m}-vs-{plot_x}.png"
        res.plot(plot_x, list(by) or None, m, path)
        res.files.append(path)
    for f in res.files:
        click.echo(f"wrote {f}", err=True)
    status = res.table["status"]
    crashed = int((status == "error").sum())
    if crashed:   # a fault of oltpsim's, not an outcome of the scenario
        click.echo(f"oltpsim: {crashed} of {len(status)} runs ended in an error (the tracebacks are in "
                   f"{res.out / 'points.jsonl'}; the same sweep again runs them again)", err=True)
        sys.exit(1)
    if not (status == "ok").any():
        click.echo(f"oltpsim: none of the {len(status)} runs gave figures (the outcome column says why)", err=True)
        sys.exit(1)


def _executor_kind(jobs, scheduler, dask_local) -> str:
    """Where a sweep's runs go: local processes (-j), or a Dask cluster (--scheduler, --dask-local)."""
    if scheduler and dask_local:
        raise OltpsimError("give --scheduler (an existing Dask cluster) or --dask-local N, not both")
    if jobs is not None and (scheduler or dask_local):   # (it was silently ignored)
        raise OltpsimError(f"-j {jobs}: local worker processes; with {'--scheduler' if scheduler else '--dask-local'} "
                           "the Dask cluster runs the runs: give one of them")
    return "dask" if (scheduler or dask_local) else "process"


@main.command()
@_scenario_source
@click.option("--factor", "factors", multiple=True, metavar="KEY[+KEY...]",
              help="a setting to move (default: the machine's CPU, memory and the storage the run used); settings "
                   "joined by + move together: hardware.memory.latency+remote_latency")
@click.option("--step", default="10%", show_default=True, help="how far below and above its value each factor goes")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="a setting fixed for every run")
@click.option("--replications", "-r", type=click.IntRange(min=1), default=1, show_default=True,
              help="runs per end; the interval of an elasticity then comes from their spread")
@click.option("--metric", help="the figure (default: the workload's own: tpm, a batch job's elapsed, slob's iops)")
@click.option("--out", type=click.Path(file_okay=False), callback=_a_path,
              help="output folder (default: sensitivity-<profile>-<workload>); rerun with it to resume")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="local worker processes (default: all cores)")
@click.option("--scheduler", metavar="tcp://HOST:PORT", help="run on the Dask cluster of this scheduler")
@click.option("--dask-local", type=click.IntRange(min=1), metavar="N", help="run on a Dask LocalCluster of N processes started here")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False), callback=_a_path,
              help="draw the factors as a tornado chart (PNG)")
def sensitivity(scenario_file, profile, workload, factors, step, sets, replications, metric, out, jobs, scheduler,
                dask_local, plot_file):
    """Which factor moves the figure most: each a step below and above its value, ranked by elasticity
    (% change of the figure per 1% of the factor). Exits 1 when the base gives no figure or a run crashed."""
    from sim import sensitivity as sn
    from sim.result import is_number
    from sim.units import UnitError, parse

    kind = _executor_kind(jobs, scheduler, dask_local)
    _require_scenario(scenario_file, profile, workload)
    try:
        frac = parse(step, "fraction")
    except UnitError as exc:
        raise OltpsimError(f"--step {step!r}: {exc}") from None
    if metric is not None:
        _check_metric(metric)
    fixed = _parse_sets(sets)
    _refuse_named_twice(fixed, profile, workload)
    fixed.update({k: v for k, v in (("profile", profile), ("workload", workload)) if v is not None})
    _check_picture(plot_file)
    _check_output_file("--plot", plot_file, (scenario_file, profile))
    s = sn.sensitivity(scenario_file or {}, list(factors), frac, replications=replications, metric=metric,
                       overrides=fixed, out=out, executor=kind, workers=dask_local or jobs, scheduler=scheduler)
    click.echo(s.text())
    click.echo(f"wrote {s.out / 'sensitivity.csv'}", err=True)
    if plot_file and s.table["elasticity"].notna().any():
        s.plot(plot_file)
        click.echo(f"wrote {plot_file}", err=True)
    elif plot_file:
        click.echo(f"--plot {plot_file}: not drawn, no factor has an elasticity", err=True)
    status = s.runs["status"]
    if (status == "error").any():   # a fault of oltpsim's, not an outcome of the scenario
        click.echo(f"oltpsim: {int((status == 'error').sum())} of {len(status)} runs ended in an error (the "
                   f"tracebacks are in {s.out / 'points.jsonl'}; the same command again runs them again)", err=True)
        sys.exit(1)
    if not is_number(s.base):
        click.echo(f"oltpsim: the base gave no figure ({s.base_outcome or 'no run of it ended ok'}), so no "
                   "factor has an elasticity", err=True)   # (no row's outcome is the base's)
        sys.exit(1)
    if s.base <= 0:   # (no % change is made from 0: every row was a dash with no word why)
        click.echo(f"oltpsim: the base's {s.metric} is {s.base:g}, so no factor has an elasticity (a % change from it "
                   "means nothing); a run that completes some work gives one (run.max_time is the time measured "
                   "after run.warmup)", err=True)
        sys.exit(1)


def _say_not_steady(runs) -> None:
    """The points with a run the response time law found not steady (sim/run.py): their response times are a
    transient's, whatever their intervals say."""
    law = "extra.response_time_law.steady"
    if law in runs:
        points = sorted({int(p) for p, v in zip(runs["point"], runs[law]) if v is not None and v == False})  # noqa: E712
        if points:   # (== False: numpy's bools too; None and NaN, no verdict, are not False)
            click.echo(f"not steady by the response time law (N = X (R + Z)): point{'s' * (len(points) > 1)} "
                       f"{', '.join(map(str, points))}, whose response times are a transient's (queues still filling "
                       "or draining); a longer run.warmup, several responses long, gives steady ones")


def _point_value(v):
    """A point's setting as the summary prints it: '—' where the point leaves it to the scenario (an empty cell
    of a --points file printed 'nan'), a whole number without '.0'."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return int(v) if isinstance(v, float) and v.is_integer() else v


@main.command()
@_scenario_source
@click.option("--limit", "limits", multiple=True, required=True, metavar="'FIGURE OP VALUE'",
              help="a service level every run must meet: 'rt.new_order.p90 <= 5 s', 'cpu_busy <= 80%', "
                   "'device.array.util_pct < 60%' (FIGURE: a column of a run's results, or cpu_busy)")
@click.option("--search", "setting", default="users", show_default=True, metavar="SETTING",
              help="the whole-number setting of the load to search (users for tpcc, sessions for slob)")
@click.option("--from", "start", type=click.IntRange(min=1), default=1, show_default=True, help="the smallest value tried")
@click.option("--to", "stop", type=click.IntRange(min=1), default=100_000, show_default=True,
              help="the largest value tried")
@click.option("--precision", default="2%", show_default=True,
              help="stop when the answer is within this of the first value that breaks a limit (at least 1 apart)")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="a setting fixed for every run")
@click.option("--seed", type=click.IntRange(min=0), help="shortcut for --set run.seed=N (every run uses it)")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="runs at once, on local processes: each round then tries N loads (finer steps, fewer rounds)")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), callback=_a_path, help="also write the answer and every run's figures")
def capacity(scenario_file, profile, workload, limits, setting, start, stop, precision, sets, seed, jobs, json_file):
    """Find the largest load (users) that meets service levels: runs at growing loads, then bisects.

    Every run uses the same seed, so neighbouring loads differ by their load, not by noise. Exits 1
    when even --from breaks a limit, 2 on bad input."""
    from sim import capacity as cp
    from sim.report import table
    from sim.units import UnitError, parse

    _require_scenario(scenario_file, profile, workload)
    lims = [cp.parse_limit(text) for text in limits]
    try:
        frac = parse(precision, "fraction")
    except UnitError as exc:
        raise OltpsimError(f"--precision {precision!r}: {exc}") from None
    if not 0 <= frac < 1:
        raise OltpsimError(f"--precision {precision!r}: expected from 0% up to 100%, e.g. 2%")
    if stop < start:
        raise OltpsimError(f"--to {stop}: below --from {start}; expected at least {start}")
    fixed = _parse_sets(sets)
    if seed is not None:
        given = fixed.get("run.seed")
        if given is not None and parse_scalar(given) != seed:   # as `run`: which one was meant? refuse, never pick one
            raise OltpsimError(f"--seed {seed} and --set run.seed={given}: two different seeds; give one of them "
                               "(--seed N is the same as --set run.seed=N)")
        fixed["run.seed"] = str(seed)
    _refuse_named_twice(fixed, profile, workload)
    fixed.update({k: v for k, v in (("profile", profile), ("workload", workload)) if v is not None})
    _check_output_file("--json", json_file, (scenario_file, profile))

    def shown(p) -> str:
        figures = ", ".join(f"{lim.figure} {lim.shown(cp.figure_value(p.row, lim.figure))}" for lim in lims
                            if p.row.get("status") == "ok")
        verdict = "meets" if p.meets else "breaks: " + "; ".join(p.broke)
        return f"{setting}={p.value}: {figures + ' -> ' if figures else ''}{verdict}"[:200]

    bar: dict = {}   # the progress bar of the run in progress, on a terminal (a run can take minutes)

    def progress(n: int, fraction: float) -> None:
        if bar.get("n") != n:
            from tqdm import tqdm
            bar.update(n=n, bar=tqdm(total=100, desc=f"{setting}={n}", unit="%", leave=False, file=sys.stderr))
        bar["bar"].n = int(100 * fraction)
        bar["bar"].refresh()

    def on_probe(p) -> None:
        if bar:
            bar.pop("bar").close()
            bar.clear()
        click.echo(shown(p), err=True)

    cap = cp.capacity(scenario_file or {}, lims, setting, start=start, stop=stop, precision=frac, overrides=fixed,
                      workers=jobs, on_probe=on_probe, progress=progress if sys.stderr.isatty() and jobs == 1 else None)
    rows = []
    for p in sorted(cap.probes, key=lambda p: p.value):
        ok = p.row.get("status") == "ok"
        top = f"{p.row['busiest']} {p.row['busiest_pct']:.0f}%" if ok and p.row.get("busiest") else ""
        rows.append([p.value, cap.metric_shown(p.row),
                     *(lim.shown(cp.figure_value(p.row, lim.figure)) if ok else "" for lim in lims), top,
                     "yes" if p.meets else "no: " + "; ".join(p.broke)[:90]])
    text = table([setting, cap.metric_label, *(lim.figure for lim in lims), "busiest", "meets"], rows,
                 "rr" + "r" * len(lims) + "ll")
    click.echo("\n".join(line.rstrip() for line in text.splitlines()))
    click.echo(cap.answer())
    if json_file:
        _write("--json", json_file, json.dumps(cp.to_dict(cap), indent=2, default=str, allow_nan=False))
    if cap.best is None:
        sys.exit(1)


def _check_plot(plot_x: str | None, by: tuple[str, ...], varied: list[str]) -> None:
    """--plot and --by name varied settings, checked now, not after the whole sweep has run."""
    for opt, setting in ([("--plot", plot_x)] if plot_x else []) + [("--by", b) for b in by]:
        if setting not in varied:
            raise OltpsimError(f"{opt} {setting}: not a varied setting; varied: {', '.join(varied) or 'none'}")
    if by and not plot_x:   # it only splits the plot's lines: without a plot it would be ignored
        raise OltpsimError(f"--by {by[0]}: only with --plot SETTING (one line of the plot per value of {by[0]})")
    if plot_x in by:
        raise OltpsimError(f"--by {plot_x}: the setting --plot draws along; expected another varied setting: "
                           f"{', '.join(k for k in varied if k != plot_x) or 'none'}")


def _check_metric(metric: str) -> None:
    """--metric names a figure a run can have, checked before the sweep runs (a workload's own
    figures, extra.NAME, are known only from the results: checked again there)."""
    from sim.result import FIGURE_PREFIXES, FIGURES, known_figure, stat_problem

    if problem := stat_problem(metric):   # the figures of an event, a type, a device: known now
        raise OltpsimError(f"--metric {metric}: {problem}")
    if known_figure(metric):
        return
    hint = suggest(metric, FIGURES)
    if not hint and "." not in metric:
        hint = f" (a workload's own figure is named extra.{metric}, if the workload reports one)"
    raise OltpsimError(f"--metric {metric}: no such figure{hint}; expected one of {', '.join(FIGURES)}, or a name "
                       f"under {', '.join(p + 'NAME' for p in FIGURE_PREFIXES)} (e.g. extra.iops, "
                       "wait.log file sync.time_s, device.array.iops)")


@main.command()
def profiles():
    """List the built-in hardware profiles."""
    from sim.hardware.profile import load_profile, profile_names

    for name in profile_names():
        p = load_profile(name)
        click.echo(f"{name:20s} {p.cpu_count:4d} CPUs  {p.description}")


class _ProfileGroup(click.Group):
    """`oltpsim profile t5220` (a profile, not a command) points at `profile show t5220`."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            raise click.UsageError(f"no command {args[0]!r}: to inspect a profile, oltpsim profile show {args[0]}", ctx)
        return super().resolve_command(ctx, args)


@main.group(cls=_ProfileGroup)
def profile():
    """Inspect a hardware profile."""


@profile.command("show")
@click.argument("name")
@click.option("--yaml", "as_yaml", is_flag=True, help="print the whole profile file, every key with its source comment "
                                                       "(the form a profile of your own, or a whole device in a "
                                                       "what-if, is written in)")
def profile_show(name, as_yaml):
    """Print a profile and the figures derived from it."""
    from sim.hardware.profile import profile_file
    from sim.scenario import open_profile
    from sim.units import format_quantity

    p = open_profile(name)
    if as_yaml:
        click.echo(profile_file(name).read_text(), nl=False)
        return
    d = p.derived()
    c, m = p.cpu, p.memory
    click.echo(f"{p.name}: {p.description}  (OS: {p.os})")
    click.echo(f"  cpu: {c.sockets} x {c.model}, {_n(c.cores_per_socket, 'core')} x {_n(c.strands_per_core, 'strand')}, "
               f"{_n(c.pipelines_per_core, 'pipeline')} per core, {format_quantity(c.clock, 'frequency')}, "
               f"LLC {format_quantity(c.llc_size, 'size')} per socket")
    click.echo(f"  cpu_count (strands the OS and Oracle see): {d['cpu_count']}")
    click.echo(f"  pipelines: {d['pipelines']} ({_n(d['strands_per_pipeline'], 'strand')} each)")
    click.echo(f"  peak instruction rate: {d['peak_instruction_rate'] / 1e9:.1f} G instructions/s "
               f"(cpi_issue {c.cpi_issue:g})")
    lat = m.average_latency(c.sockets)
    # (several sockets with a remote latency: the mean over memory interleaved evenly, the profile's two beside it)
    numa = "" if lat == m.latency else (f" (interleaved over {c.sockets} sockets: local {m.latency * 1e9:.0f} ns, "
                                        f"remote {m.remote_latency * 1e9:.0f} ns)")
    click.echo(f"  memory: {format_quantity(m.size, 'size')}, latency {lat * 1e9:.0f} ns = "
               f"{d['memory_latency_cycles']:.0f} cycles{numa}, bandwidth "
               f"{format_quantity(d['memory_bandwidth'], 'bandwidth')}, swap {format_quantity(m.swap, 'size')}")
    for gname, g in p.storage.disk_groups.items():
        rpm = f"{g.disk.rpm * 60:.0f} rpm"   # (most models name theirs already)
        click.echo(f"  disks '{gname}': {g.count} x {g.disk.model} ({'' if rpm in g.disk.model else rpm + ', '}"
                   f"seek {g.disk.avg_seek * 1e3:.1f} ms) on {_n(g.controllers, 'controller')}")
    for aname, a in p.storage.flash_arrays.items():
        click.echo(f"  flash array '{aname}': {_n(a.bricks, 'brick')}, {a.iops_per_brick * a.bricks:,.0f} IOPS ceiling")


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


@main.command("workloads")
def list_workloads():
    """List the workloads and their parameters (plain --set keys: users=64)."""
    import workloads as wl

    for name in wl.names():
        mod = wl.get(name)
        doc = (mod.__doc__ or "").strip().splitlines()[0]
        click.echo(f"{name}: {doc}")
        for key, default, doc in _settings(mod.Params):
            click.echo(f"    {key:24s} {default:>10s}  {doc}")


@main.command("settings")
@click.option("--workload", help="only the settings this workload reads (the others are refused for it)")
@click.option("--set", "sets", multiple=True, metavar="PARAM=VALUE",
              help="with --workload: its parameters (direct=true), to leave out the settings they make unread")
def list_settings(workload, sets):
    """List the database, OS, run and background-job settings (--set database.db_cache='2 GB'), with defaults."""
    import workloads as wl
    from sim.config import Source, build
    from sim.scenario import ScenarioSpec, accepted_run_settings, accepted_settings

    if sets and workload is None:
        raise click.UsageError("--set names the workload's parameters: give --workload too")
    read, note, sections = None, "", ("database", "os", "run", "background")
    if workload is not None:
        module = wl.get(workload)
        if module.Workload.kind != "steady":   # (a job runs beside a steady workload, not beside a batch job)
            sections = sections[:-1]
        params = None
        if sets:
            given = {}
            for item in sets:
                key, eq, value = item.partition("=")
                if not eq or not key:
                    raise click.BadParameter(f"got {item!r}; expected PARAM=VALUE, e.g. direct=true", param_hint="--set")
                if key.removeprefix("params.") in given:   # (as `run`: the later one would silently win)
                    raise OltpsimError(f"--set {key}: given twice; give it once")
                given[key.removeprefix("params.")] = parse_scalar(value)
            params = build(module.Params, given, Source("--set").at("params"))
        read = set(accepted_settings(workload, params)) | set(accepted_run_settings(workload))
        if hasattr(module, "idle") and params is None:
            note = (f"(some of these {workload} reads only for some values of its parameters, which leave parts of "
                    f"the instance idle: workloads/{workload}.py idle(); --set PARAM=VALUE narrows the list)")
    for key, default, doc in _settings(ScenarioSpec):
        section = key.split(".")[0]
        if section in sections and (read is None or key in read or section == "background"):
            click.echo(f"{key:52s} {default:>10s}  {doc}")
    if note:
        click.echo(note)


def _settings(cls: type):
    """(dotted key, default as written in YAML, description) of every field, sections walked into."""
    for key, default, meta in declared(cls):
        yield key, format_setting(default, meta), meta.get("doc", "")


@main.command("experiments")
def list_experiments():
    """List the experiments `oltpsim reproduce` runs."""
    from sim import experiments as ex

    for eid, path in ex.experiment_paths().items():
        e = ex.load_experiment(path)
        click.echo(f"{eid:34s} {_n(len(e.rows), 'row'):>8s}  {'quick ' if e.quick else '      '}{e.title}")


if __name__ == "__main__":  # pragma: no cover
    main()
