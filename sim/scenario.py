"""A scenario: which machine, which workload with which parameters, database and run control.

Scenario YAML:

    profile: t5220              # a built-in profile name or a path to a profile YAML
    hardware: {memory: {size: 64 GB}}   # what-if changes to the profile's own keys (optional)
    workload: tpcc
    params: {users: 64}         # checked against the workload's Params
    database: {block_size: 8 KB}
    os: {quantum: 10 ms}
    run: {warmup: 5 s, target_half_width: 1%}
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import workloads
from sim import units
from sim.config import (ConfigError, OltpsimError, Source, build, declared, dotted, get_path, param, parse_scalar,
                        read_yaml, replace_path, suggest, what_it_is)
from sim.db.instance import DatabaseSpec, check_all_cached_sga, check_devices
from sim.db.px import ParallelSpec
from sim.hardware.profile import HardwareProfile, load_profile
from sim.os.filesystem import PATHS


# "32-bit operating systems support a maximum DB_BLOCK_SIZE value of 16384" (Oracle Database Reference 11.2,
# DB_BLOCK_SIZE)
MAX_BLOCK_SIZE_32 = 16 * 1024


@dataclass(frozen=True, kw_only=True)
class OsSpec:
    quantum: float = param("time slice of the dispatcher (at least 100 us: a hundredth of the shortest any OS "
                           "here gives, and shorter slices only multiply the dispatcher's events)", kind="time",
                           default="10 ms", positive=True, minimum=100e-6)
    filesystem: str = param("I/O path of the datafiles", default="raw", choices=tuple(PATHS))
    redo_filesystem: str = param("I/O path of the online redo logs (raw: the redo device itself)", default="raw",
                                 choices=tuple(PATHS))
    bits: Literal[32, 64] = param("32- or 64-bit kernel", default=64)
    page_replacement: Literal["lru", "fifo"] = param(
        "how the OS page cache (the second cache level under a caching file system) replaces pages: lru, or "
        "fifo as Solaris 7 and earlier do in effect (file pages stay mapped until the two-handed clock's back hand "
        "frees them, handspreadpages = fastscan = 64 MB behind the front hand: only a page referenced in that "
        "short gap survives a pass; sim/os/vm.py)", default="lru", choices=("lru", "fifo"))


STEADY_MAX_TIME = 120.0          # s measured: enough for a 1% interval at the paper's loads in a few seconds of wall
BATCH_MAX_TIME = 30 * 86400.0    # s: a month, far beyond any job the sources time (the longest 16 h 44 min)


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    seed: int = param("seed of every random stream in the run", default=1, minimum=0)
    warmup: float = param("simulated time discarded before measuring (steady-state runs)", kind="time",
                          default="2 s", minimum=0.0)
    batch: float = param("length of one batch for batch means (steady-state runs; at least 1 ms: a batch must "
                         "hold transactions, and the stopping rule's work per batch would dominate a shorter one)",
                         kind="time", default="1 s", positive=True, minimum=1e-3)
    min_batches: int = param("batches before the stopping rule may stop, counted as merged where autocorrelated "
                             "(sim/metrics.py BatchMeans; batches all equal, a zero half-width, stop it only from "
                             "10: below that equal counts are chance; 20, not 10: a run that stopped at 10-29 "
                             "batches covered its mean 88% of the time)", default=20, minimum=2)
    target_half_width: float = param("stop when the 95% CI half-width of throughput is within this fraction",
                                     kind="fraction", default="1%", positive=True)
    settle_writer: bool = param("at the end of the warm-up, the writers start where a long run has them: a "
                                "controller's write-back cache that filled (bytes in above its destage rate) starts "
                                "full (sim/hardware/write_cache.py), and a DBWR whose backlog filled over the "
                                "warm-up's second half (dirtied/s above its writes per busy second; the warm-up goes "
                                "on until it has written) starts at the free-buffer limit it is heading for, each "
                                "followed by another warm-up (sim/db/dbwr.py, catch_up; sim/run.py); the same test "
                                "holds database.log_checkpoint_timeout's writes for a DBWR behind (false: none of "
                                "this, and they start after the warm-up; sim/db/checkpoint.py)", default=True)
    max_time: float | None = param(
        "cap on simulated time: on the measured time of a steady run (omit: 120 s; beside a background job, on its "
        "window alone: the job runs to its end), on the whole of a batch job (omit: 30 days, a guard against a job "
        "that would never end: a job stops when its work is done)",
        kind="time", default=None, positive=True)
    interval: float | None = param("a timeline: the figures of every interval this long, as vmstat 10 and AWR's "
                                   "snapshots show them, a steady run's warm-up flagged at times up to 0, the measured "
                                   "start (sim/timeline.py; omit: none)", kind="time", default=None, positive=True,
                                   minimum=1e-3)

    def cap(self, batch: bool) -> float:
        """run.max_time, or its default for the kind of run: a steady run stops at its precision target or
        after 120 s measured; a batch job runs to its end, which the paper's jobs reach after minutes
        (CTAS) to most of a day (SQL*Loader's conventional path, 16 h 44 min)."""
        if self.max_time is not None:
            return self.max_time
        return BATCH_MAX_TIME if batch else STEADY_MAX_TIME


@dataclass(frozen=True, kw_only=True)
class BackgroundSpec:
    workload: str | None = param("a batch job that starts once the workload's throughput alone is measured and runs "
                                 "beside it to its end: what the job does to the throughput and response times, and "
                                 "how long it takes on a busy system (sim/run.py; omit: none)", default=None)
    params: dict[str, Any] = param("the job's parameters (oltpsim workloads lists them)", default={})


@dataclass(frozen=True, kw_only=True)
class ScenarioSpec:
    profile: str = param("hardware profile name or path")
    hardware: dict[str, Any] = param("what-if changes to the profile's keys, e.g. {memory: {size: 10 GB}}",
                                     default={})
    workload: str = param("workload name")
    name: str = param("a label for reports", default="")
    params: dict[str, Any] = param("the workload's parameters", default={})
    database: DatabaseSpec = param("database configuration", default={})
    os: OsSpec = param("operating-system settings", default={})
    run: RunSpec = param("run control", default={})
    background: BackgroundSpec = param("a batch job beside the workload, e.g. {workload: rman, params: {channels: 8}}",
                                       default={})

    def check(self, src: Source) -> None:
        if self.database.oracle_bits == 64 and self.os.bits == 32:
            raise src.at("database").at("oracle_bits").bad(64, "32: 64-bit Oracle needs a 64-bit kernel (os.bits: 64)")
        if self.os.bits == 32 and self.database.block_size > MAX_BLOCK_SIZE_32:
            raise src.at("database").at("block_size").bad(
                units.format_quantity(self.database.block_size, "size"),
                "at most 16 KB on a 32-bit operating system (os.bits: 32), as Oracle allows")


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """A fully resolved scenario: the spec, the profile it names and the workload's Params."""

    spec: ScenarioSpec
    profile: HardwareProfile
    params: Any
    source: str
    background: Any = None   # the background job's Params (spec.background.workload's), or None

    @property
    def label(self) -> str:
        job = f"+{self.spec.background.workload}" if self.background is not None else ""
        return self.spec.name or f"{self.profile.name}/{self.spec.workload}{job}"

    def describe(self) -> dict:
        """Every input as a dotted key (values in SI units): what a Result records of its run."""
        spec = dataclasses.asdict(self.spec)
        job = ({"background.workload": self.spec.background.workload,
                **dotted("background.params", dataclasses.asdict(self.background))}
               if self.background is not None else {})
        return {"profile": self.profile.name, "workload": self.spec.workload,
                **dotted("hardware", self.spec.hardware), **dotted("params", dataclasses.asdict(self.params)),
                **dotted("database", spec["database"]), **dotted("os", spec["os"]), **dotted("run", spec["run"]), **job}


_SECTIONS = {"hardware": "hardware.memory.size='10 GB'", "params": "params.users=64 (or users=64)",
             "database": "database.db_cache='2 GB'", "os": "os.quantum='10 ms'", "run": "run.seed=7",
             "background": "background.workload=rman"}
TOP_KEYS = ("profile", "workload", "name")   # the scenario's own keys that are not sections


def setting_path(key: str) -> str:
    """The key path a --set / --vary / row setting names: a plain key other than TOP_KEYS is a
    workload parameter (users -> params.users); a dotted one names its path as it is."""
    return key if key.partition(".")[2] or key in TOP_KEYS else f"params.{key}"


def apply_overrides(data: dict, overrides: dict[str, Any], source: str = "<command line>") -> dict:
    """Apply --set style overrides: 'users=64' (a workload parameter) or 'database.db_cache=2 GB'.
    `source` is where the overrides were given, for the errors (an experiment row, a sweep point)."""
    for key, value in overrides.items():
        if not isinstance(key, str) or not key:
            raise Source(source).error(f"got the setting name {key!r}; expected a setting name such as users or "
                                       "database.db_cache")
        if key in _SECTIONS:   # a plain key is a workload parameter, so this would read params.run: say what is meant
            raise Source(source, key).error(f"got {value!r}, but {key} is a section of the scenario, not one "
                                            f"setting; expected one of its keys, e.g. {_SECTIONS[key]}")
        head, _, rest = key.partition(".")
        if rest and head not in _SECTIONS and suggest(head, _SECTIONS):   # 'databse.db_cache': a misspelt section
            raise Source(source, key).error(
                f"got {value!r}, but {head} is not a section of the scenario{suggest(head, _SECTIONS)}; expected "
                f"one of {', '.join(_SECTIONS)} (or a workload parameter, without a section)")
        if rest and head not in _SECTIONS:   # 'mix.new_order': a parameter's part, which would replace the whole value
            raise Source(source, key).error(
                f"got {value!r}, but {head} is not a section of the scenario; a workload parameter is set whole, "
                f"e.g. {head}={{{rest}: {value}, ...}} (oltpsim workloads lists each parameter and its default)")
        data = replace_path(data, setting_path(key), parse_scalar(value, Source(source, key))
                            if isinstance(value, str) else value)
    return data


def open_profile(name_or_path: str | Path, changes: dict | None = None, src: Source | None = None) -> HardwareProfile:
    """load_profile, with a profile path that names no file refused as input (load_profile stats
    the file before reading it, so a missing one would end in a traceback)."""
    if not isinstance(name_or_path, (str, Path)):
        raise OltpsimError(f"profile: got {type(name_or_path).__name__} {name_or_path!r}; expected a built-in profile "
                           "name (oltpsim profiles) or the path of a profile YAML")
    path = Path(name_or_path)
    if path.suffix.lower() in (".yaml", ".yml") and not path.is_file():
        raise OltpsimError(f"{path}: cannot read: {'a folder' if path.is_dir() else 'no such file'}; expected a "
                           f"built-in profile name (oltpsim profiles) or the path of a profile YAML")
    return load_profile(name_or_path, changes, src)


def resolve(data: dict, source: str = "<scenario>") -> Scenario:
    """Check a scenario mapping completely (profile, workload, params, devices) before running."""
    src = Source(source)
    try:
        spec = build(ScenarioSpec, data, src)
    except ConfigError as exc:
        raise _misplaced(exc, data) from None
    try:
        profile = open_profile(spec.profile)
    except OltpsimError as exc:
        raise src.at("profile").error(str(exc)) from None
    if spec.hardware:
        profile = open_profile(spec.profile, spec.hardware, src.at("hardware"))
    try:
        module = workloads.get(spec.workload)
    except OltpsimError as exc:
        raise src.at("workload").error(str(exc)) from None
    params = _workload_params(module, spec, src)
    job, job_params = _background(spec, module, params, profile, src)
    jobs = [(spec, module, params, src)]
    if job is not None:   # (its own checks read its parameters as spec.params, and blame them under background.)
        jobs.append((dataclasses.replace(spec, workload=spec.background.workload, params=spec.background.params),
                     job, job_params, src.at("background")))
    _refuse_unused_settings(data, spec, jobs, src)
    _refuse_unused_run_keys(data, spec, module, profile, src)
    _refuse_a_batch_past_the_cap(data, spec, module, src)
    _refuse_unused_datafile_keys(data, spec, jobs, src)
    _refuse_unused_redo_log_keys(data, spec, _uses(jobs), src)
    _refuse_the_other_kernels_footprint(data, spec, profile, src)
    _refuse_a_remote_latency_on_one_socket(data, profile, src)
    check_devices(spec.database, profile.storage.device_names(), src)
    cached, what = 0.0, []
    for job_spec, mod, job_params_, at in jobs:
        check = getattr(mod, "check_scenario", None)
        if check is not None:
            check(job_spec, profile, job_params_, at)
        all_cached = getattr(mod, "all_cached", None)
        if all_cached is not None:
            size, why = all_cached(job_spec, job_params_)
            cached, what = cached + size, what + [why if at is src else f"background.{why}"]
    if what and spec.database.db_cache is None:   # (the cache holds every workload's data: one SGA)
        check_all_cached_sga(spec.database, cached, " + ".join(what), src)
    return Scenario(spec=spec, profile=profile, params=params, source=source, background=job_params)


def _workload_params(module: Any, spec: ScenarioSpec, src: Source) -> Any:
    """The workload's Params. A parameter of the background job given among them (--set table_size='1 GB', a plain
    key, is the workload's params.table_size) is refused naming where it goes: background.params.table_size."""
    try:
        return build(module.Params, spec.params, src.at("params"))
    except ConfigError as exc:
        raise _misplaced(exc, {"background": {"workload": spec.background.workload}}) from None


def _misplaced(exc: ConfigError, data: dict) -> ConfigError:
    """An unknown key one level off in a YAML says where it goes: a key of the top level indented under a section
    (params.background), a job's parameter beside background.workload (background.table_size, not under params) or
    among the workload's (params.table_size). The keys listed as known there are the wrong section's, and name
    neither."""
    under, _, key = exc.path.rpartition(".")
    if not exc.problem.startswith("unknown key") or not under:
        return exc
    top = {f.name for f in dataclasses.fields(ScenarioSpec)}
    bg = data.get("background")
    job = bg.get("workload") if isinstance(bg, dict) else None
    if key in top and under in top:
        return ConfigError(exc.file, exc.path, f"{exc.problem}; {key} is a key of the scenario's top level, not of "
                                               f"{under}: its indentation")
    if under in ("background", "params") and job in workloads.names() and \
            key in {f.name for f in dataclasses.fields(workloads.get(job).Params)}:
        return ConfigError(exc.file, exc.path, f"{exc.problem}; {key} is a parameter of the background job {job}: "
                                               f"background.params.{key}")
    return exc


def _uses(jobs: list) -> tuple[str, ...]:
    """The parts of the instance that the scenario's workloads drive (INSTANCE_PARTS), each once."""
    return tuple(dict.fromkeys(part for _spec, module, _params, _src in jobs for part in module.USES))


def _background(spec: ScenarioSpec, module: Any, params: Any, profile, src: Source) -> tuple[Any, Any]:
    """The background job's module and Params (None, None without one): a batch job, beside a steady-state
    workload whose throughput it changes (a batch job beside a batch job would have no figure to change). A job
    about the workload's database (RMAN's backup) takes it where its own parameters leave it out (its beside())."""
    bg, at = spec.background, src.at("background")
    if bg.workload is None:
        if bg.params:
            raise at.at("params").bad(bg.params, "a background.workload whose parameters these are (or leave them out)")
        return None, None
    try:
        job = workloads.get(bg.workload)
    except OltpsimError as exc:
        raise at.at("workload").error(str(exc)) from None
    batch = [w for w in workloads.names() if workloads.get(w).Workload.kind == "batch"]
    if job.Workload.kind != "batch":
        raise at.at("workload").bad(bg.workload, f"a batch job that runs to its end ({', '.join(batch)}); "
                                                 f"{bg.workload} runs steadily, as the scenario's workload does")
    if module.Workload.kind != "steady":
        steady = [w for w in workloads.names() if workloads.get(w).Workload.kind == "steady"]
        raise src.at("workload").bad(spec.workload, f"a steady-state workload ({', '.join(steady)}) for the background "
                                                    f"job {bg.workload} to run beside: {spec.workload} is a batch job "
                                                    "itself, with no throughput for the job to change")
    job_params = build(job.Params, bg.params, at.at("params"))
    if hasattr(job, "beside"):
        device = module.database_device(spec, params, profile)   # (None where it is the job's own default)
        job_params = job.beside(job_params, bg.params, spec, module.database_segments(spec, params),
                                None if device == profile.storage.device_names()[0] else device, src)
    return job, job_params


# Without database.db_cache the data is all cached: no datafiles are read through a file system (nor
# kept in its page cache) and there is no DBWR (sim/system.py, sim/db/instance.py), so a value given
# for these would be ignored.
DATAFILE_KEYS = ("database.data_device", "database.datafiles", "database.datafile_size", "database.disk_asynch_io",
                 "database.dbwr_io_slaves", "database.dbwr_max_writes", "database.log_checkpoint_timeout",
                 "database.rollback_size",
                 "os.filesystem", "os.page_replacement")


# The parts of the instance that only some workloads drive, each with the settings only it reads and why a
# workload that does not drive it ignores them. A workload module names the parts it drives in USES.
_PARALLEL_KEYS = tuple(f"database.parallel.{f.name}" for f in dataclasses.fields(ParallelSpec))
INSTANCE_PARTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "parallel": ("runs no parallel statement (no PX server is sized or started)", _PARALLEL_KEYS),
    "redo": ("commits nothing (LGWR writes no redo)", (
        "database.lgwr_instructions_per_write", "database.lgwr_sys_share", "database.redo_log_size",
        "database.redo_log_groups", "os.redo_filesystem")),
    "undo": ("changes no rows through a buffer cache (no undo is written to rollback segments)",
             ("database.rollback_size",)),
    "control_file": ("writes no control file", ("database.control_file_device",)),
    "buffer_cache": ("reads no block through the buffer cache", ("database.db_cache",)),
    # cpu_count sizes the PX defaults (sim/db/px.py), the LRU latch set (sim/db/latches.py lru_children, slob)
    # and CALIBRATE_IO's process count (workloads/calibrate_io.py); tpcc reads none of these, and rman/sqlldr only
    # print the PX parameters it derives (as database.parallel.*, refused for them)
    "cpu_count": ("sizes nothing by cpu_count (no PX server, LRU latch set or I/O process count)",
                  ("database.cpu_count",)),
    "datafiles": ("reads and writes its data on a path of its own, not through datafiles and DBWR", DATAFILE_KEYS),
}




