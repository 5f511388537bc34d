"""Random scenarios, short runs: whatever a user combines, oltpsim either refuses it with an
OltpsimError (a message naming the setting) or runs it to a result whose figures are sane
(utilisations within 0-100%, vmstat's columns adding to 100, TPM or elapsed time positive and
finite) and whose text report and pandas row render. An exception of any other kind is a bug
(a random run found CALIBRATE_IO failing on every disk volume this way). Derandomized: the same
examples in every run of the suite."""

from __future__ import annotations

import math

import pytest
from hypothesis import event, given, settings, strategies as st

from sim import report, scenario
from sim.config import OltpsimError
from sim.hardware.profile import load_profile, profile_names
from sim.run import run

FILESYSTEMS = ["raw", "quick_io", "cached_quick_io", "vxfs_buffered", "vxfs_direct", "ufs_buffered", "ufs_direct",
               "linux_buffered"]
STEADY = {"run.max_time": "2 s", "run.warmup": "0.5 s", "run.batch": "0.5 s", "run.min_batches": 2}
BATCH = {"run.max_time": "20 s"}    # a batch job reads only run.seed and run.max_time


def _maybe(draw, p: dict, key: str, values: list) -> None:
    if draw(st.booleans()):
        p[key] = draw(st.sampled_from(values))


@st.composite
def tpcc(draw) -> tuple[str, str, dict]:
    p = {"users": draw(st.sampled_from([1, 3, 16, 64, 400])),
         "think_time": draw(st.sampled_from(["0 s", "20 ms", "2 s"])), "keying_time": "0 s"}
    _maybe(draw, p, "warehouses", [1, 7, 60])
    _maybe(draw, p, "sessions", [1, 8])
    _maybe(draw, p, "users_on_host", [True])
    if draw(st.booleans()):
        p["database.db_cache"] = draw(st.sampled_from(["2 MB", "64 MB", "1 GB"]))
        _maybe(draw, p, "os.filesystem", FILESYSTEMS)
        _maybe(draw, p, "database.disk_asynch_io", [True, False])
        _maybe(draw, p, "database.dbwr_io_slaves", [1, 20])
        _maybe(draw, p, "database.dbwr_max_writes", [1, 8])
        _maybe(draw, p, "database.redo_log_size", ["2 MB", "200 MB"])
        _maybe(draw, p, "database.log_checkpoint_timeout", ["1 s", "1800 s"])
        _maybe(draw, p, "database.rollback_size", ["20 MB"])
        _maybe(draw, p, "database.datafile_size", ["500 MB"])
        _maybe(draw, p, "database.block_size", ["2 KB", "8 KB"])   # (all cached, the block size changes nothing)
    _maybe(draw, p, "os.redo_filesystem", FILESYSTEMS)
    return draw(st.sampled_from(profile_names())), "tpcc", p


@st.composite
def batch_or_io(draw, names=("slob", "calibrate_io", "create_index", "ctas", "rman", "sqlldr")) -> tuple[str, str, dict]:
    profile = draw(st.sampled_from(profile_names()))
    device = st.sampled_from(load_profile(profile).storage.device_names())
    workload = draw(st.sampled_from(names))
    if workload == "slob":
        p = {"sessions": draw(st.sampled_from([1, 24])), "schema_size": "5 GB", "device": draw(device),
             "read_path": draw(st.sampled_from(["sga", "direct"]))}
    elif workload == "calibrate_io":
        p = {"num_physical_disks": draw(st.sampled_from([1, 8])), "database_size": "5 GB", "device": draw(device),
             "level_time": "0.1 s"}
    elif workload in ("create_index", "ctas"):
        dev = ("table_device", "index_device") if workload == "create_index" else ("source_device", "target_device")
        p = {"table_size": "200 MB", dev[0]: draw(device), dev[1]: draw(device)}
        _maybe(draw, p, "dop", [1, 8])
    elif workload == "rman":
        p = {"channels": draw(st.sampled_from([1, 4])), "datafiles_mb": [50.0, 120.0],
             "datafile_device": draw(device), "backup_device": draw(device)}
        _maybe(draw, p, "section_size", ["32 MB"])
    else:
        p = {"data_size": "100 MB", "direct": draw(st.booleans()), "input_device": draw(device),
             "table_device": draw(device)}
    return profile, workload, p


