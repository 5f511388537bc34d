"""Sweeps: one row per point x replication, common random numbers, confidence intervals,
nothing lost under SIGKILL, the same numbers on Dask, failing points recorded."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from sim import sweep as sw
from sim.config import OltpsimError
from sim.result import figure_unit

ROOT = Path(__file__).resolve().parents[1]
TINY_RUN = {"warmup": "0.2 s", "batch": "0.2 s", "min_batches": 2, "max_time": "0.4 s"}
BASE = {"profile": "t5220", "workload": "tpcc", "params": {"users": 2, "think_time": "0 s", "keying_time": "0 s"},
        "database": {"redo_device": "array"}, "run": TINY_RUN}
# Figures that must agree bit for bit between two runs of the same point and seed.
FIGURES = ["tpm", "cpu_idle", "cpu_usr", "cpu_sys", "run_queue", "events", "rt.new_order.mean"]


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """users x name, 2 replications, on a local process pool of one worker."""
    out = tmp_path_factory.mktemp("grid")
    return sw.sweep(BASE, vary={"users": [2, 8], "name": ["a", "b"]}, replications=2, out=out,
                    executor="process", workers=1, progress=False)


def test_one_row_per_point_and_replication_with_inputs_as_columns(grid):
    t = grid.table
    assert len(t) == 4 * 2 and grid.computed == 8 and grid.reused == 0
    assert sorted(zip(t["point"], t["replication"])) == [(p, r) for p in range(4) for r in range(2)]
    assert (t["status"] == "ok").all() and (t["tpm"] > 0).all()
    assert list(t["users"]) == list(t["in.params.users"])          # the varied setting and the resolved input
    assert (t["in.database.redo_device"] == "array").all() and (t["in.run.max_time"] == 0.4).all()
    assert t.groupby("users")["tpm"].mean()[8] > 2 * t.groupby("users")["tpm"].mean()[2]
    csv = pd.read_csv(grid.out / "results.csv")
    parquet = pd.read_parquet(grid.out / "results.parquet")
    assert len(csv) == len(parquet) == 8 and list(parquet.columns) == list(t.columns)
    np.testing.assert_array_equal(parquet["tpm"], t["tpm"])


def test_common_random_numbers_across_points(grid):
    t = grid.table
    seeds = t.groupby("replication")["seed"].unique()
    assert [len(s) for s in seeds] == [1, 1]                          # one seed per replication, at every point
    assert seeds[0][0] == 1 and seeds[1][0] == sw.replication_seed(1, 1) != 1
    # Points that differ only in their label draw the same numbers and give the same figures.
    a, b = (t[t["name"] == n].sort_values(["users", "replication"]) for n in ("a", "b"))
    assert a[FIGURES].to_numpy().tolist() == b[FIGURES].to_numpy().tolist()
    # ... while the two replications of a point differ.
    assert a["tpm"].iloc[0] != a["tpm"].iloc[1]


def test_the_same_point_gives_the_same_numbers_in_this_process(grid, tmp_path):
    again = sw.sweep(BASE, vary={"users": [8], "name": ["a"]}, replications=2, out=tmp_path, executor="serial",
                     progress=False).table
    first = grid.table[(grid.table["users"] == 8) & (grid.table["name"] == "a")]
    assert again[FIGURES].to_numpy().tolist() == first[FIGURES].to_numpy().tolist()


def test_confidence_interval_is_student_t_across_replications():
    table = pd.DataFrame({"point": [0, 0, 0, 1], "replication": [0, 1, 2, 0], "users": [8, 8, 8, 16],
                          "status": ["ok", "ok", "ok", "ok"], "tpm": [1.0, 2.0, 3.0, 5.0]})
    s = sw.summarize(table, ["users"], ["tpm"])
    assert s["tpm"].tolist() == [2.0, 5.0]
    assert s["tpm.ci95"][0] == pytest.approx(4.302653 * 1.0 / np.sqrt(3), rel=1e-6)   # t(0.975, 2) s / sqrt(n)
    assert np.isnan(s["tpm.ci95"][1])                                                   # one replication: no interval
    two = sw.summarize(table.assign(point=[0, 0, 1, 1]), ["users"], ["tpm"])         # 1, 2 and 3, 5
    assert two["tpm.ci95"].tolist() == pytest.approx([12.706205 * np.sqrt(0.5) / np.sqrt(2), 12.706205 * np.sqrt(2) / np.sqrt(2)])


def test_a_points_busiest_is_the_one_most_of_its_runs_found_busiest_with_their_mean():
    """Point 0, three replications: two found the strands busiest (96% and 98%), one LGWR (97%): the strands, at
    97% (the two that named them), beside busiest_pct's own mean over all three (97) with its interval. Point 1,
    a tie (LGWR 80, strands 95): the busier. Point 2: failed runs and a blank (read back from CSV) name nothing."""
    table = pd.DataFrame({"point": [0, 0, 0, 1, 1, 2, 2], "users": [64] * 3 + [96] * 2 + [8] * 2,
                          "status": ["ok"] * 5 + ["ok", "error"], "tpm": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, None],
                          "busiest": ["strands (mpstat)", "LGWR", "strands (mpstat)", "LGWR", "strands (mpstat)",
                                      float("nan"), None],
                          "busiest_pct": [96.0, 97.0, 98.0, 80.0, 95.0, 0.0, None], "message": [""] * 7})
    s = sw.summarize(table, ["users"], ["tpm", "busiest_pct"])
    assert (s["busiest"][0], s["busiest.pct"][0]) == ("strands (mpstat)", 97.0)
    assert s["busiest_pct"][0] == 97.0 and s["busiest_pct.ci95"][0] == pytest.approx(4.302653 / np.sqrt(3))
    assert (s["busiest"][1], s["busiest.pct"][1]) == ("strands (mpstat)", 95.0)
    assert s["busiest_pct"][1] == 87.5   # the metric: both runs
    assert pd.isna(s["busiest"][2]) and pd.isna(s["busiest.pct"][2])


def test_files_have_no_index_column_and_parquet_takes_columns_of_mixed_types(grid):
    assert [f.name for f in grid.files] == ["results.csv", "results.parquet", "summary.csv"]
    assert pd.read_csv(grid.out / "results.csv").columns[0] == "point"
    assert list(pd.read_csv(grid.out / "summary.csv").columns[:3]) == ["point", "users", "name"]
    mixed = pd.DataFrame({"a": [8, "8 GB", None], "b": ["x", "y", None], "c": [1.0, float("nan"), 2.0]})
    safe = sw._arrow_safe(mixed)
    assert safe["a"].tolist()[:2] == ["8", "8 GB"] and pd.isna(safe["a"][2])   # int and text: text; a gap stays one
    assert safe["b"].equals(mixed["b"]) and safe["c"].equals(mixed["c"])   # one type: as it was


def test_each_run_records_where_it_ran_and_its_cpu_time(grid):
    records = [json.loads(line) for line in (grid.out / "points.jsonl").read_text().splitlines()]
    assert len(records) == 8 and all(r["worker"].count(":") == 1 for r in records)
    assert all(0.0 < r["cpu_time"] <= 2 * r["result"]["wall_time"] + 0.01 for r in records)   # the run's, not the worker's


def test_the_default_folder_is_named_for_the_scenario(tmp_path):
    assert sw.default_out({"name": "cache", "profile": "t5220", "workload": "tpcc"}) == Path("sweep-cache")
    assert sw.default_out({"profile": "t5220", "workload": "tpcc"}) == Path("sweep-t5220-tpcc")
    assert sw.default_out(tmp_path / "what-if.yaml") == Path("sweep-what-if")


@pytest.mark.parametrize("workload, columns, primary", [
    ("tpcc", {"tpm": 1.0, "elapsed": None}, "tpm"),
    ("rman", {"tpm": None, "elapsed": 5.0}, "elapsed"),
    ("slob", {"tpm": 6e4, "extra.iops": 800.0}, "extra.iops"),           # IOPS, not logical reads a minute
    ("calibrate_io", {"elapsed": 3.6, "extra.iops": 5e3}, "extra.iops"),  # max_iops, not the ramp's length
])
def test_a_sweep_summarises_the_workloads_own_figure(workload, columns, primary):
    table = pd.DataFrame([{"in.workload": workload, **columns}])
    assert sw.primary_metric(table) == primary
    mixed = pd.DataFrame([{"in.workload": "slob", "tpm": 6e4, "extra.iops": 800.0},
                          {"in.workload": "tpcc", "tpm": 1.0, "extra.iops": None}])
    assert sw.primary_metric(mixed) == "tpm"    # two workloads: the figure they share
    assert sw.primary_metric(pd.DataFrame([{"elapsed": 5.0}])) == "elapsed"   # neither workload nor TPM known
    # no run gave figures (every point out of memory): the workload's own figure still names the column
    # (the TPC-C sweep whose every point ran out of memory headed its column 'elapsed')
    failed = pd.DataFrame([{"in.workload": workload, "status": "out_of_memory", **{k: None for k in columns}}])
    assert sw.primary_metric(failed) == primary
    if primary.startswith("extra."):   # a column no run made is not named: the sweep's metric check would refuse it
        assert sw.primary_metric(failed.drop(columns=[primary])) != primary


def test_summary_and_plot_show_the_means_with_their_intervals(grid):
    s = grid.summary()
    fig = grid.plot("users", by="name")
    lines = fig.axes[0].lines
    assert len(fig.axes[0].containers) == 2                                           # one line per name
    means = s[s["name"] == "a"].sort_values("users")["tpm"].tolist()
    assert list(lines[0].get_ydata()) == means and list(lines[0].get_xdata()) == [2, 8]
    with pytest.raises(OltpsimError, match="not a varied setting"):
        grid.plot("warehouses")


def test_a_second_call_reuses_every_finished_run(grid):
    again = sw.sweep(BASE, vary={"users": [2, 8], "name": ["a", "b"]}, replications=2, out=grid.out,
                     executor="serial", progress=False)
    assert again.computed == 0 and again.reused == 8
    pd.testing.assert_frame_equal(again.table, grid.table)


def test_the_summary_file_holds_the_figure_asked_for_beside_the_workloads(grid):
    """`oltpsim sweep --metric X` printed and plotted X while summary.csv held only TPM and vmstat's columns."""
    summ = pd.read_csv(sw.write_summary(grid, "throughput_per_s"))
    assert {"throughput_per_s", "throughput_per_s.ci95", "tpm", "tpm.ci95", "cpu_idle"} <= set(summ.columns)
    assert summ["throughput_per_s"].tolist() == pytest.approx((summ["tpm"] / 60.0).tolist())
    sw.write_summary(grid)   # as the sweep left it