def _default(cls: type, dotted_key: str) -> Any:
    return next(d for k, d, _m in declared(cls) if k == dotted_key)


def accepted_settings(workload: str, params: Any = None) -> list[str]:
    """The database and os settings a workload's run reads: all of them but those of the instance
    parts it does not drive (INSTANCE_PARTS), and, given its Params, those of the parts they leave
    idle (the module's idle(params))."""
    module = workloads.get(workload)
    idle = module.idle(params) if params is not None and hasattr(module, "idle") else {}
    uses = tuple(u for u in module.USES if u not in idle)
    unused = {k for part, (_why, keys) in INSTANCE_PARTS.items() if part not in uses for k in keys}
    return [k for k, _d, _m in declared(ScenarioSpec) if k.split(".")[0] in ("database", "os") and k not in unused]


def _read_beside(jobs: list) -> set[str]:
    """The settings a background job reads of the workload's database, whatever parts either drives (its
    module's READS: RMAN backs up the workload's database in files of database.datafile_size)."""
    return {key for _spec, mod, _params, _at in jobs[1:] for key in getattr(mod, "READS", ())}


def _refuse_unused_settings(data: dict, spec: ScenarioSpec, jobs: list, src: Source) -> None:
    """A database or os setting no workload of the scenario reads would change nothing: refused, with the
    settings they do read (`oltpsim settings --workload NAME` lists them; a value equal to the default,
    as `oltpsim settings` lists it, is no change). A part a workload drives may be left idle by its
    parameters (the module's idle(params): sqlldr's direct path commits nothing): its settings are
    refused too, naming the parameter. `jobs`: (spec, module, params, src) of the workload and of its
    background job, if any."""
    names = [job_spec.workload for job_spec, *_rest in jobs]
    idles = [(job_spec.workload, module, module.idle(params) if hasattr(module, "idle") else {})
             for job_spec, module, params, _src in jobs]
    who = " and ".join(names)
    read = _read_beside(jobs)
    for part, (why, keys) in INSTANCE_PARTS.items():
        users = [(name, idle) for name, module, idle in idles if part in module.USES]
        if any(part not in idle for _name, idle in users):
            continue
        # a workload may say it in its own terms; of two, each does what the part's own reason says
        which = f"which {getattr(idles[0][1], 'WHY_NOT', {}).get(part, why)}" if len(jobs) == 1 else f"each {why}"
        for key in keys:
            given, value = get_path(data, key)
            if not given or key in read or _built(spec, key) == _default(ScenarioSpec, key):
                continue
            section = key.split(".")[0]
            others = [w for w in workloads.names() if part in workloads.get(w).USES]
            accepted = dict.fromkeys(k for job_spec, _m, params, _s in jobs
                                     for k in accepted_settings(job_spec.workload, params) if k.startswith(section + "."))
            # (no 'did you mean': the key is a real setting, only not one this workload reads; a typo is
            # refused before, by build, as an unknown key)
            if users:   # driven, but left idle by each workload's parameters that drives it
                name, idle = users[0]
                at = "params" if name == spec.workload else "background.params"
                raise src.at(key).bad(
                    value, f"no {key} for workload {name} with {at}.{idle[part]}: the setting would change "
                    f"nothing; leave it out, or change that parameter")
            # (beside a job, both workloads' lists: `settings --workload tpcc` alone has no rman's control file)
            listed = " and ".join(f"--workload {n}" for n in names) + (", together" if len(names) > 1 else "")
            raise src.at(key).bad(
                value, f"no {key} for workload{'s' * (len(jobs) > 1)} {who}, {which}: the setting would change "
                f"nothing (it acts only in {', '.join(others)}); leave it out. The {section} settings {who} "
                f"read{'s' * (len(jobs) == 1)} (oltpsim settings {listed}): {', '.join(accepted)}")