SMALL = {"create_index": {"table_size": "20 MB"}, "ctas": {"table_size": "50 MB"}, "rman": {"datafiles_mb": [40.0, 10.0]},
         "sqlldr": {"data_size": "20 MB"}}


@st.composite
def beside_a_job(draw) -> tuple[str, str, dict]:
    """A light steady workload (a few users who think, or a few SLOB sessions) with a random batch job beside it."""
    profile, job, p = draw(batch_or_io(names=("calibrate_io", "create_index", "ctas", "rman", "sqlldr")))
    p.update(SMALL.get(job, {}))   # (a job beside a workload simulates the workload's events all along: smaller)
    if draw(st.booleans()):
        workload, own = "tpcc", {"users": draw(st.sampled_from([1, 8])), "keying_time": "0 s",
                                 "think_time": draw(st.sampled_from(["20 ms", "1 s"]))}
    else:
        workload, own = "slob", {"sessions": draw(st.sampled_from([1, 4])), "schema_size": "5 GB"}
    return profile, workload, {**own, "background.workload": job, **{f"background.params.{k}": v for k, v in p.items()}}


def _sane(res) -> None:
    assert res.status in ("ok", "timeout", "out_of_memory"), res.status
    if res.status == "out_of_memory":
        return
    idle, usr, sys_ = res.cpu
    assert min(res.cpu) >= -1e-9 and idle + usr + sys_ == pytest.approx(100.0, abs=0.5)
    assert res.run_queue >= 0
    for name, dev in res.devices.items():
        assert -1e-9 <= dev["util_pct"] <= 100.0 + 1e-6, (name, dev)
        assert -1e-9 <= dev["controller_util_pct"] <= 100.0 + 1e-6, (name, dev)
        assert dev["reads_per_s"] >= 0 <= dev["writes_per_s"]
        assert dev["reads_per_s"] + dev["writes_per_s"] == pytest.approx(dev["iops"]), (name, dev)
    assert -1e-9 <= res.extra.get("lgwr_busy_pct", 0.0) <= 100.0 + 1e-6
    if res.tpm is not None:
        assert res.tpm >= 0 and math.isfinite(res.tpm)
    if res.elapsed is not None:
        assert res.elapsed > 0 and math.isfinite(res.elapsed)
    job = res.extra.get("background")
    if job is not None:   # beside a job: the workload's figures alone, its figures beside the job, the job's own
        assert res.tpm is not None and res.extra["tpm_alone"] >= 0 and job["started_s"] == res.extra["alone_measured_s"]
        assert job.get("elapsed_s", res.elapsed) == pytest.approx(res.elapsed)   # (CALIBRATE_IO's gives none)


def _run_or_refuse(profile: str, workload: str, params: dict) -> None:
    short = STEADY if workload in ("tpcc", "slob") else BATCH
    try:
        sc = scenario.load(None, {**params, **short}, profile=profile, workload=workload)
    except OltpsimError as e:
        assert str(e).strip()
        event("refused")
        return
    res = run(sc)
    event(f"{workload}: {res.status}")
    _sane(res)
    assert report.full(res).startswith("==")          # the text report and the pandas row render too
    assert len(res.to_frame()) == 1


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(tpcc())
def test_any_tpcc_scenario_is_refused_clearly_or_runs_to_a_sane_result(case):
    _run_or_refuse(*case)


@settings(max_examples=15, deadline=None, database=None, derandomize=True)
@given(beside_a_job())
def test_any_job_beside_a_workload_is_refused_clearly_or_runs_to_a_sane_result(case):
    _run_or_refuse(*case)


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(batch_or_io())
def test_any_batch_or_io_scenario_is_refused_clearly_or_runs_to_a_sane_result(case):
    _run_or_refuse(*case)