def test_a_changed_model_makes_every_run_again(grid, monkeypatch):
    """A run is reused only by the model that made it: the key holds a hash of the code (notebook 7's sweep had
    reused runs of the model of hours before, its table stale)."""
    assert sw.model_fingerprint() == sw.model_fingerprint() and len(sw.model_fingerprint()) == 16
    monkeypatch.setattr(sw, "model_fingerprint", lambda: "another model")
    again = sw.sweep(BASE, vary={"users": [2, 8], "name": ["a", "b"]}, replications=2, out=grid.out,
                     executor="serial", progress=False)
    assert again.computed == 8 and again.reused == 0


def test_a_partial_last_line_from_a_kill_is_cut_and_the_rest_kept(tmp_path):
    path = tmp_path / "points.jsonl"
    path.write_text('{"key": "a", "n": 1}\n{"key": "b", "n": 2}\n{"key": "c", "n"')
    journal = sw.Journal(path)
    assert set(journal.read()) == {"a", "b"}
    journal.append({"key": "c", "n": 3})
    assert [json.loads(x)["key"] for x in path.read_text().splitlines()] == ["a", "b", "c"]


def _lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines(keepends=True) if x.endswith("\n")]


def test_killed_with_sigkill_and_started_again_it_completes_the_rest(tmp_path):
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(yaml.safe_dump(BASE))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "sim.cli", "sweep", str(scenario), "--vary", "users=32,64", "--replications", "4",
           "--jobs", "1", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    journal = out / "points.jsonl"
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(_lines(journal)) < 2 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)   # the pool's worker, orphaned by the kill
        except ProcessLookupError:
            pass
    before = _lines(journal)
    assert 2 <= len(before) < 8, "the kill should land in the middle of the sweep"
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert f"{8 - len(before)} simulated now, {len(before)} found finished" in second.stderr
    after = _lines(journal)
    assert after[: len(before)] == before                        # finished runs untouched (same time stamps)
    assert len({r["key"] for r in after}) == len(after) == 8     # nothing run twice, nothing missing
    table = pd.read_csv(out / "results.csv")
    assert sorted(zip(table["users"], table["replication"])) == [(u, r) for u in (32, 64) for r in range(4)]
    assert (table["status"] == "ok").all()