# The run settings only a steady-state run reads (sim/run.py _run_steady): a batch job runs to its end or
# run.max_time (_run_batch), so these would change nothing for it.
STEADY_RUN_KEYS = ("run.warmup", "run.batch", "run.min_batches", "run.target_half_width", "run.settle_writer")


def _has_dbwr(spec: ScenarioSpec, uses: tuple[str, ...]) -> bool:
    """Whether DBWR writes anything: only for a workload whose datafiles sit behind a buffer cache of
    database.db_cache (USES 'datafiles'; sim/system.py, sim/db/instance.py)."""
    return "datafiles" in uses and spec.database.db_cache is not None


def _has_write_cache(profile) -> bool:
    """Whether a disk group of the profile sits behind a controller's write-back cache (write_cache_size)."""
    return any(g.write_cache_size is not None for g in profile.storage.disk_groups.values())


def _refuse_unused_run_keys(data: dict, spec: ScenarioSpec, module: Any, profile, src: Source) -> None:
    """A run setting the run never reads would change nothing: refused (a value equal to the default,
    as `oltpsim settings` lists it, is no change). A batch job reads only run.seed, run.max_time and run.interval;
    run.settle_writer acts only on a DBWR and on a controller's write-back cache."""
    steady = module.Workload.kind == "steady"
    for key in STEADY_RUN_KEYS:
        given, value = get_path(data, key)
        if not given or _built(spec, key) == _default(ScenarioSpec, key):
            continue
        if not steady:
            raise src.at(key).bad(
                value, f"no {key} for workload {spec.workload}, a batch job: it runs to its end or run.max_time, "
                "with no warm-up or batches, so the setting would change nothing; leave it out. The run settings "
                f"{spec.workload} reads: run.seed, run.max_time, run.interval")
        if key == "run.settle_writer" and not _has_dbwr(spec, module.USES) and not _has_write_cache(profile):
            why = ("no database.db_cache: the data is all cached" if "datafiles" in module.USES
                   else f"workload {spec.workload} writes no datafile through DBWR")
            raise src.at(key).bad(
                value, f"no {key} here ({why}, and profile {profile.name} has no controller write-back cache): it "
                "acts only on a DBWR that falls behind in the warm-up and on a write cache that fills, so it "
                "would change nothing; leave it out" + (", or give database.db_cache"
                                                        if "datafiles" in module.USES else ""))


def _refuse_a_batch_past_the_cap(data: dict, spec: ScenarioSpec, module: Any, src: Source) -> None:
    """A steady run measures whole batches: one longer than run.max_time ran past the cap it was given.
    The key given is blamed (run.batch if both are)."""
    run, fmt = spec.run, (lambda t: units.format_quantity(t, "time"))
    cap = run.cap(batch=False)
    if module.Workload.kind != "steady" or run.batch <= cap * (1 + 1e-12):
        return
    given, value = get_path(data, "run.batch")
    if given or run.max_time is None:
        default = "" if run.max_time is not None else ", its default"
        raise src.at("run.batch").bad(value, f"at most run.max_time ({fmt(cap)}{default}): a run measures whole "
                                             "batches, so a longer one runs past the cap")
    raise src.at("run.max_time").bad(get_path(data, "run.max_time")[1],
                                     f"at least run.batch ({fmt(run.batch)}, its default): a run measures whole "
                                     "batches; or give a shorter run.batch")


def accepted_run_settings(workload: str) -> list[str]:
    """The run settings a workload's runs may read: all for a steady-state run, seed and max_time for a
    batch job (run.settle_writer further needs a DBWR: database.db_cache, for a workload with datafiles)."""
    module = workloads.get(workload)
    keys = [k for k, _d, _m in declared(ScenarioSpec) if k.startswith("run.")]
    if module.Workload.kind == "steady":
        return [k for k in keys if k != "run.settle_writer" or "datafiles" in module.USES]
    return [k for k in keys if k not in STEADY_RUN_KEYS]