def test_dask_local_cluster_gives_the_numbers_of_the_local_pool(grid, tmp_path):
    res = sw.sweep(BASE, vary={"users": [2, 8], "name": ["a"]}, replications=2, out=tmp_path, executor="dask",
                   workers=2, progress=False)
    assert res.executor.startswith("Dask LocalCluster of 2")
    pool = grid.table[grid.table["name"] == "a"].sort_values(["users", "replication"])
    dask = res.table.sort_values(["users", "replication"])
    assert dask[FIGURES].to_numpy().tolist() == pool[FIGURES].to_numpy().tolist()


def test_without_dask_the_error_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(OltpsimError, match=r"pip install 'oltpsim\[dask\]'"):
        sw.sweep(BASE, replications=1, out=tmp_path, executor="dask", progress=False)


def test_failing_points_are_recorded_and_the_sweep_carries_on(tmp_path, monkeypatch):
    from sim.system import System

    # rx5670 has no 'array' device and the T5220 no 'redo' one: each value works, two combinations cannot.
    res = sw.sweep(BASE, vary={"profile": ["t5220", "rx5670"], "database.redo_device": ["array", "redo"]},
                   out=tmp_path / "combos", executor="serial", progress=False)
    status = dict(zip(zip(res.table["profile"], res.table["database.redo_device"]), res.table["status"]))
    assert status == {("t5220", "array"): "ok", ("t5220", "redo"): "invalid",
                      ("rx5670", "array"): "invalid", ("rx5670", "redo"): "ok"}
    bad = res.table[res.table["status"] == "invalid"]["message"].iloc[0]
    assert "database.redo_device" in bad and "expected one of the profile's storage devices" in bad
    # the refused runs have no inputs: the others' whole numbers stay whole, as `--set run.seed=` takes them back
    ran = pd.read_csv(res.out / "results.csv", dtype=str, keep_default_na=False)
    assert ran["seed"].tolist() == ["1", "", "", "1"] and ran["in.params.users"].tolist() == ["2", "", "", "2"]

    admit = System.admit

    def admit_with_a_bug(self):
        if self.scenario.params.users == 4:
            raise RuntimeError("a bug in the model")
        return admit(self)

    monkeypatch.setattr(System, "admit", admit_with_a_bug)
    points = [{"users": 2}, {"database.db_cache": "100 GB"}, {"users": 4}]   # a 100 GB SGA on a 64 GB server
    res = sw.sweep(BASE, points=points, out=tmp_path / "outcomes", executor="serial", progress=False)
    assert res.table["status"].tolist() == ["ok", "out_of_memory", "error"]
    assert "exceed physical memory" in res.table["message"][1] and "RuntimeError: a bug" in res.table["message"][2]
    assert res.summary()["failed"].tolist() == [0, 1, 1]
    # the bug fixed, the same sweep again runs the crashed run again (the others are outcomes: reused)
    monkeypatch.setattr(System, "admit", admit)
    again = sw.sweep(BASE, points=points, out=tmp_path / "outcomes", executor="serial", progress=False)
    assert again.table["status"].tolist() == ["ok", "out_of_memory", "ok"] and (again.computed, again.reused) == (1, 2)
    assert again.table["tpm"][0] == res.table["tpm"][0]