def _built(spec: ScenarioSpec, dotted_key: str) -> Any:
    obj: Any = spec
    for part in dotted_key.split("."):
        obj = getattr(obj, part)
    return obj


def _refuse_unused_redo_log_keys(data: dict, spec: ScenarioSpec, uses: tuple[str, ...], src: Source) -> None:
    """The size of the online logs acts in two places: a log switch starts a checkpoint of DBWR's
    changed blocks (which DBWR writes only for a workload whose datafiles sit behind a buffer cache of
    database.db_cache: USES 'datafiles'), and a buffered redo file system reads back a partial last
    page within the circle of logs (sim/os/filesystem.py LogFile). With neither, database.redo_log_size
    (and redo_log_groups, which only multiplies it) moves only where the logs wrap, one seek per circle:
    refused as a setting that does not do what it is set for."""
    db = spec.database
    path = PATHS[spec.os.redo_filesystem]
    checkpoints = "datafiles" in uses and db.db_cache is not None
    if db.redo_log_size is not None and not checkpoints and not (path.caches and not path.direct_writes):
        why = ("without a buffer cache size the data is all cached and there is no DBWR" if "datafiles" in uses
               else f"workload {spec.workload} changes no block DBWR writes")
        raise src.at("database").at("redo_log_size").bad(
            get_path(data, "database.redo_log_size")[1],
            f"no database.redo_log_size here (os.redo_filesystem {spec.os.redo_filesystem}"
            f"{'' if db.db_cache is not None else ', no database.db_cache'}): "
            f"a log switch checkpoints DBWR's changed blocks, and {why}; the logs' size matters to the redo path "
            "only on a buffered file system (its appends read back partial pages within the logs; elsewhere it "
            "moves only where the logs wrap, one seek per circle). "
            + ("Give database.db_cache, or leave this key out" if "datafiles" in uses else "Leave this key out"))
    if db.redo_log_size is None and get_path(data, "database.redo_log_groups")[0] \
            and db.redo_log_groups != _default(ScenarioSpec, "database.redo_log_groups"):
        raise src.at("database").at("redo_log_groups").bad(
            db.redo_log_groups, "no database.redo_log_groups without database.redo_log_size: the groups only "
            "make a circle of logs of that size (give database.redo_log_size, or leave this key out)")


def _refuse_a_remote_latency_on_one_socket(data: dict, profile, src: Source) -> None:
    """A what-if on the remote latency of a one-socket machine changes nothing: all memory is local (a profile of
    several sockets what-iffed down to one keeps its figure, unused, as the machine keeps its interconnect)."""
    given, value = get_path(data, "hardware.memory.remote_latency")
    if given and profile.cpu.sockets == 1:
        raise src.at("hardware.memory.remote_latency").bad(
            value, "no remote_latency on one socket (cpu.sockets: 1): all memory is the socket's own, so it would "
                   "change nothing")


def _refuse_the_other_kernels_footprint(data: dict, spec: ScenarioSpec, profile, src: Source) -> None:
    """Where a profile gives the kernel's memory for each flavour (memory.kernel and kernel_64), a run
    uses the one of its os.bits: a hardware what-if on the other would change nothing (sim/os/vm.py)."""
    if profile.memory.kernel_64 is None:
        return
    unused = "kernel" if spec.os.bits == 64 else "kernel_64"
    given, value = get_path(data, f"hardware.memory.{unused}")
    # (the profile's own value written out is no change)
    if given and getattr(profile.memory, unused) != getattr(open_profile(spec.profile).memory, unused):
        used = "kernel_64" if unused == "kernel" else "kernel"
        raise src.at(f"hardware.memory.{unused}").bad(
            value, f"no hardware.memory.{unused} with os.bits {spec.os.bits}: this profile gives the {spec.os.bits}-bit "
            f"kernel's memory as memory.{used} (set hardware.memory.{used}, or os.bits "
            f"{32 if spec.os.bits == 64 else 64})")