def test_bad_input_is_one_error_before_anything_runs(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(OltpsimError, match=r"users='abc'.*params\.users: got 'abc'; expected a whole number"):
        sw.sweep(BASE, vary={"users": [2, "abc"]}, out=out, executor="serial", progress=False)
    with pytest.raises(OltpsimError, match=r"^usres=2 makes no valid scenario at any point: .*did you mean 'users'"):
        sw.sweep(BASE, vary={"usres": [2]}, out=out, executor="serial", progress=False)
    with pytest.raises(OltpsimError, match="not both"):
        sw.sweep(BASE, vary={"users": [2]}, points=[{"users": 2}], out=out, progress=False)
    # two values that fail together: the one the problem names is blamed, wherever it stands in the point
    with pytest.raises(OltpsimError, match=r"^database\.block_size='3 KB' makes no valid scenario at any point"):
        sw.sweep(BASE, points=[{"users": 8, "database.block_size": "3 KB"}], out=out, executor="serial", progress=False)
    # a base no point can mend: its own problem, not a varied setting's
    broken = {**BASE, "params": {**BASE["params"], "users": 0}}
    with pytest.raises(OltpsimError, match=r"^<scenario> \[name=a\]: params\.users: got 0; expected at least 1"):
        sw.sweep(broken, vary={"name": ["a", "b"]}, out=out, executor="serial", progress=False)
    assert not out.exists()


def test_one_scenario_written_two_ways_is_refused_before_anything_runs(tmp_path):
    # '100MB' and '100 MB' passed the duplicate check and ran twice: the table held point 1 twice and no
    # point 0, and the summary showed one point of 2/2 runs, as if replicated
    out = tmp_path / "out"
    with pytest.raises(OltpsimError, match=r"\[database\.db_cache=100 MB\]: the same scenario as point 0 "
                                           r"\[database\.db_cache=100MB\] \(database\.db_cache='100MB' and '100 MB' "
                                           r"are one value\); expected each point once"):
        sw.sweep(BASE, vary={"database.db_cache": ["100MB", "100 MB"]}, out=out, executor="serial", progress=False)
    # (one setting under two names is refused as such: its table would split it into two columns)
    with pytest.raises(OltpsimError, match=r"^params\.users: the same setting as users .* varied under two names"):
        sw.sweep(BASE, points=[{"users": 2}, {"params.users": 2}], out=out, executor="serial", progress=False)
    assert not out.exists()


def test_an_input_file_the_sweep_would_write_over_is_refused_before_anything_runs(tmp_path):
    """A points file kept in the sweep's folder under a name the sweep writes (summary.csv) was replaced by the
    summary once the runs were done, and with it the record of what was run; a scenario file likewise. Both
    are refused before any run, the file left as it was; the same file outside the folder runs."""
    out = tmp_path / "out"
    out.mkdir()
    points = out / "summary.csv"
    points.write_text("users\n2\n")
    with pytest.raises(OltpsimError, match=r"summary\.csv: the sweep writes .*summary\.csv, so it would replace this "
                                           r"input file"):
        sw.sweep(BASE, points=points, out=out, executor="serial", progress=False)
    scenario = out / "sweep.json"
    scenario.write_text(json.dumps(BASE))
    with pytest.raises(OltpsimError, match=r"sweep\.json: the sweep writes"):
        sw.sweep(scenario, vary={"users": [2]}, out=out, executor="serial", progress=False)
    assert points.read_text() == "users\n2\n" and sorted(p.name for p in out.iterdir()) == ["summary.csv", "sweep.json"]


def test_a_fixed_setting_the_sweep_also_varies_is_refused(tmp_path):
    # --set users=4 beside --vary users=2,8 was dropped at every point without a word
    out = tmp_path / "out"
    for key in ("users", "params.users"):
        with pytest.raises(OltpsimError, match=rf"^--set {key}=4: users is varied too .*expected it in one place"):
            sw.sweep(BASE, vary={"users": [2, 8]}, overrides={key: "4"}, out=out, executor="serial", progress=False)
    assert not out.exists()
    # points that leave it out (an empty cell) take the fixed value there: not a clash; the table keeps the
    # points' whole numbers whole and the summary prints '—' for a setting left to the scenario
    res = sw.sweep(BASE, points=[{"users": 2}, {"database.db_cache": "1 GB"}], overrides={"users": "3"},
                   out=tmp_path / "sparse", executor="serial", progress=False)
    assert res.table["in.params.users"].tolist() == [2, 3] and res.table["users"].astype(object).tolist()[0] == 2
    assert str(res.table["users"].dtype) == "Int64"
    from sim.cli import _point_value
    assert [_point_value(v) for v in (float("nan"), None, 2.0, "1 GB")] == ["—", "—", 2, "1 GB"]
    # without a scenario file --profile is required: a sweep of profiles varies it, it is not a clash
    cmd = [sys.executable, "-m", "sim.cli", "sweep", "--profile", "t5220", "--workload", "tpcc", "--vary",
           "profile=t5220,t5440", "--set", "users=abc", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "params.users: got 'abc'" in proc.stderr and "varied too" not in proc.stderr


def test_vary_options_and_point_files_parse_as_people_write_them(tmp_path):
    assert sw.parse_vary(["users=8,16", "database.db_cache=1 GB,2 GB", "profile=[t5220, t5440]"]) == {
        "users": [8, 16], "database.db_cache": ["1 GB", "2 GB"], "profile": ["t5220", "t5440"]}
    for bad in (["users"], ["users=8,,16"], ["users=8", "users=16"], ["users="], ["=8,16"], ["users=8,8.0"]):
        with pytest.raises(OltpsimError, match="--vary"):
            sw.parse_vary(bad)
    (tmp_path / "p.csv").write_text("users,database.db_cache\n2,1 GB\n8,2 GB\n")
    (tmp_path / "p.yaml").write_text("- {users: 2, database.db_cache: 1 GB}\n- {users: 8, database.db_cache: 2 GB}\n")
    (tmp_path / "q.yaml").write_text("points:\n- {users: 2, database.db_cache: 1 GB}\n- {users: 8, database.db_cache: 2 GB}\n")
    expected = [{"users": 2, "database.db_cache": "1 GB"}, {"users": 8, "database.db_cache": "2 GB"}]
    assert sw.read_points(tmp_path / "p.csv") == sw.read_points(tmp_path / "p.yaml") == expected
    assert sw.read_points(tmp_path / "q.yaml") == expected       # under a 'points:' key
    (tmp_path / "q.yaml").write_text("replications: 3\npoints:\n- {users: 2}\n")   # was silently ignored
    with pytest.raises(OltpsimError, match=r"q\.yaml: replications: unknown key; expected only points"):
        sw.read_points(tmp_path / "q.yaml")
    for text in ("[]\n", "- {users: 2}\n- {}\n", "{users: 2}\n"):  # none, an empty point, not a list
        (tmp_path / "r.yaml").write_text(text)
        with pytest.raises(OltpsimError, match="expected a non-empty list of points"):
            sw.read_points(tmp_path / "r.yaml")
    for points in ([8], [{"users": 2}, "users=8"]):
        with pytest.raises(OltpsimError, match="sweep: points: got"):
            sw.sweep(BASE, points=points, out=tmp_path / "out", progress=False)
    runs = sw.plan(BASE, "<test>", expected, replications=2)
    assert [r.scenario.spec.database.db_cache for r in runs] == [2**30, 2**31] * 2
    assert len({r.key for r in runs}) == 4


def test_a_mapping_varied_is_a_yaml_list_and_its_commas_are_not_cut():
    """--vary 'mix={new_order: 1, payment: 1}' was cut at its comma into '{new_order: 1' and ' payment: 1}', and
    refused as 'expected a mapping' with no word of the form that works: a YAML list of mappings."""
    with pytest.raises(OltpsimError, match=r"the commas of a mapping split it.*expected the values as a YAML list, "
                                           r"e\.g\. mix=\[\{"):
        sw.parse_vary(["mix={new_order: 1, payment: 1}"])
    assert sw.parse_vary(["mix=[{new_order: 1, payment: 1}, {new_order: 1}]"]) == {
        "mix": [{"new_order": 1, "payment": 1}, {"new_order": 1}]}
    assert sw.parse_vary(["mix={new_order: 1}"]) == {"mix": [{"new_order": 1}]}   # one mapping, no comma: one value


def test_a_setting_names_one_key_path_for_overrides_and_sweep_blame():
    """--set, --vary and points files read a key one way (sim/scenario.py setting_path): a plain key
    is a workload parameter, the scenario's own keys and dotted paths stay as written."""
    from sim.scenario import apply_overrides, setting_path

    assert [setting_path(k) for k in ("users", "profile", "workload", "name", "database.db_cache")] == [
        "params.users", "profile", "workload", "name", "database.db_cache"]
    data = apply_overrides({}, {"users": "8", "name": "x", "database.db_cache": "1 GB"})
    assert data == {"params": {"users": 8}, "name": "x", "database": {"db_cache": "1 GB"}}


def test_ctrl_c_stops_the_pools_workers_at_once():
    """Ctrl-C in a sweep: the pool's workers are stopped, not waited for (the run already handed to a worker
    had gone on to its end, ~13 s, only to be thrown away; a second Ctrl-C could hang the parent; helper probe)."""
    from sim.executors import open_executor
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        with open_executor("process", 1) as opened:
            opened.executor.submit(time.sleep, 60)
            opened.executor.submit(time.sleep, 60)   # (queued behind it)
            time.sleep(1.0)
            raise KeyboardInterrupt
    assert time.perf_counter() - start < 15


def test_a_run_reused_from_a_sweep_with_other_points_takes_this_sweeps_point_number(tmp_path):
    """users=8,16 then users=16,24 into one folder: the 16-user run is reused, but it was point 1 and 24 users is
    point 1 now; the summary merged the two into one point (the mean of 16 and 24 users) and lost 24 users."""
    base = {**BASE, "params": {**BASE["params"]}}
    sw.sweep(base, vary={"users": [2, 8]}, out=tmp_path, executor="serial", progress=False)
    again = sw.sweep(base, vary={"users": [8, 4]}, out=tmp_path, executor="serial", progress=False)
    assert again.reused == 1 and again.computed == 1
    assert list(zip(again.table["point"], again.table["users"])) == [(0, 8), (1, 4)]
    summary = again.summary()
    assert list(summary["users"]) == [8, 4] and list(summary["runs"]) == [1, 1]


def test_a_wait_event_a_run_did_not_wait_on_is_summarised_as_no_waits():
    """At 1 GB the database fits the cache: no 'db file sequential read'. The point's mean was blank (and dropped
    from the plot), and a replication without the event was left out of its point's mean."""
    t = pd.DataFrame({"point": [0, 0, 1, 1], "replication": [0, 1, 0, 1], "status": ["ok"] * 4,
                      "wait.db file sequential read.waits": [100.0, np.nan, np.nan, np.nan],
                      "wait.db file sequential read.avg_ms": [8.0, np.nan, np.nan, np.nan]})
    s = sw.summarize(t, [], ["wait.db file sequential read.waits", "wait.db file sequential read.avg_ms"])
    assert list(s["wait.db file sequential read.waits"]) == [50.0, 0.0]
    # the average of no waits is no number: the replication that waited is the point's, and the other point has none
    avg = s["wait.db file sequential read.avg_ms"]
    assert avg.iloc[0] == 8.0 and np.isnan(avg.iloc[1])


def test_the_plot_keeps_a_point_that_leaves_a_setting_to_the_scenario():
    """A points file's empty cell ("—" in the text summary): as the plotted setting it crashed the plot after the
    whole sweep (TypeError: boolean value of NA is ambiguous), as a --by setting its points were left out."""
    table = pd.DataFrame({"point": [0, 1, 2, 3], "replication": [0] * 4, "status": ["ok"] * 4,
                          "users": pd.array([8, 16, None, 32], dtype="Int64"),
                          "database.db_cache": ["100 MB", None, "100 MB", None], "tpm": [1.0, 2.0, 3.0, 4.0]})
    varied = ["users", "database.db_cache"]
    fig = sw.plot(table, "tpm", "users", varied)
    ax = fig.axes[0]
    drawn = sorted(y for line in ax.lines for y in line.get_ydata() if line.get_marker() == "o")
    assert drawn == [1.0, 2.0, 3.0, 4.0]                                       # every point, none dropped
    assert [t.get_text() for t in ax.get_xticklabels()] == ["8", "16", "32", "—"]
    assert sorted(ax.get_legend_handles_labels()[1]) == ["database.db_cache=100 MB", "database.db_cache=—"]
    fig = sw.plot(table, "tpm", "database.db_cache", varied, by="users")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["100 MB", "—"]   # not 'nan'


def test_the_plot_names_the_unit_and_claims_no_interval_it_does_not_have():
    table = pd.DataFrame({"point": [0, 1], "replication": [0, 0], "status": ["ok", "ok"], "users": [8, 16],
                          "rt.new_order.p90": [0.0106, 0.0105]})
    ax = sw.plot(table, "rt.new_order.p90", "users", ["users"]).axes[0]
    assert ax.get_ylabel() == "rt.new_order.p90 (s)"                         # seconds, as results.csv has it
    assert "no interval" in ax.get_title() and "95% CI" not in ax.get_title()
    assert [figure_unit(m) for m in ("tpm", "elapsed", "wait.log file sync.avg_ms", "device.array.util_pct",
                                     "extra.iops", "run_queue", "rt.new_order.mean_ci95", "extra.px_queue_time_s",
                                     "device.array.mb_per_s", "cpu_busy", "tpm_half_width",
                                     "core_utilisation_mean")] == [
        "TPM", "s", "ms", "%", "IOPS", "", "s", "s", "MB/s", "%", "TPM", "%"]


def test_the_plot_draws_its_line_in_the_settings_order_and_a_gap_column_as_whole_numbers():
    """Points given as 16, 8, 32 users: one line from left to right, not back and forth; a points file's column
    with a gap (read as 16.0, 8.0, NaN, 32.0) is labelled 8, 16, 32 and '—', not 8.0."""
    table = pd.DataFrame({"point": [0, 1, 2], "replication": [0] * 3, "status": ["ok"] * 3,
                          "users": [16, 8, 32], "tpm": [2.0, 1.0, 3.0]})
    (line,) = [ln for ln in sw.plot(table, "tpm", "users", ["users"]).axes[0].lines if ln.get_marker() == "o"]
    assert list(line.get_xdata()) == [8, 16, 32] and list(line.get_ydata()) == [1.0, 2.0, 3.0]
    gap = pd.DataFrame({"point": [0, 1, 2, 3], "replication": [0] * 4, "status": ["ok"] * 4,
                        "users": [16.0, 8.0, np.nan, 32.0], "tpm": [2.0, 1.0, 3.0, 4.0]})
    ax = sw.plot(gap, "tpm", "users", ["users"]).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["8", "16", "32", "—"]
    (line,) = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert list(line.get_xdata()) == [0, 1, 2, 3] and list(line.get_ydata()) == [1.0, 2.0, 4.0, 3.0]


def test_replications_of_an_infinite_figure_have_no_interval_and_no_warning():
    """A run's '—' (rt.TYPE.mean_ci95 infinite): no interval across replications, and no numpy RuntimeWarning
    on the sweep's output."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(sw.t_half_width(np.array([0.004, np.inf, 0.005])))
        assert sw.t_half_width(np.array([1.0, 3.0])) > 0


def test_a_reused_run_has_no_column_of_a_setting_only_the_earlier_sweep_varied(tmp_path):
    """An earlier sweep that also set think_time to the scenario's own 0 s ran the same scenario: its run is
    reused, but this sweep's table has only this sweep's settings (not a think_time column blank but for it)."""
    base = {**BASE, "params": {**BASE["params"]}}
    sw.sweep(base, vary={"users": [8], "think_time": ["0 s"]}, out=tmp_path, executor="serial", progress=False)
    again = sw.sweep(base, vary={"users": [8, 4]}, out=tmp_path, executor="serial", progress=False)
    assert again.reused == 1 and "think_time" not in again.table.columns


def test_the_plot_does_not_call_replications_without_an_interval_one_replication():
    """Two replications whose figure has no interval across them (every run's mean_ci95 infinite, '—')."""
    table = pd.DataFrame({"point": [0, 0, 1, 1], "replication": [0, 1, 0, 1], "status": ["ok"] * 4,
                          "users": [4, 4, 8, 8], "rt.new_order.mean_ci95": [np.inf] * 4})
    title = sw.plot(table, "rt.new_order.mean_ci95", "users", ["users"]).axes[0].get_title()
    assert "one replication" not in title and "no interval" in title


def test_a_sweep_names_its_points_with_a_run_that_was_not_steady(capsys):
    """The response time law's verdict per run (True, False, None when a run had no interval; NaN where a run had
    none at all): the points with a False, each once, and nothing when there is none."""
    import numpy as np
    import pandas as pd

    from sim.cli import _say_not_steady

    runs = pd.DataFrame({"point": [0, 1, 1, 2, 3, 4],
                         "extra.response_time_law.steady": [True, np.False_, False, None, np.nan, False]})
    _say_not_steady(runs)
    assert capsys.readouterr().out.startswith("not steady by the response time law (N = X (R + Z)): points 1, 4, whose")
    _say_not_steady(runs[runs.point != 4].assign(point=[0, 1, 1, 2, 3]))
    assert "point 1, whose" in capsys.readouterr().out
    _say_not_steady(runs[runs.point.isin([0, 2, 3])])
    _say_not_steady(pd.DataFrame({"point": [0]}))   # (a workload without terminals)
    assert capsys.readouterr().out == ""


def test_a_replications_seed_is_pinned_to_its_base_and_number_in_that_order():
    """Replication 0 runs the scenario's own seed (as `oltpsim run`); replication r the first word of numpy's
    SeedSequence([base, r]): pinned, so the replications of a sweep made before are the same runs now
    (SeedSequence([r, base]) gives another seed, 4245214700 for (7, 1); (1, 1) cannot tell the order)."""
    assert sw.replication_seed(7, 0) == 7
    assert sw.replication_seed(7, 1) == 369571992 and sw.replication_seed(1, 2) == 1596810411


def test_a_refused_combination_is_a_run_of_its_own_in_every_replication():
    """t5220 has no 'redo' device and rx5670 no 'array' one: two of three points are refused, every value works
    elsewhere. Two replications: six runs, each with a key of its own (a refused run's key without its
    replication made the two replications one scenario, refused as a point given twice)."""
    points = [{"profile": "t5220", "database.redo_device": "array"}, {"profile": "rx5670", "database.redo_device": "redo"},
              {"profile": "rx5670", "database.redo_device": "array"}]
    runs = sw.plan(BASE, "<test>", points, replications=2)
    assert [(r.point, r.replication, r.scenario is None) for r in runs] == [
        (0, 0, False), (1, 0, False), (2, 0, True), (0, 1, False), (1, 1, False), (2, 1, True)]
    assert len({r.key for r in runs}) == 6 and "database.redo_device" in runs[2].problem


def test_one_scenario_twice_names_only_the_settings_written_two_ways():
    """Two points that differ only in how one value is written: the message names that setting's two spellings,
    not the setting the two points share (name='a' and 'a' are not 'one value', they are the same)."""
    with pytest.raises(OltpsimError) as e:
        sw.plan(BASE, "<test>", [{"database.db_cache": "100MB", "name": "a"}, {"database.db_cache": "100 MB", "name": "a"}], 1)
    assert "(database.db_cache='100MB' and '100 MB' are one value)" in str(e.value) and "name='a'" not in str(e.value)


def test_an_empty_cell_of_a_points_file_leaves_that_setting_to_the_scenario(tmp_path):
    """A CSV cell left empty (or blank) sets nothing at that point: the point has no such key (not users None)."""
    (tmp_path / "p.csv").write_text("users,database.db_cache\n2,\n , 1 GB\n")
    assert sw.read_points(tmp_path / "p.csv") == [{"users": 2}, {"database.db_cache": "1 GB"}]


def test_a_run_refused_while_its_model_is_built_is_invalid_and_a_crash_is_an_error(monkeypatch):
    """run_one's outcome as data: the model refusing the scenario (OltpsimError) is the scenario's outcome,
    "invalid", kept on resume; any other exception is the code's crash, "error" with its traceback, run again."""
    import sim.run

    (run,) = sw.plan(BASE, "<test>", [{"users": 2}], 1)

    def refuse(scenario):
        raise OltpsimError("database.redo_device: no such device")
    monkeypatch.setattr(sim.run, "run", refuse)
    out = sw.run_one(run.scenario)
    assert (out["status"], out["message"]) == ("invalid", "database.redo_device: no such device") and "row" not in out

    def crash(scenario):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(sim.run, "run", crash)
    out = sw.run_one(run.scenario)
    assert (out["status"], out["message"]) == ("error", "ZeroDivisionError: a bug") and "a bug" in out["traceback"]


def test_the_journal_writes_numpy_numbers_as_json_numbers_and_a_tuple_as_a_list():
    """A numpy integer stays whole in points.jsonl (3, not 3.0: a seed read back as 3.0 is refused by --set); a
    tuple of settings becomes one text cell of the table, as a list does (a tuple object left in the row had made
    a column parquet cannot type)."""
    assert json.dumps({"n": np.int64(3), "x": np.float32(0.5)}, default=sw._json_default) == '{"n": 3, "x": 0.5}'
    row: dict = {}
    sw._flatten("in.x", {"a": (1, 2), "b": [3], "c": 4}, row)
    assert row == {"in.x.a": "[1, 2]", "in.x.b": "[3]", "in.x.c": 4}


def test_a_points_summary_is_the_mean_its_busiest_the_one_most_runs_named_and_its_outcome_the_first_failure():
    """By hand, one point of four replications: tpm 1, 2, 9 and a failed run: the mean is 4 (the median would be 2);
    busiest: the strands named by two runs at 90 and 92 (91), not LGWR named once at 99 though it is busier, and
    not the mean of all three named (93.67); its outcome the first run that failed (replication 1), not the last.
    A point with one failed run of two has an outcome too."""
    table = pd.DataFrame({"point": [0] * 5 + [1, 1], "replication": [0, 1, 2, 3, 4, 0, 1], "users": [8] * 5 + [16] * 2,
                          "status": ["ok", "out_of_memory", "ok", "ok", "error", "ok", "invalid"],
                          "message": ["", "needs 2 GB", "", "", "a bug", "", "no such device"],
                          "tpm": [1.0, None, 2.0, 9.0, None, 5.0, None],
                          "busiest": ["strands (mpstat)", None, "LGWR", "strands (mpstat)", None, "LGWR", None],
                          "busiest_pct": [90.0, None, 99.0, 92.0, None, 50.0, None]})
    s = sw.summarize(table, ["users"], ["tpm"])
    assert s["tpm"].tolist() == [4.0, 5.0] and s["failed"].tolist() == [2, 1]
    assert (s["busiest"][0], s["busiest.pct"][0]) == ("strands (mpstat)", 91.0)
    assert s["outcome"].tolist() == ["out_of_memory: needs 2 GB", "invalid: no such device"]


def test_the_runs_table_is_in_point_order_and_a_whole_number_column_stays_plain_without_a_gap():
    """Rows as the journal found them (replication by replication) come out point by point; a column of whole
    numbers with no gap stays numpy's int64 (pandas' Int64 only where a gap would have made it float)."""
    rows = [{"point": p, "replication": r, "users": 8 * (p + 1), "seed": r + 1} for r in range(2) for p in range(2)]
    rows[3]["seed"] = None
    t = sw._runs_frame(rows)
    assert list(zip(t["point"], t["replication"])) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert str(t["users"].dtype) == "int64" and str(t["seed"].dtype) == "Int64"


def test_the_summary_file_has_every_vmstat_column_and_the_figure_asked_for_first(tmp_path):
    """summary.csv: the metric asked for, then the workload's own, then vmstat's cpu_idle, cpu_usr, cpu_sys and
    run_queue, each with its interval."""
    table = pd.DataFrame({"point": [0], "replication": [0], "status": ["ok"], "in.workload": ["tpcc"], "tpm": [6.0],
                          "elapsed": [1.0], "cpu_idle": [10.0], "cpu_usr": [80.0], "cpu_sys": [10.0], "run_queue": [2.0]})

    class Res:   # (what write_summary reads of a SweepResult)
        def __init__(self, out):
            self.out, self.table, self.metric = out, table, "tpm"

        def summary(self, metrics):
            return sw.summarize(table, [], metrics)
    cols = list(pd.read_csv(sw.write_summary(Res(tmp_path), "elapsed")).columns)
    assert [c for c in cols if not c.endswith(".ci95")][3:] == ["elapsed", "tpm", "cpu_idle", "cpu_usr", "cpu_sys",
                                                                "run_queue"]


def test_a_refused_combination_is_recorded_in_every_replication(tmp_path, monkeypatch):
    """Two replications of the rx5670 with the T5220's 'array' as its redo device (each value works at another
    point): both runs are recorded as invalid (the second replication's record missing had stopped the sweep at
    its table)."""
    points = [{"profile": "t5220", "database.redo_device": "array"}, {"profile": "rx5670", "database.redo_device": "redo"},
              {"profile": "rx5670", "database.redo_device": "array"}]
    monkeypatch.setattr(sw, "run_one", lambda scenario: {"status": "ok", "row": {"tpm": 1.0}})   # (no model run)
    res = sw.sweep(BASE, points=points, replications=2, out=tmp_path, executor="serial", progress=False)
    assert list(zip(res.table["point"], res.table["replication"], res.table["status"])) == [
        (0, 0, "ok"), (0, 1, "ok"), (1, 0, "ok"), (1, 1, "ok"), (2, 0, "invalid"), (2, 1, "invalid")]
    assert (res.computed, res.reused) == (4, 0)


def test_a_sweep_refuses_a_setting_with_no_values_and_a_plot_by_its_own_x():
    """vary: every setting needs a value (one empty list beside a full one made no points at all, said
    later and less clearly); --by the plotted setting itself is no line per value; a scenario named with a
    folder keeps its folder out of the default output's name; replications=True is no number of replications
    (bool is an int: it ran one)."""
    with pytest.raises(OltpsimError, match=r"^sweep: vary: got .*expected a mapping of settings to non-empty lists"):
        sw.sweep(BASE, vary={"users": [8], "name": []}, progress=False)
    table = pd.DataFrame({"point": [0, 1], "replication": [0, 0], "status": ["ok", "ok"], "users": [8, 16],
                          "tpm": [1.0, 2.0]})
    with pytest.raises(OltpsimError, match=r"--by users: expected another varied setting"):
        sw.plot(table, "tpm", "users", ["users"], by="users")
    assert sw.default_out({"name": "runs/cache"}) == Path("sweep-cache")
    with pytest.raises(OltpsimError, match=r"^sweep: replications: got True; expected a whole number"):
        sw.sweep(BASE, vary={"users": [8]}, replications=True, progress=False)


def test_the_executor_is_handed_no_more_runs_than_it_has_slots(tmp_path):
    """A pool of 2 slots and 5 runs: at most 2 handed over and not yet saved at any time (a run queued beyond
    the slots is lost with a dead worker or Ctrl-C though it never started, and is named among the suspects);
    every run saved once (each finishes at once here)."""
    from sim.executors import InProcess, Opened

    runs = sw.plan(BASE, "<test>", [{"users": u} for u in (2, 3, 4, 5, 6)], 1)
    journal = sw.Journal(tmp_path / "points.jsonl")
    outstanding = []

    class Counting(InProcess):
        def submit(self, fn, /, *args, **kwargs):
            outstanding.append(len(outstanding) - len(journal.read()))   # handed over before this one, not saved
            return super().submit(lambda scenario: {"status": "ok", "row": {"tpm": 1.0}}, *args)
    sw._execute(runs, Opened(Counting(), 2, "test"), journal, False, initial=0, total=5)
    assert max(outstanding) == 1 and len(outstanding) == 5
    assert sorted(r["point"] for r in map(json.loads, journal.path.read_text().splitlines())) == [0, 1, 2, 3, 4]


def test_two_batch_workloads_are_summarised_by_their_elapsed_time_not_an_empty_tpm():
    """rman and sqlldr in one sweep: no workload's own figure; every run has a tpm column (flat() gives every
    field) but none has a figure in it: the figure they share is the elapsed time."""
    mixed = pd.DataFrame([{"in.workload": "rman", "tpm": None, "elapsed": 5.0},
                          {"in.workload": "sqlldr", "tpm": None, "elapsed": 7.0}])
    assert sw.primary_metric(mixed) == "elapsed"


def test_the_plot_leaves_out_a_line_whose_runs_all_failed_and_says_no_interval_where_a_point_had_replications():
    """name=b's runs all failed: no line, no legend entry for it. Point 0 had two replications (one failed: no
    interval from one figure), point 1 one: the title says 'no interval', not 'one replication', which only a
    sweep of one replication everywhere is."""
    table = pd.DataFrame({"point": [0, 0, 1, 2, 3], "replication": [0, 1, 0, 0, 0], "users": [8, 8, 16, 8, 16],
                          "name": ["a", "a", "a", "b", "b"], "status": ["ok", "error", "ok", "error", "error"],
                          "message": [""] * 5, "tpm": [1.0, None, 2.0, None, None]})
    ax = sw.plot(table, "tpm", "users", ["users", "name"]).axes[0]
    assert ax.get_legend_handles_labels()[1] == ["name=a"]
    assert "no interval" in ax.get_title() and "one replication" not in ax.get_title()


def test_ctrl_c_while_waiting_saves_the_runs_that_had_finished(tmp_path, monkeypatch, capsys):
    """Ctrl-C arrives while the sweep waits on its runs: the two already finished (not yet read) are saved before
    it stops, and it says how many runs are saved and where."""
    from sim.executors import InProcess, Opened

    runs = sw.plan(BASE, "<test>", [{"users": u} for u in (2, 3, 4)], 1)
    journal = sw.Journal(tmp_path / "points.jsonl")

    class Done(InProcess):   # (each run finished at once)
        def submit(self, fn, /, *args, **kwargs):
            return super().submit(lambda scenario: {"status": "ok", "row": {"tpm": 1.0}}, *args)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(sw, "wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sw._execute(runs, Opened(Done(), 2, "test"), journal, False, initial=0, total=3)
    assert sorted(r["point"] for r in journal.read().values()) == [0, 1]
    assert f"sweep interrupted: 2 runs saved in {journal.path}" in capsys.readouterr().err


class _DyingProcessPool:
    """A stand-in for a local process pool ("process": the pool the sweep retries on) whose worker dies at the run of
    `users=die`. Runs finish one at a time, oldest first, when the sweep waits (its `wait` is patched to step()).
    At the killer the pool breaks: the runs queued behind it fail first, with BrokenProcessPool (CPython fails
    every run in flight, in an order the sweep must not rely on), the killer's future is left pending, and a later
    submit is refused. A future's result() runs the pool up to it (a run alone is waited for so)."""

    def __init__(self, workers: int, die: int | None, log: list):
        self.die, self.broken, self.futures = die, False, []
        self.ran: list[int] = []
        log.append(("alone" if workers == 1 else "pool", self.ran))

    def submit(self, fn, scenario):
        from concurrent.futures import Future
        from concurrent.futures.process import BrokenProcessPool

        class Waited(Future):
            def result(self, timeout=None):
                while not self.done():
                    self.pool.step([f for f in self.pool.futures if not f.done()])
                return super().result(timeout)
        if self.broken:
            raise BrokenProcessPool("A child process terminated abruptly, the process pool is not usable anymore")
        fut = Waited()
        fut.fn, fut.scenario, fut.pool = fn, scenario, self
        self.futures.append(fut)
        self.ran.append(scenario.params.users)
        return fut

    def _run(self, fut) -> list:
        from concurrent.futures.process import BrokenProcessPool
        if fut.scenario.params.users != self.die:
            fut.set_result(fut.fn(fut.scenario))
            return [fut]
        self.broken = True
        behind = [f for f in self.futures if not f.done() and f is not fut] or [fut]
        for f in behind:
            f.set_exception(BrokenProcessPool("A process in the process pool was terminated abruptly"))
        return behind

    def step(self, fs):
        oldest = next(f for f in self.futures if f in fs and not f.done())
        done = set(self._run(oldest))
        return done, set(fs) - done


def test_runs_in_flight_when_a_worker_dies_each_run_again_alone_and_earlier_crashes_still_rerun(tmp_path, monkeypatch,
                                                                                                   capsys):
    """users=8 kills its worker with users=4 in flight behind it; users=4's failure is seen first. Both run again
    alone, each in a pool of its own (users=4 gives its figures, users=8 kills that pool too and is recorded as
    crashed): one pool broken, one message naming both. Then users=6, not yet submitted, still runs in a fresh pool,
    though it has a record: a crash from an earlier call, which a re-run always runs again. (Running only the first
    suspect alone put users=8 back in a shared pool, which it broke a second time; counting as done every run with
    a record, fresh or not, left users=6's old crash in the table.)"""
    from contextlib import contextmanager

    from sim.executors import Opened

    outcome = {"status": "ok", "message": "", "row": {"tpm": 1.0}}
    crashed, killer = {8, 4, 6}, []   # the first call: these crash (a model failure), users=2 is fine; no worker dies
    monkeypatch.setattr(sw, "run_one", lambda sc: {"status": "error", "message": "RuntimeError: x"}
                        if sc.params.users in crashed else outcome)
    log: list = []

    @contextmanager
    def pools(kind, workers, scheduler=None):
        assert kind == "process"
        pool = _DyingProcessPool(workers, die=killer[0] if killer else None, log=log)
        yield Opened(pool, 2 if workers > 1 else 1, "stand-in process pool")
    monkeypatch.setattr(sw, "open_executor", pools)
    monkeypatch.setattr(sw, "wait", lambda fs, return_when: fs[0].pool.step(fs))
    first = sw.sweep(BASE, vary={"users": [2, 8, 4, 6]}, out=tmp_path, executor="process", workers=4, progress=False)
    assert list(first.table["status"]) == ["ok", "error", "error", "error"] and len(log) == 1   # one pool, unbroken
    crashed.clear()
    killer.append(8)
    log.clear()
    capsys.readouterr()
    res = sw.sweep(BASE, vary={"users": [2, 8, 4, 6]}, out=tmp_path, executor="process", workers=4, progress=False)
    assert list(res.table["users"]) == [2, 8, 4, 6]
    assert list(res.table["status"]) == ["ok", "error", "ok", "ok"]
    assert "worker process died" in res.table["message"][1]
    assert log == [("pool", [8, 4]), ("alone", [4]), ("alone", [8]), ("pool", [6])]
    err = capsys.readouterr().err
    assert err.count("worker process died") == 1
    assert "sweep: a worker process died (BrokenProcessPool) with 2 runs in flight; each runs again alone" in err
    assert res.computed == 3 and res.reused == 1