def _refuse_unused_datafile_keys(data: dict, spec: ScenarioSpec, jobs: list, src: Source) -> None:
    """A datafile setting (DATAFILE_KEYS) without database.db_cache would change nothing: refused (the default
    written out, as `oltpsim settings` lists it, is no change to ignore), unless a background job reads it (its
    module's READS: RMAN beside a workload backs up its database in files of database.datafile_size)."""
    if spec.database.db_cache is not None:
        return
    read = _read_beside(jobs)
    for key in DATAFILE_KEYS:
        given, value = get_path(data, key)
        if given and key not in read and _built(spec, key) != _default(ScenarioSpec, key):
            raise src.at(key).bad(
                value, f"no {key} without database.db_cache: with no buffer cache size the data "
                "is all cached, no datafile is read or written and there is no DBWR, so it would change nothing "
                "(give database.db_cache, or leave this key out)")


def profile_beside(data: Any, folder: Path) -> Any:
    """A mapping whose `profile` is a relative path to a profile YAML names the one beside the file the mapping
    was read from (`folder`), wherever oltpsim runs (it was looked for in the working folder)."""
    name = data.get("profile") if isinstance(data, dict) else None
    if isinstance(name, str) and Path(name).suffix.lower() in (".yaml", ".yml") and not Path(name).is_absolute():
        return {**data, "profile": str(folder / name)}
    return data


def load(path: str | Path | None = None, overrides: dict[str, Any] | None = None, **fields) -> Scenario:
    """Load a scenario YAML (or start from `fields`), apply overrides, and resolve it."""
    data: dict = {}
    source = "<command line>"
    if path is not None and not isinstance(path, (str, Path)):   # a notebook's slip: say so, not a TypeError deep down
        raise OltpsimError(f"scenario.load: path: got {type(path).__name__} {path!r}; expected the path of a scenario "
                           "YAML or None (a scenario mapping goes to scenario.resolve(data))")
    if overrides is not None and not (isinstance(overrides, dict) and all(isinstance(k, str) for k in overrides)):
        raise OltpsimError(f"scenario.load: overrides: got {overrides!r}; expected a mapping of setting names to "
                           "values, e.g. {'users': 64, 'database.db_cache': '2 GB'}")
    raw: dict = {}
    if path is not None:
        raw = read_yaml(path)
        source = str(path)
        if not isinstance(raw, dict):
            raise OltpsimError(f"{path}: got {what_it_is(raw)}; expected a mapping with profile, workload, params, ...")
        data = raw = profile_beside(raw, Path(path).parent)
    for k, v in fields.items():
        if v is not None:
            if k in (overrides or {}):   # --profile t5220 with --set profile=t5440: which was meant? refuse, never pick
                raise OltpsimError(f"--{k} {v} and --set {k}={overrides[k]}: the {k} given twice; give it once")
            data = replace_path(data, k, v)
    data = apply_overrides(data, overrides or {})
    try:
        return resolve(data, source)
    except ConfigError as exc:
        # a value given beside the file (--set, --profile) is blamed on the command line, not on a file without it
        given = [k for k, v in fields.items() if v is not None] + [setting_path(k) for k in overrides or {}]
        if path is not None and any(given_beside(exc.path, g, raw) for g in given):
            raise ConfigError("<command line>", exc.path, exc.problem) from None
        raise


def read_mapping(scenario: str | Path | dict, caller: str) -> tuple[dict, str]:
    """A scenario YAML path or mapping, unresolved, and its name for errors: for a sweep or a search, which
    set their own values on it before resolving."""
    if isinstance(scenario, dict):
        return dict(scenario), "<scenario>"
    if not isinstance(scenario, (str, Path)):
        raise OltpsimError(f"{caller}: scenario: got {type(scenario).__name__} {scenario!r}; expected the path of a "
                           "scenario YAML or a scenario mapping")
    data = read_yaml(scenario)
    if not isinstance(data, dict):
        raise OltpsimError(f"{scenario}: got {what_it_is(data)}; expected a mapping with profile, workload, params, ...")
    return profile_beside(data, Path(scenario).parent), str(scenario)


def blame_given(exc: ConfigError, raw: dict, overrides: dict) -> ConfigError:
    """An error about a setting given beside the scenario (--set) is blamed on the command line, as `load` does."""
    if any(given_beside(exc.path, setting_path(k), raw) for k in overrides):
        return ConfigError("<command line>", exc.path, exc.problem)
    return exc


def given_beside(error_path: str, key: str, raw: dict) -> bool:
    """Whether an error at `error_path` is about `key`, given beside the file: at it or inside it, or
    inside a mapping below the scenario's sections that the file has nothing of (a disk group that a
    --set adds or misspells). A whole section the file leaves out is not enough: its defaults may be
    what clashes with the file."""
    if error_path == key or error_path.startswith((key + ".", key + "[")):
        return True
    shared = []
    for a, b in zip(error_path.split("."), key.split(".")):
        if a != b:
            break
        shared.append(a)
    return len(shared) >= 2 and not get_path(raw, ".".join(shared))[0]
