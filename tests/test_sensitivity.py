"""Sensitivity (sim/sensitivity.py): each factor's ends, the elasticity from common-random-number pairs, and what the
model's mechanisms make of a faster clock or slower memory.

The arithmetic is pinned with sim.run.run stubbed by a figure that is a known power of the factors (its
elasticity is the exponent, exactly); the mechanisms with real runs: on one saturated UltraSPARC T2 core the
pipelines hide memory latency, so the clock carries all of it, while the rx5670's in-order Itanium 2 splits it
as its CPI stack does."""

from __future__ import annotations

import dataclasses
import math

import pytest
from click.testing import CliRunner

from sim import cli
from sim import sensitivity as sn
from sim import sweep as sw
from sim.config import OltpsimError
from sim.scenario import apply_overrides, resolve
from sim.units import exact_quantity, parse
from tests.test_report import _steady_result

TINY_RUN = {"warmup": "0.2 s", "batch": "0.2 s", "min_batches": 2, "max_time": "0.4 s"}
BASE = {"profile": "t5220", "workload": "tpcc", "params": {"users": 2, "think_time": "0 s", "keying_time": "0 s"},
        "run": TINY_RUN}
GB, MB = 1024.0**3, 1024.0**2


def _stub(monkeypatch, figure, half_width=None):
    """sim.run.run as a Result whose TPM is figure(scenario, replication's seed); the scenarios run recorded."""
    import sim.run

    ran = []

    def fake(sc, progress=None):
        ran.append(sc)
        tpm = figure(sc, sc.spec.run.seed)
        return dataclasses.replace(_steady_result(), tpm=tpm, tpm_half_width=half_width(tpm) if half_width else None)
    monkeypatch.setattr(sim.run, "run", fake)
    return ran


def _power_law(sc, seed):
    """TPM = 1e5 (clock / 1.4 GHz)^0.8 (latency / 105 ns)^-0.3, times a factor of the replication's seed alone: the
    noise common random numbers share between a factor's two ends."""
    cpu, mem = sc.profile.cpu, sc.profile.memory
    return 1e5 * (cpu.clock / 1.4e9) ** 0.8 * (mem.latency / 105e-9) ** -0.3 * (1 + (seed % 97) / 1000)


def test_exact_quantity_is_read_back_to_a_rounding():
    """A factor's end is written as --set takes it: 10% above 1.4 GHz, 105 ns, 42 GB/s and 15,000 rpm, and 40%,
    parse back within 1e-15 relative, where format_quantity's four digits would turn 1.4001 GHz into 1.4 GHz."""
    for value, kind in [(1.54e9, "frequency"), (1.4001e9, "frequency"), (115.5e-9, "time"), (46.2 * GB, "bandwidth"),
                        (16500 / 60, "rotation"), (0.44, "fraction"), (3.6 * GB, "size"), (5e4, "rate")]:
        assert parse(exact_quantity(value, kind), kind) == pytest.approx(value, rel=1e-15)
    assert exact_quantity(1.4001e9, "frequency") == "1.4001 GHz"


def test_exact_quantity_keeps_twelve_significant_digits():
    """12 digits, not 10: 1.23456789012 GHz is written whole (a 10-digit rounding, 1.23456789 GHz, is 12 Hz off:
    small, but the point is that the end run is the end computed)."""
    assert exact_quantity(1.23456789012e9, "frequency") == "1.23456789012 GHz"


def test_the_elasticity_of_a_power_law_is_its_exponent_from_paired_replications(monkeypatch, tmp_path):
    """TPM a power of the clock (0.8) and of memory latency (-0.3), with a replication's noise common to every point:
    the elasticities are the exponents to 1e-12 with a zero interval (the noise cancels within each replication's
    pair; pairing runs of different replications would not). The factor that does not enter (the LLC) is 0. Ranked
    by |E|. Each end is 10% off, and the runs are the base and two per factor in each replication."""
    ran = _stub(monkeypatch, _power_law)
    s = sn.sensitivity(BASE, ["hardware.memory.latency", "hardware.cpu.clock", "hardware.cpu.llc_size"],
                       replications=3, out=tmp_path, executor="serial", progress=False)
    t = s.table.set_index("factor")
    assert list(t.index) == ["hardware.cpu.clock", "hardware.memory.latency", "hardware.cpu.llc_size"]
    assert t.loc["hardware.cpu.clock", "elasticity"] == pytest.approx(0.8, abs=1e-12)
    assert t.loc["hardware.memory.latency", "elasticity"] == pytest.approx(-0.3, abs=1e-12)
    assert t.loc["hardware.cpu.llc_size", "elasticity"] == pytest.approx(0.0, abs=1e-12)
    assert t["elasticity.ci95"].abs().max() < 1e-9
    assert t.loc["hardware.cpu.clock", "change.high"] == pytest.approx(1.1 ** 0.8 - 1, rel=1e-9)
    assert (t.loc["hardware.cpu.clock", "low"], t.loc["hardware.cpu.clock", "high"]) == ("1.26 GHz", "1.54 GHz")
    assert len(ran) == 3 * 7
    clocks = sorted({sc.profile.cpu.clock for sc in ran})
    assert clocks == pytest.approx([1.26e9, 1.4e9, 1.54e9], rel=1e-12)
    assert (tmp_path / "sensitivity.csv").read_text().splitlines()[1].startswith("hardware.cpu.clock,1.4 GHz,")


def test_one_replication_takes_its_interval_from_the_runs_own_in_quadrature(monkeypatch, tmp_path):
    """One replication: each end's TPM with a 95% half-width of 1% of itself gives an elasticity interval of
    hypot(1%, 1%) / ln(1.1 / 0.9) = 0.0705, as if the ends were independent; the text says so and how to narrow it."""
    _stub(monkeypatch, _power_law, half_width=lambda tpm: 0.01 * tpm)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], out=tmp_path, executor="serial", progress=False)
    assert s.table.loc[0, "elasticity.ci95"] == pytest.approx(math.hypot(0.01, 0.01) / math.log(1.1 / 0.9), rel=1e-9)
    assert "as if the two ends were independent" in s.text() and "-r 3" in s.text()


def test_an_end_the_scenario_refuses_leaves_the_factor_one_sided_from_the_base(monkeypatch, tmp_path):
    """mlp is at least 1 (an in-order core's 1.0 cannot go 10% lower): the factor runs from the base to 1.1, and
    TPM proportional to mlp^0.5 gives E = 0.5 over that span; its low end prints as a dash."""
    _stub(monkeypatch, lambda sc, _seed: 1e5 * sc.profile.cpu.mlp ** 0.5)
    s = sn.sensitivity(BASE, ["hardware.cpu.mlp"], out=tmp_path, executor="serial", progress=False)
    row = s.table.iloc[0]
    assert row["low"] == "—" and row["high"] == "1.1" and row["elasticity"] == pytest.approx(0.5, abs=1e-12)
    assert math.isnan(row["change.low"])
    assert "cpu.mlp" in s.text() and "— → 1.1" in s.text()


def _factor(keys, step=0.1, base=BASE):
    sc = resolve(base)
    return sn.make_factor(sc, base, "<test>", keys, step)


def test_a_whole_number_steps_to_the_nearest_value_the_scenario_takes_and_its_companions_follow():
    """A T2 core's 8 strands on 2 pipelines: 7 and 9 are refused (not a multiple of 2), so the ends are 6 and 10;
    cores 8 -> 7 and 9 with the LLC moving by the same ratio (the cache per core kept); a 50% step of 8 cores is
    4 and 12; 6 drives at 10% step by one. A whole number after a scaled setting is refused (it has its own steps)."""
    strands = _factor(("hardware.cpu.strands_per_core",))
    assert (strands.low, strands.high) == ((6,), (10,))
    cores = _factor(("hardware.cpu.cores_per_socket", "hardware.cpu.llc_size"))
    assert cores.name == "hardware.cpu.cores_per_socket+llc_size"
    assert cores.low == (7, pytest.approx(3.5 * MB)) and cores.high == (9, pytest.approx(4.5 * MB))
    assert cores.setting(cores.high) == {"hardware.cpu.cores_per_socket": 9, "hardware.cpu.llc_size": "4.5 MB"}
    assert (_factor(("hardware.cpu.cores_per_socket",), step=0.5).low,
            _factor(("hardware.cpu.cores_per_socket",), step=0.5).high) == ((4,), (12,))
    assert _factor(("hardware.storage.disk_groups.array.count",)).high == (7,)
    with pytest.raises(OltpsimError, match="a whole number moves by its own steps; expected it first"):
        _factor(("hardware.cpu.llc_size", "hardware.cpu.cores_per_socket"))


def test_a_params_factor_is_read_from_the_resolved_workload_parameters():
    """think_time '1 s' is 1.0 s once resolved, a time: its ends are 0.9 s and 1.1 s, set as '1.1 s' (the scenario's
    raw text '1 s' is no number to scale)."""
    thinking = apply_overrides(BASE, {"think_time": "1 s"})
    f = _factor(("params.think_time",), base=thinking)
    assert f.high == (pytest.approx(1.1),) and f.setting(f.high) == {"params.think_time": "1.1 s"}


def test_a_seek_curve_moves_as_one_and_parse_factor_reads_siblings():
    """'…disk.avg_seek+track_seek+full_seek' names three siblings; scaled together the curve stays one drive's
    (avg_seek alone outside it is refused, so alone it would have no end at all)."""
    keys = sn.parse_factor("hardware.storage.disk_groups.array.disk.avg_seek+track_seek+full_seek")
    assert keys == tuple(f"hardware.storage.disk_groups.array.disk.{k}" for k in ("avg_seek", "track_seek", "full_seek"))
    curve = _factor(keys)
    assert curve.high == pytest.approx((3.85e-3, 0.22e-3, 7.04e-3), rel=1e-12) and not curve.refused
    alone = _factor(keys[:1], step=0.95)   # 0.175 ms and 6.825 ms: both outside the 0.2-6.4 ms curve
    assert alone.low is None and alone.high is None and "between track_seek" in alone.refused
    assert sn.parse_factor("think_time") == ("params.think_time",)


def test_the_default_factors_are_the_machines_and_the_storage_the_base_used():
    """CPU and memory always (with the remote latency where the profile has one); each device the base run did I/O
    on (a disk group's drives, seek curve, rpm, media rate and controller; a flash array's bricks, service time and
    fabric); the buffer cache only where the scenario sizes one."""
    sc = resolve(BASE)
    assert sn.default_keys(sc, []) == [
        ("hardware.cpu.clock",), ("hardware.cpu.cpi_issue",), ("hardware.cpu.llc_size",),
        ("hardware.cpu.cores_per_socket",), ("hardware.cpu.strands_per_core",), ("hardware.memory.latency",),
        ("hardware.memory.bandwidth_per_socket",), ("hardware.memory.size",)]
    array = [k for k in sn.default_keys(sc, ["array"]) if "storage" in k[0]]
    assert [k[0].rpartition("array.")[2] for k in array] == ["count", "controllers", "disk.rpm", "disk.avg_seek",
                                                            "disk.media_rate",
                                                            "controller.bandwidth", "controller.overhead"]
    assert len(array[3]) == 3
    t5440 = resolve({**BASE, "profile": "t5440"})
    assert ("hardware.memory.latency", "hardware.memory.remote_latency") in sn.default_keys(t5440, [])
    cached = resolve(apply_overrides(BASE, {"database.db_cache": "1 GB"}))
    assert sn.default_keys(cached, [])[-1] == ("database.db_cache",)
    xeon = resolve({**BASE, "profile": "xeon-e5-2643v3-2s"})
    flash = [k[0] for k in sn.default_keys(xeon, xeon.profile.storage.device_names()) if "flash" in k[0]]
    assert [k.rpartition(".")[2] for k in flash] == ["bricks", "service_time", "fabric_latency", "fabric_bandwidth"]


def test_without_factors_the_base_runs_first_and_its_devices_choose_the_storage(monkeypatch, tmp_path):
    """The stub's Result did I/O on 'array' (1,234 IOPS), none on 'internal': the array's six factors are run, the
    internal drives' are not."""
    ran = _stub(monkeypatch, _power_law)
    s = sn.sensitivity(BASE, out=tmp_path, executor="serial", progress=False)
    names = list(s.table["factor"])
    assert any(n.startswith("hardware.storage.disk_groups.array.") for n in names)
    assert not any("internal" in n for n in names)
    assert len(ran) == 1 + sum(len(f.ends) for f in s.factors)   # (one controller: a second one, no fewer)


def test_a_base_that_gives_no_figure_runs_nothing_more_and_the_command_exits_1(monkeypatch, tmp_path):
    """The base out of memory: no factor is run (nothing to move), the text has no base figure, exit 1."""
    import sim.run

    def oom(sc, progress=None):
        return dataclasses.replace(_steady_result(), status="out_of_memory", message="SGA exceeds memory", tpm=None)
    monkeypatch.setattr(sim.run, "run", oom)
    monkeypatch.setattr(sw, "sweep", lambda *a, **kw: _serial(*a, **kw))
    got = CliRunner().invoke(cli.main, ["sensitivity", "--profile", "t5220", "--workload", "tpcc", "--set", "users=2",
                                        "--out", str(tmp_path)])
    assert got.exit_code == 1 and "the base gave no figure" in got.stderr
    assert "tpm (TPM) at the base: —" in got.stdout


def test_a_base_with_no_figure_draws_no_tornado_and_the_table_keeps_its_columns(monkeypatch, tmp_path):
    """slob's 1 TB schema cached on a 256 GB Xeon is out of memory at the base: no factor runs, so the table has no
    row, but its columns are there (s.table['elasticity'] raised KeyError, and --plot crashed the command with a
    traceback); --plot says it drew nothing, and the command exits 1 as for any base without a figure."""
    import sim.run

    def oom(sc, progress=None):
        return dataclasses.replace(_steady_result(), status="out_of_memory", message="SGA exceeds memory", tpm=None)
    monkeypatch.setattr(sim.run, "run", oom)
    monkeypatch.setattr(sw, "sweep", lambda *a, **kw: _serial(*a, **kw))
    png = tmp_path / "t.png"
    got = CliRunner().invoke(cli.main, ["sensitivity", "--profile", "t5220", "--workload", "tpcc", "--set", "users=2",
                                        "--out", str(tmp_path / "s"), "--plot", str(png)])
    assert got.exit_code == 1, got.output
    assert f"--plot {png}: not drawn" in got.stderr and not png.exists()
    s = sn.sensitivity(BASE, out=tmp_path / "s", executor="serial", progress=False)
    assert len(s.table) == 0 and {"factor", "elasticity", "elasticity.ci95", "x.low"} <= set(s.table.columns)


_SWEEP = sw.sweep


def _serial(*args, **kw):
    return _SWEEP(*args, **{**kw, "executor": "serial", "workers": None})


def test_the_command_prints_the_ranked_table_with_short_names_and_draws_the_tornado(monkeypatch, tmp_path):
    """The table ranks clock (+0.80) over latency (-0.30), names them without 'hardware.', and says where the full
    names are; --plot writes a PNG whose bars are the two ends' % changes."""
    _stub(monkeypatch, _power_law)
    monkeypatch.setattr(sw, "sweep", _serial)
    png = tmp_path / "t.png"
    got = CliRunner().invoke(cli.main, ["sensitivity", "--profile", "t5220", "--workload", "tpcc", "--set", "users=2",
                                        "--factor", "hardware.memory.latency", "--factor", "hardware.cpu.clock",
                                        "--out", str(tmp_path / "s"), "--plot", str(png)])
    assert got.exit_code == 0, got.output
    lines = got.stdout.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("---"))
    assert lines[rule + 1].split()[:2] == ["cpu.clock", "1.4"] and "+0.80" in lines[rule + 1]
    assert lines[rule + 2].split()[0] == "memory.latency" and "-0.30" in lines[rule + 2]
    assert "names them in full" in got.stdout and png.stat().st_size > 0
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], out=tmp_path / "s2", executor="serial", progress=False)
    bars = s.plot().axes[0].patches
    assert [b.get_width() for b in bars] == pytest.approx([100 * (0.9 ** 0.8 - 1), 100 * (1.1 ** 0.8 - 1)])


@pytest.mark.parametrize("args, message", [
    (["--step", "0%"], "--step 0: expected a fraction between 0% and 100%"),
    (["--step", "100%"], "--step 1: expected a fraction between 0% and 100%"),
    (["--step", "ten"], "--step 'ten'"),
    (["--factor", "hardware.cpu.clok"], "--factor hardware.cpu.clok: no such setting in the scenario"),
    (["--factor", "database.db_cache"], "database.db_cache is None in this scenario; expected a positive number"),
    (["--factor", "hardware.cpu.clock", "--factor", "hardware.cpu.clock"], "given twice"),
    (["--factor", "hardware.cpu.clock+"], "expected a setting, or settings scaled together joined by +"),
    (["--factor", "hardware.cpu.model"], "expected a positive number to scale"),
    (["--step", "95%", "--factor", "hardware.storage.disk_groups.array.disk.avg_seek"],
     "--factor hardware.storage.disk_groups.array.disk.avg_seek: neither end 95% away runs"),
    (["--factor", "hardware.cpu.clock", "--plot", "tornado.txt"],
     "--plot tornado.txt: a .txt file; expected a picture, e.g. tornado.png"),
    (["--factor", "hardware.cpu.clock", "--plot", "/nonexistent-oltpsim/t.png"],
     "--plot /nonexistent-oltpsim/t.png: folder /nonexistent-oltpsim does not exist"),
    (["--factor", "hardware.cpu.clock", "--metric", "tmp"], "--metric tmp:"),
    (["--set", "profile=t5440"], "--profile t5220 and --set profile=t5440: the profile given twice"),
    (["--factor", "hardware.storage.disk_groups.nosuch.count"],
     "--factor hardware.storage.disk_groups.nosuch.count: no such setting in the scenario"),
])
def test_bad_input_is_refused_before_anything_runs(monkeypatch, tmp_path, args, message):
    """Exit 2, one line naming the option and value, and no run made."""
    ran = _stub(monkeypatch, _power_law)
    got = CliRunner().invoke(cli.main, ["sensitivity", "--profile", "t5220", "--workload", "tpcc", "--set", "users=2",
                                        *args, "--out", str(tmp_path / "s")])
    assert got.exit_code == 2 and message in got.stderr, got.output
    assert ran == [] and not (tmp_path / "s").exists()


def test_a_saturated_cmt_core_hides_memory_latency_so_the_clock_carries_it_all(tmp_path):
    """One T2 core (8 strands, 2 pipelines) with 16 users that never think: the pipelines stay busy while strands
    stall, so TPM follows the clock (E > 0.9) and its issue CPI exactly against it (a clock and a CPI enter as one
    ratio: E_clock + E_cpi within 0.05), while memory latency barely matters (|E| < 0.05)."""
    base = {**BASE, "params": {**BASE["params"], "users": 16}, "hardware": {"cpu": {"cores_per_socket": 1}},
            "run": {"warmup": "1 s", "batch": "1 s", "min_batches": 8, "max_time": "8 s"}}
    s = sn.sensitivity(base, ["hardware.cpu.clock", "hardware.cpu.cpi_issue", "hardware.memory.latency"],
                       out=tmp_path, executor="serial", progress=False)
    e = dict(zip(s.table["factor"], s.table["elasticity"]))
    assert e["hardware.cpu.clock"] > 0.9 and abs(e["hardware.cpu.clock"] + e["hardware.cpu.cpi_issue"]) < 0.05
    assert abs(e["hardware.memory.latency"]) < 0.05


def test_an_in_order_core_splits_the_figure_between_clock_and_memory_as_its_cpi_stack_does(tmp_path):
    """The rx5670 (four single-strand Itanium 2s) nearly saturated: time per instruction is issue cycles / clock +
    stalls at the memory latency, so E_clock / -E_latency is the CPI stack's issue / data-stall ratio (1.2 / 0.76),
    within 10%, whatever share of the time goes to waits that neither moves."""
    base = {**BASE, "profile": "rx5670", "params": {**BASE["params"], "users": 32},
            "run": {"warmup": "1 s", "batch": "1 s", "min_batches": 8, "max_time": "8 s"}}
    s = sn.sensitivity(base, ["hardware.cpu.clock", "hardware.memory.latency"], out=tmp_path, executor="serial",
                       progress=False)
    e = dict(zip(s.table["factor"], s.table["elasticity"]))
    cpi = s.runs.iloc[0]
    assert e["hardware.memory.latency"] < -0.25
    assert e["hardware.cpu.clock"] / -e["hardware.memory.latency"] == pytest.approx(
        cpi["extra.cpi_issue"] / cpi["extra.cpi_data_stall"], rel=0.10)


def test_an_end_whose_busiest_resource_is_another_says_so_on_its_row(monkeypatch, tmp_path):
    """At the high clock the stub's strands are all 100% busy (busiest: strands, past the array's 42%): the clock's row
    names that end's bound; the latency's row, whose ends keep the base's (the array), names none."""
    import sim.run

    def fake(sc, progress=None):
        r = dataclasses.replace(_steady_result(), tpm=_power_law(sc, sc.spec.run.seed))
        return dataclasses.replace(r, strand_utilisation=[100.0] * 8) if sc.profile.cpu.clock > 1.5e9 else r
    monkeypatch.setattr(sim.run, "run", fake)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock", "hardware.memory.latency"], out=tmp_path, executor="serial",
                       progress=False)
    rows = {line.split()[0]: line for line in s.text().splitlines() if line.startswith(("cpu.", "memory."))}
    assert s.base_busiest == "array %b 42%"
    assert rows["cpu.clock"].endswith("high: strands (mpstat) 100%") and rows["memory.latency"].endswith("± 0.17")


def test_factors_of_equal_elasticity_keep_the_order_they_were_given_in(monkeypatch, tmp_path):
    """A figure no factor moves: every elasticity is 0, a tie, so the rows stay as --factor listed them (the
    descending sort reversed the ties: the last given came first)."""
    _stub(monkeypatch, lambda sc, seed: 1e5)
    given = ["hardware.cpu.clock", "hardware.memory.latency", "hardware.cpu.llc_size"]
    s = sn.sensitivity(BASE, given, out=tmp_path, executor="serial", progress=False)
    assert list(s.table["factor"]) == given


def test_the_table_gives_each_factors_values_as_numbers_for_pandas(monkeypatch, tmp_path):
    """base, low and high are texts with units (for reading); x.base, x.low and x.high are the first setting's
    values in SI units (1.4 GHz is 1.4e9 Hz; 8 cores steps to 7 and 9), NaN at an end the scenario refuses (mlp
    cannot go below 1), so the elasticity can be recomputed or plotted from the table alone."""
    _stub(monkeypatch, _power_law)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock", "hardware.cpu.cores_per_socket", "hardware.cpu.mlp"],
                       out=tmp_path, executor="serial", progress=False)
    t = s.table.set_index("factor")
    assert list(t.loc["hardware.cpu.clock", ["x.base", "x.low", "x.high"]]) == pytest.approx([1.4e9, 1.26e9, 1.54e9])
    assert list(t.loc["hardware.cpu.cores_per_socket", ["x.base", "x.low", "x.high"]]) == [8, 7, 9]
    assert math.isnan(t.loc["hardware.cpu.mlp", "x.low"]) and t.loc["hardware.cpu.mlp", "x.high"] == pytest.approx(1.1)
    assert t["x.base"].dtype.kind == "f"


def test_a_time_figure_says_lower_is_better_and_a_batch_run_says_where_an_interval_comes_from(monkeypatch, tmp_path):
    """elapsed = 10 s x 1.4 GHz / clock: E = -1 exactly, and for a time the note says a negative elasticity is the
    gain (a planner reads +1 as good from TPM). One replication of a figure with no interval of its own (a batch
    job's elapsed) does not claim one 'from each run's own interval': it says -r 3 gives one."""
    import sim.run

    def fake(sc, progress=None):
        return dataclasses.replace(_steady_result(), elapsed=10 * 1.4e9 / sc.profile.cpu.clock)
    monkeypatch.setattr(sim.run, "run", fake)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], metric="elapsed", out=tmp_path, executor="serial",
                       progress=False)
    assert s.table.loc[0, "elasticity"] == pytest.approx(-1.0, abs=1e-12)
    text = " ".join(s.text().split())
    assert "elapsed is a time: lower is better, so a negative elasticity is a gain" in text
    assert "from each run's own interval" not in text and "no interval of their own" in text and "-r 3" in text


def test_a_base_figure_of_zero_has_no_change_to_scale_and_the_command_says_why(monkeypatch, tmp_path):
    """A tpcc run too short for a transaction to complete gives TPM 0: no % change is defined from 0, so nothing
    more runs (the default factors wait on the base), the command exits 1 and names the figure and its 0."""
    _stub(monkeypatch, lambda sc, seed: 0.0)
    monkeypatch.setattr(sw, "sweep", _serial)
    got = CliRunner().invoke(cli.main, ["sensitivity", "--profile", "t5220", "--workload", "tpcc", "--set", "users=2",
                                        "--out", str(tmp_path)])
    assert got.exit_code == 1 and "the base's tpm is 0" in got.stderr, got.output
    import pandas as pd
    assert pd.read_csv(tmp_path / "results.csv")["point"].tolist() == [0]


def test_the_tornado_names_factors_as_the_table_does_with_their_ends(monkeypatch, tmp_path):
    """The y labels are the printed table's short names with each factor's own ends (a whole number's 7 -> 9 is not
    the legend's 10%) and E; the x label gives the base figure as the table prints it (146,900, not 1.469e+05)."""
    _stub(monkeypatch, lambda sc, seed: 146_900 * (sc.profile.cpu.clock / 1.4e9) ** 0.8)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock", "hardware.cpu.cores_per_socket"], out=tmp_path,
                       executor="serial", progress=False)
    ax = s.plot().axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["cpu.cores_per_socket  7 → 9  E=+0.00", "cpu.clock  1.26 GHz → 1.54 GHz  E=+0.80"]
    assert "from 146,900 TPM" in ax.get_xlabel()


def test_a_metric_that_is_not_a_number_is_refused_by_name_not_blamed_on_the_base(monkeypatch, tmp_path):
    """extra.in_memory is a flag (ctas's): the base ran and gave it, so 'the base gave no figure (the outcome column
    says why)' with an empty outcome column was wrong; the error names the metric, its value and what was expected,
    and where the runs are kept."""
    import sim.run

    def fake(sc, progress=None):
        return dataclasses.replace(_steady_result(), extra={**_steady_result().extra, "in_memory": False})
    monkeypatch.setattr(sim.run, "run", fake)
    with pytest.raises(OltpsimError, match=r"--metric extra.in_memory: False at the base, not a number; expected a "
                                           r"figure with a number"):
        sn.sensitivity(BASE, ["hardware.cpu.clock"], metric="extra.in_memory", out=tmp_path, executor="serial",
                       progress=False)


def test_a_resource_that_tops_the_list_only_because_the_bound_eased_is_not_named_as_a_new_bound(monkeypatch, tmp_path):
    """At the high clock the array's %b falls from 42% to 20%, so the pipelines' 40% now top the busiest list: that
    is the base's bound easing, not another bound (create_index's '1 strand full 91%' fell under its 90% threshold
    and 'array %b 24%' was printed as the end's bound; slob's 4% strands gave way to a 4% flash array). An end's
    busiest is named only when it is at least 50% busy: LGWR at 92% beside the base's 96% strands is a new bound
    (a ninth T2 core at 64 users), a busier strands figure is the same one."""
    import sim.run

    def fake(sc, progress=None):
        r = dataclasses.replace(_steady_result(), tpm=_power_law(sc, sc.spec.run.seed))
        if sc.profile.cpu.clock > 1.5e9:
            r = dataclasses.replace(r, devices={"array": {**r.devices["array"], "util_pct": 20.0}})
        return r
    monkeypatch.setattr(sim.run, "run", fake)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], out=tmp_path, executor="serial", progress=False)
    assert s.table.loc[0, "busiest.high"] == "pipelines (corestat) 40%"
    row = next(line for line in s.text().splitlines() if line.startswith("cpu.clock"))
    assert "high:" not in row
    assert [sn._another_bound(end, base) for end, base in [
        ("LGWR 92%", "strands (mpstat) 96%"), ("array %b 24%", "1 strand full 91%"),
        ("strands (mpstat) 97%", "strands (mpstat) 96%"), ("LGWR 50%", ""), ("", "LGWR 50%")]] == [
        True, False, False, True, False]


def test_an_elasticity_that_rounds_to_zero_prints_without_a_minus():
    """-4e-6 (rman's drives, which its CPU-bound channels do not use) printed as '-0.00' in the table and the
    tornado, read as a sign; it rounds to +0.00 as an exact 0 does. Two decimals otherwise, with the sign."""
    assert [sn._signed(x) for x in (-4e-6, 0.0, -0.004, -0.006, 0.8)] == ["+0.00", "+0.00", "+0.00", "-0.01", "+0.80"]


def test_a_machine_of_single_core_single_strand_cpus_scales_its_sockets_not_a_core_or_strand_it_lacks():
    """The ue10000's 16 UltraSPARC IIs and the rx5670's 4 Itanium 2s have one core of one strand a socket: the
    default 'cores_per_socket 1 -> 2' was a one-sided +100% to a dual-core chip that never existed, and strands 1 -> 2
    a threading they lack; their CPUs are counted in sockets (16 -> 14 and 18, 4 -> 3 and 5). A T2's 8 cores of 8
    strands keep both factors."""
    for profile, sockets in (("ue10000", 16), ("rx5670", 4)):
        sc = resolve({**BASE, "profile": profile})
        keys = [k[0] for k in sn.default_keys(sc, [])]
        assert "hardware.cpu.sockets" in keys, profile
        assert "hardware.cpu.cores_per_socket" not in keys and "hardware.cpu.strands_per_core" not in keys
    ue = resolve({**BASE, "profile": "ue10000"})
    f = sn.make_factor(ue, {**BASE, "profile": "ue10000"}, "<test>", ("hardware.cpu.sockets",), 0.1)
    assert (f.low, f.high) == ((14,), (18,))
    t2 = [k[0] for k in sn.default_keys(resolve(BASE), [])]
    assert "hardware.cpu.cores_per_socket" in t2 and "hardware.cpu.strands_per_core" in t2
    assert "hardware.cpu.sockets" not in t2


def test_a_factor_that_moves_the_instances_degree_of_parallelism_says_so_on_its_row(monkeypatch, tmp_path):
    """CTAS on the T5220 took 9.9% longer with 9 cores than with 8 (E = +0.79, 'more cores slow it'): the instance's
    default DOP follows cpu_count (128 -> 112 and 144) and the job's serial strand has more PX servers to serve
    (with dop=128 set, E = 0). The row says the DOP moved, so the planner sees the policy, not the cores; a factor
    that leaves the DOP (the clock) says nothing."""
    import sim.run

    def fake(sc, progress=None):
        cpu = sc.profile.cpu
        dop = 2 * cpu.cores_per_socket * cpu.strands_per_core
        r = dataclasses.replace(_steady_result(), elapsed=7.3 * dop / 128, extra={**_steady_result().extra, "dop": dop})
        return r
    monkeypatch.setattr(sim.run, "run", fake)
    s = sn.sensitivity(BASE, ["hardware.cpu.cores_per_socket", "hardware.cpu.clock"], metric="elapsed",
                       out=tmp_path, executor="serial", progress=False)
    t = s.table.set_index("factor")
    assert t.loc["hardware.cpu.cores_per_socket", "dop"] == "112 → 144" and t.loc["hardware.cpu.clock", "dop"] == ""
    row = next(line for line in s.text().splitlines() if line.startswith("cpu.cores_per_socket"))
    assert row.endswith("DOP 128 at the base: 112 → 144")
    assert "--set dop=N holds it" in " ".join(s.text().split())


def test_a_metric_the_base_run_lacks_stops_after_the_base_not_after_every_factor(monkeypatch, tmp_path):
    """device.nosuch.iops passes the name check (device.NAME. is a prefix whose names only a run knows): with the
    default factors the base runs first, and its table lacks the column, so nothing more runs (the 29 runs of a
    T5220's factors were made and then refused)."""
    ran = _stub(monkeypatch, _power_law)
    with pytest.raises(OltpsimError, match="--metric device.nosuch.iops: no such figure in the runs"):
        sn.sensitivity(BASE, metric="device.nosuch.iops", out=tmp_path, executor="serial", progress=False)
    assert len(ran) == 1


def test_a_factor_of_several_settings_is_shown_by_its_first_settings_values():
    """cores_per_socket+llc_size prints as the cores (8, 7 and 9), the setting its steps are made in, not the cache
    that follows it (4 MB): the table's base/low/high columns and the tornado's labels read it."""
    cores = _factor(("hardware.cpu.cores_per_socket", "hardware.cpu.llc_size"))
    assert [cores.shown(v) for v in (cores.base, cores.low, cores.high)] == ["8", "7", "9"]


def test_a_setting_named_twice_in_one_factor_is_refused():
    """'clock+clock' would scale one setting twice in one override: refused by name, as bad input."""
    with pytest.raises(OltpsimError, match=r"--factor 'hardware.cpu.clock\+clock': a setting named twice"):
        sn.parse_factor("hardware.cpu.clock+clock")


def test_a_whole_number_moves_by_at_least_one_and_at_most_to_twice_or_down_to_one():
    """The rx5670's 4 sockets at 10% (0.4 of a socket) still step by one, to 3 and 5 (a step of 0 would run the base
    twice as its 'ends'); a T2 of one core cannot go to 0 cores, so its only end is 2, twice it (one-sided); two
    cores step down to 1, the smallest machine there is."""
    rx = {**BASE, "profile": "rx5670"}
    sockets = sn.make_factor(resolve(rx), rx, "<test>", ("hardware.cpu.sockets",), 0.1)
    assert (sockets.low, sockets.high) == ((3,), (5,))
    for cores, ends in ((1, (None, (2,))), (2, ((1,), (3,)))):
        one = apply_overrides(BASE, {"hardware.cpu.cores_per_socket": cores})
        f = _factor(("hardware.cpu.cores_per_socket",), base=one)
        assert (f.low, f.high) == ends, cores


def test_a_whole_numbers_companions_move_by_its_ratio_unrounded():
    """Only the first setting is a whole number: cores 8 -> 7 takes cpi_issue (1.0) to 0.875 with it, not rounded
    back to 1 (which would leave it unmoved at the low end)."""
    f = _factor(("hardware.cpu.cores_per_socket", "hardware.cpu.cpi_issue"))
    assert f.low == (7, pytest.approx(0.875, rel=1e-12)) and f.high == (9, pytest.approx(1.125, rel=1e-12))


def test_a_factor_with_no_end_gives_the_first_ends_reason():
    """avg_seek alone at 95% is refused at both ends; the reason kept is the low end's, the first tried (175 us,
    under track_seek), so the message matches the order the ends are listed in."""
    alone = _factor(("hardware.storage.disk_groups.array.disk.avg_seek",), step=0.95)
    assert "got '175 us'" in alone.refused


def test_an_end_is_set_as_its_exact_value_not_a_four_digit_rounding():
    """A 12.3% step of 1.4 GHz is 1.5722 GHz: the override --set receives is '1.5722 GHz' (format_quantity's four
    digits would run 1.572 GHz, so the elasticity would be computed for an end that did not run)."""
    f = _factor(("hardware.cpu.clock",), step=0.123)
    assert f.setting(f.high) == {"hardware.cpu.clock": "1.5722 GHz"}


def test_cores_are_the_cpu_factor_where_a_socket_holds_several_or_the_board_one():
    """A T5440's 4 sockets of 8 cores: cores_per_socket (a 9th core on each chip) and sockets (a chip more or less,
    as it is sold with 2 or 4), in that order; a T5220 with one of its T2's cores enabled (one socket) keeps
    cores_per_socket only: the chip has more cores to give, and the board no second socket."""
    t5440 = [k[0] for k in sn.default_keys(resolve({**BASE, "profile": "t5440"}), [])]
    assert t5440[3:6] == ["hardware.cpu.cores_per_socket", "hardware.cpu.sockets", "hardware.cpu.strands_per_core"]
    one = [k[0] for k in sn.default_keys(resolve(apply_overrides(BASE, {"hardware.cpu.cores_per_socket": 1})), [])]
    assert "hardware.cpu.cores_per_socket" in one and "hardware.cpu.sockets" not in one


def test_a_setting_of_zero_or_one_the_scenario_lacks_is_no_default_factor():
    """A controller overhead of 0 cannot be scaled by a ratio (10% of nothing), so it is left out of the defaults, and
    asked for as a factor it is refused by name; a key with no such setting has no value either."""
    sc = resolve(apply_overrides(BASE, {"hardware.storage.disk_groups.array.controller.overhead": "0 ms"}))
    keys = [k[0] for k in sn.default_keys(sc, ["array"])]
    assert "hardware.storage.disk_groups.array.controller.bandwidth" in keys
    assert "hardware.storage.disk_groups.array.controller.overhead" not in keys
    assert not sn._has_value(sc, "hardware.cpu.nosuch")
    with pytest.raises(OltpsimError, match="controller.overhead is 0.0 in this scenario; expected a positive number"):
        sn.make_factor(sc, apply_overrides(BASE, {"hardware.storage.disk_groups.array.controller.overhead": "0 ms"}),
                       "<test>", ("hardware.storage.disk_groups.array.controller.overhead",), 0.1)


def test_the_row_gives_the_low_ends_change_first_and_a_new_bound_at_the_low_end(monkeypatch, tmp_path):
    """TPM ~ clock^0.8: the low end (1.26 GHz) is 0.9^0.8 - 1 = -8.1%, the high end 1.1^0.8 - 1 = +7.9%, in that
    order under 'change at low', 'at high'. At the low clock LGWR is 80% busy (past the array's 42%): the low end
    has another bound, named on the row as the high end's would be."""
    import sim.run

    def fake(sc, progress=None):
        r = dataclasses.replace(_steady_result(), tpm=_power_law(sc, sc.spec.run.seed))
        slow = sc.profile.cpu.clock < 1.3e9
        return dataclasses.replace(r, extra={**r.extra, "lgwr_busy_pct": 80.0}) if slow else r
    monkeypatch.setattr(sim.run, "run", fake)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], out=tmp_path, executor="serial", progress=False)
    row = next(line for line in s.text().splitlines() if line.startswith("cpu.clock"))
    assert row.index("-8.1%") < row.index("+7.9%") and row.endswith("low: LGWR 80%")


def test_the_heading_gives_the_base_its_bound_the_step_and_the_replications(monkeypatch, tmp_path):
    """The line above the table: the base figure, its busiest resource (the stub's array at 42%), the step as a
    percentage (10%, not 0.1%) and the replications in the singular for one. With three, the interval is the
    pairs' own, so no note explains where it comes from."""
    _stub(monkeypatch, _power_law)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], out=tmp_path, executor="serial", progress=False)
    head = " ".join(s.text().split("\n\n")[0].split())
    assert "; busiest array %b 42%. Each factor 10% below and above (1 replication, common random numbers):" in head
    s3 = sn.sensitivity(BASE, ["hardware.cpu.clock"], replications=3, out=tmp_path / "r3", executor="serial",
                        progress=False)
    text3 = " ".join(s3.text().split())
    assert "(3 replications, common random numbers)" in text3 and "95% CI:" not in text3   # (its pairs give it)


def test_a_response_time_in_ms_is_a_time_too_with_its_interval_from_the_runs(monkeypatch, tmp_path):
    """rt.new_order.mean (ms) = 12.3 ms x 1.4 GHz / clock: E = -1, and the note and the tornado's axis say lower is
    better as for elapsed (s), the axis giving the base in ms as the table does; one run's interval comes from
    rt.new_order.mean_ci95, 0.42 ms of 12.3 ms at the base, the same share at each end: hypot(r, r) / ln(1.1 / 0.9)
    with r = 0.42 / 12.3."""
    import sim.run

    def fake(sc, progress=None):
        k = 1.4e9 / sc.profile.cpu.clock
        r = _steady_result()
        return dataclasses.replace(r, response={"new_order": {**r.response["new_order"], "mean": 0.0123 * k,
                                                              "mean_ci95": 0.00042 * k}})
    monkeypatch.setattr(sim.run, "run", fake)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], metric="rt.new_order.mean", out=tmp_path, executor="serial",
                       progress=False)
    assert s.table.loc[0, "elasticity"] == pytest.approx(-1.0, abs=1e-12)
    r = 0.42 / 12.3
    assert s.table.loc[0, "elasticity.ci95"] == pytest.approx(math.hypot(r, r) / math.log(1.1 / 0.9), rel=1e-9)
    assert "rt.new_order.mean is a time: lower is better" in " ".join(s.text().split())
    assert "from 12.3 ms (%; lower is better)" in s.plot().axes[0].get_xlabel()   # (the base in ms, not 0.0123)


LONG = "SGA exceeds the memory: 40 GB of buffer cache and 8 GB of shared pool in 32 GB after the kernel's 2 GB"


def test_an_end_that_fails_gives_its_outcome_on_the_row_no_elasticity_and_comes_last(monkeypatch, tmp_path):
    """The high clock's run is out of memory (the stub's, for the test): the clock has no elasticity and its row says
    why, the end and the run's status and message (cut at 80 characters in the printed table, whole in the csv); it
    sorts after the latency's -0.30 and the tornado leaves it out. The latency's interval still comes from its
    runs' own, so the note says so (not 'no interval of its own', which is for a figure without one)."""
    import sim.run

    def fake(sc, progress=None):
        if sc.profile.cpu.clock > 1.5e9:
            return dataclasses.replace(_steady_result(), status="out_of_memory", message=LONG, tpm=None)
        tpm = _power_law(sc, sc.spec.run.seed)
        return dataclasses.replace(_steady_result(), tpm=tpm, tpm_half_width=0.01 * tpm)
    monkeypatch.setattr(sim.run, "run", fake)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock", "hardware.memory.latency"], out=tmp_path, executor="serial",
                       progress=False)
    assert list(s.table["factor"]) == ["hardware.memory.latency", "hardware.cpu.clock"]
    clock = s.table.iloc[1]
    assert math.isnan(clock["elasticity"]) and math.isnan(clock["elasticity.ci95"])
    assert clock["outcome"] == f"high: out_of_memory: {LONG}" and s.table.iloc[0]["outcome"] == ""
    row = next(line for line in s.text().splitlines() if line.startswith("cpu.clock"))
    assert row.endswith(f"high: out_of_memory: {LONG}"[:80])
    assert "-8.1% — —" in " ".join(row.split())   # (the low end's change; none at high, no elasticity)
    text = " ".join(s.text().split())
    assert "from each run's own interval" in text and "no interval of their own" not in text
    assert [t.get_text().split()[0] for t in s.plot().axes[0].get_yticklabels()] == ["memory.latency"]


def test_a_one_sided_factor_that_moves_the_dop_compares_its_end_with_the_base(monkeypatch, tmp_path):
    """A T2 with one core: cores_per_socket runs only up to 2 (0 cores is no machine); the stub's DOP is 2 x cores x
    strands, 16 at the base and 32 at 2 cores, so the row says the DOP moved ('— → 32' beside 'DOP 16 at the base'):
    the base is the factor's other end, and its DOP is what the one end is compared with."""
    import sim.run

    def fake(sc, progress=None):
        dop = 2 * sc.profile.cpu.cores_per_socket * sc.profile.cpu.strands_per_core
        r = _steady_result()
        return dataclasses.replace(r, elapsed=7.3 * dop / 16, extra={**r.extra, "dop": dop})
    monkeypatch.setattr(sim.run, "run", fake)
    one = apply_overrides(BASE, {"hardware.cpu.cores_per_socket": 1})
    s = sn.sensitivity(one, ["hardware.cpu.cores_per_socket"], metric="elapsed", out=tmp_path, executor="serial",
                       progress=False)
    assert s.table.loc[0, "dop"] == "— → 32"
    assert next(line for line in s.text().splitlines() if line.startswith("cpu.cores")).endswith(
        "DOP 16 at the base: — → 32")


def test_a_factor_given_twice_in_another_order_is_refused_before_anything_runs(monkeypatch, tmp_path):
    """clock+cpi_issue and cpi_issue+clock are one factor (the same settings scaled together): the same runs twice
    over, refused as 'given twice' whatever the order of its settings."""
    ran = _stub(monkeypatch, _power_law)
    with pytest.raises(OltpsimError, match="--factor hardware.cpu.cpi_issue\\+clock: given twice"):
        sn.sensitivity(BASE, ["hardware.cpu.clock+cpi_issue", "hardware.cpu.cpi_issue+clock"], out=tmp_path,
                       executor="serial", progress=False)
    assert ran == []


def test_the_default_output_folder_is_named_by_the_profile_then_the_workload(monkeypatch, tmp_path):
    """Without --out the runs go to sensitivity-<profile>-<workload> in the current folder (the option's help says
    so, and a rerun with the same command finds them there to resume)."""
    _stub(monkeypatch, _power_law)
    monkeypatch.chdir(tmp_path)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], executor="serial", progress=False)
    assert str(s.out) == "sensitivity-t5220-tpcc" and (tmp_path / "sensitivity-t5220-tpcc" / "sensitivity.csv").exists()


def test_a_metric_the_runs_lack_is_refused_with_the_factors_given_too(monkeypatch, tmp_path):
    """With --factor the base is not run alone first, so the sweep's table is where device.nosuch.iops (a name the
    check before running lets through: device names are known from runs) is found missing: an error naming it and
    where the runs are, not a KeyError."""
    _stub(monkeypatch, _power_law)
    with pytest.raises(OltpsimError, match="--metric device.nosuch.iops: no such figure in the runs"):
        sn.sensitivity(BASE, ["hardware.cpu.clock"], metric="device.nosuch.iops", out=tmp_path, executor="serial",
                       progress=False)


def test_a_base_replication_without_the_figure_is_not_a_metric_that_is_no_number(monkeypatch, tmp_path):
    """One of three base runs gives no TPM (status ok; the stub's, as a run that completed no transaction of a type
    gives no mean for it): the others are numbers, so the metric is one, and the base is their mean, 1e5 x (1 +
    seed % 97 / 1000) over the two seeds that gave it."""
    import sim.run

    second = sw.replication_seed(resolve(BASE).spec.run.seed, 1)

    def fake(sc, progress=None):
        seed = sc.spec.run.seed
        tpm = None if seed == second and sc.profile.cpu.clock == 1.4e9 else 1e5 * (1 + (seed % 97) / 1000)
        return dataclasses.replace(_steady_result(), tpm=tpm, tpm_half_width=None)
    monkeypatch.setattr(sim.run, "run", fake)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], replications=3, out=tmp_path, executor="serial", progress=False)
    gave = [r for r in s.runs.to_dict("records") if r["point"] == 0 and r["tpm"] == r["tpm"]]
    assert len(gave) == 2 and s.base == pytest.approx(sum(r["tpm"] for r in gave) / 2, rel=1e-12)


def test_a_devices_factor_is_named_by_the_device_in_the_table():
    """A disk group's and a flash array's settings print from the device's name (array.count, flash.bricks), the
    rest of hardware. from its section (cpu.clock); a setting outside hardware keeps its name (database.db_cache)."""
    assert [sn._short(n) for n in ("hardware.storage.disk_groups.array.count",
                                   "hardware.storage.flash_arrays.flash.bricks", "hardware.cpu.clock",
                                   "database.db_cache")] == [
        "array.count", "flash.bricks", "cpu.clock", "database.db_cache"]


def test_a_batch_end_that_timed_out_gives_no_elasticity_from_its_time_limit(monkeypatch, tmp_path):
    """elapsed = 10 s x 1.4 GHz / clock, but the low clock's job stops at its time limit (status timeout, elapsed
    the 10.5 s it ran): that is not the job's time, so the clock has no elasticity and its row gives the timeout
    (counted, it would make E = ln(9.09 / 10.5) / ln(1.1 / 0.9) = -0.72 instead of -1)."""
    import sim.run

    def fake(sc, progress=None):
        r = dataclasses.replace(_steady_result(), elapsed=10 * 1.4e9 / sc.profile.cpu.clock)
        if sc.profile.cpu.clock < 1.3e9:
            return dataclasses.replace(r, status="timeout", message="not finished", elapsed=10.5)
        return r
    monkeypatch.setattr(sim.run, "run", fake)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], metric="elapsed", out=tmp_path, executor="serial",
                       progress=False)
    assert math.isnan(s.table.loc[0, "elasticity"]) and math.isnan(s.table.loc[0, "elapsed.low"])
    assert s.table.loc[0, "outcome"] == "low: timeout: not finished"


def test_a_points_busiest_is_the_one_most_replications_name_at_their_mean(monkeypatch, tmp_path):
    """Three base replications: the array at 60% and 64% in two, the strands 100% busy in the third. The base's
    bound is the array (named by two of three) at 62%, the mean of the runs that name it: not the last run's
    strands, the array's busiest run (64%) or a mean taking in the strands' 100% (75%)."""
    import sim.run

    seed = resolve(BASE).spec.run.seed
    util = {sw.replication_seed(seed, 0): 60.0, sw.replication_seed(seed, 1): 64.0}

    def fake(sc, progress=None):
        r = dataclasses.replace(_steady_result(), tpm=_power_law(sc, sc.spec.run.seed))
        if sc.spec.run.seed in util:
            return dataclasses.replace(r, devices={"array": {**r.devices["array"], "util_pct": util[sc.spec.run.seed]}})
        return dataclasses.replace(r, strand_utilisation=[100.0] * 8)
    monkeypatch.setattr(sim.run, "run", fake)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], replications=3, out=tmp_path, executor="serial", progress=False)
    assert s.base_busiest == "array %b 62%"


def test_two_replications_give_the_mean_of_their_elasticities_and_students_interval(monkeypatch, tmp_path):
    """TPM ~ clock^0.7 in one replication and clock^0.9 in the other (noise that is not common to the ends): each
    pair gives its exponent exactly, E is their mean 0.8, and the interval Student's t with 1 degree of freedom,
    t(0.975, 1) x sd / sqrt(2) = 12.706 x 0.1 (sd 0.1414), from two replications as from more."""
    import sim.run

    first = resolve(BASE).spec.run.seed

    def fake(sc, progress=None):
        k = 0.7 if sc.spec.run.seed == first else 0.9
        return dataclasses.replace(_steady_result(), tpm=1e5 * (sc.profile.cpu.clock / 1.4e9) ** k, tpm_half_width=None)
    monkeypatch.setattr(sim.run, "run", fake)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], replications=2, out=tmp_path, executor="serial", progress=False)
    assert s.table.loc[0, "elasticity"] == pytest.approx(0.8, abs=1e-12)
    assert s.table.loc[0, "elasticity.ci95"] == pytest.approx(12.7062 * 0.1, rel=1e-4)


def test_an_end_with_a_figure_of_zero_or_no_interval_gives_no_elasticity_or_no_interval(monkeypatch, tmp_path):
    """The low clock completes no transaction (TPM 0): no logarithm of 0, so the clock has no elasticity (not a
    crash). The latency's high end gives no interval of its own: its elasticity stands (-0.3, the exponent) with
    no interval, as neither end's alone is one of the difference."""
    import sim.run

    def fake(sc, progress=None):
        tpm = 0.0 if sc.profile.cpu.clock < 1.3e9 else _power_law(sc, sc.spec.run.seed)
        hw = None if sc.profile.memory.latency > 110e-9 else 0.01 * tpm
        return dataclasses.replace(_steady_result(), tpm=tpm, tpm_half_width=hw)
    monkeypatch.setattr(sim.run, "run", fake)
    s = sn.sensitivity(BASE, ["hardware.cpu.clock", "hardware.memory.latency"], out=tmp_path, executor="serial",
                       progress=False)
    t = s.table.set_index("factor")
    assert math.isnan(t.loc["hardware.cpu.clock", "elasticity"])
    assert t.loc["hardware.memory.latency", "elasticity"] == pytest.approx(-0.3, abs=1e-12)
    assert math.isnan(t.loc["hardware.memory.latency", "elasticity.ci95"])


def test_a_factor_whose_high_end_is_refused_runs_from_its_low_end_to_the_base(monkeypatch, tmp_path):
    """avg_seek 90% off: 0.35 ms is on the seek curve (0.2-6.4 ms), 6.65 ms is past full_seek and refused, so the
    factor runs 0.35 ms -> 3.5 ms (the base), and TPM ~ avg_seek^-0.2 gives E = -0.2 over that span."""
    _stub(monkeypatch, lambda sc, _seed: 1e5 * (sc.profile.storage.disk_groups["array"].disk.avg_seek / 3.5e-3) ** -0.2)
    s = sn.sensitivity(BASE, ["hardware.storage.disk_groups.array.disk.avg_seek"], step=0.9, out=tmp_path,
                       executor="serial", progress=False)
    row = s.table.iloc[0]
    assert row["high"] == "—" and row["x.low"] == pytest.approx(0.35e-3)
    assert row["elasticity"] == pytest.approx(-0.2, abs=1e-12) and row["busiest.high"] == ""   # (no high end ran)


def test_a_default_factor_with_no_end_is_listed_last_with_the_reason(monkeypatch, tmp_path):
    """A default factor the scenario refuses at both ends (avg_seek alone at 95%, off its seek curve) is not bad
    input as a --factor would be: it is kept, last, with no elasticity and the scenario's reason in its outcome, and
    no run made for it (1 base + 2 for the clock)."""
    ran = _stub(monkeypatch, _power_law, half_width=lambda tpm: 0.01 * tpm)
    seek = ("hardware.storage.disk_groups.array.disk.avg_seek",)
    monkeypatch.setattr(sn, "default_keys", lambda sc, devices: [seek, ("hardware.cpu.clock",)])
    s = sn.sensitivity(BASE, step=0.95, out=tmp_path, executor="serial", progress=False)
    assert list(s.table["factor"]) == ["hardware.cpu.clock", seek[0]]
    row = s.table.iloc[1]
    assert math.isnan(row["elasticity"]) and "got '175 us'; expected between track_seek" in row["outcome"]
    assert len(ran) == 1 + 2   # (the base run first is resumed, not run again)


def test_a_base_figure_of_zero_leaves_the_changes_undefined_but_not_the_elasticity(monkeypatch, tmp_path):
    """With --factor the ends run whatever the base gave: the base's TPM of 0 (the stub's) has no % change from it,
    so change.low and change.high are NaN (not a ZeroDivisionError), while E = 0.8 comes from the two ends alone."""
    _stub(monkeypatch, lambda sc, seed: 0.0 if sc.profile.cpu.clock == 1.4e9 else _power_law(sc, seed))
    s = sn.sensitivity(BASE, ["hardware.cpu.clock"], out=tmp_path, executor="serial", progress=False)
    row = s.table.iloc[0]
    assert math.isnan(row["change.low"]) and math.isnan(row["change.high"])
    assert row["elasticity"] == pytest.approx(0.8, abs=1e-12)


def test_ties_after_the_ranked_factors_keep_the_order_given_too(monkeypatch, tmp_path):
    """Two factors the figure ignores (the LLC, memory bandwidth: E = 0 each) given before the clock (+0.8) and the
    latency (-0.3): ranked clock, latency, then the two ties as given. (A quicksort of these four keys, 0, 0, -0.8,
    -0.3, puts the bandwidth before the LLC: ties need the stable sort whatever else is in the table.)"""
    _stub(monkeypatch, _power_law)
    s = sn.sensitivity(BASE, ["hardware.cpu.llc_size", "hardware.memory.bandwidth_per_socket", "hardware.cpu.clock",
                              "hardware.memory.latency"], out=tmp_path, executor="serial", progress=False)
    assert list(s.table["factor"]) == ["hardware.cpu.clock", "hardware.memory.latency", "hardware.cpu.llc_size",
                                       "hardware.memory.bandwidth_per_socket"]


def test_the_command_passes_its_options_to_sensitivity(monkeypatch, tmp_path):
    """What the command hands sim.sensitivity (stopped there): the step of 10% as 0.1 by default, -r, --metric, and
    the executor: --dask-local N is a Dask cluster of N workers, -j N N local processes."""
    calls = []

    def stop(*args, **kw):
        calls.append((args, kw))
        raise OltpsimError("stopped")
    monkeypatch.setattr(sn, "sensitivity", stop)
    base = ["sensitivity", "--profile", "t5220", "--workload", "tpcc", "--factor", "hardware.cpu.clock"]
    for extra in (["-r", "3", "--metric", "elapsed", "--dask-local", "2"], ["-j", "3"]):
        assert CliRunner().invoke(cli.main, [*base, *extra, "--out", str(tmp_path / "s")]).exit_code == 2
    (args, dask), (_, local) = calls
    assert args[2] == 0.1 and dask["replications"] == 3 and dask["metric"] == "elapsed"
    assert (dask["executor"], dask["workers"], local["executor"], local["workers"]) == ("dask", 2, "process", 3)
    assert (local["replications"], local["metric"]) == (1, None)


def test_a_picture_is_known_by_its_suffix_in_any_case():
    """matplotlib picks the format from the suffix, whatever its case (T.PNG is a PNG); a file with no suffix is
    refused as such, with the name it could have."""
    cli._check_picture("T.PNG")
    with pytest.raises(OltpsimError, match=r"--plot tornado: no suffix, not a file; expected a picture, e.g. "
                                           r"tornado.png"):
        cli._check_picture("tornado")


def test_a_run_that_fails_with_an_error_makes_the_command_exit_1(monkeypatch, tmp_path):
    """The high clock's run raises (a fault of oltpsim's, not an outcome of the scenario): the table is printed, and
    the command exits 1 saying 1 of the 3 runs ended in an error and where the traceback is."""
    import sim.run

    def fake(sc, progress=None):
        if sc.profile.cpu.clock > 1.5e9:
            raise RuntimeError("a bug")
        return dataclasses.replace(_steady_result(), tpm=_power_law(sc, sc.spec.run.seed))
    monkeypatch.setattr(sim.run, "run", fake)
    monkeypatch.setattr(sw, "sweep", _serial)
    got = CliRunner().invoke(cli.main, ["sensitivity", "--profile", "t5220", "--workload", "tpcc", "--set", "users=2",
                                        "--factor", "hardware.cpu.clock", "--out", str(tmp_path / "s")])
    assert got.exit_code == 1 and "1 of 3 runs ended in an error" in got.stderr, got.output
    assert "points.jsonl" in got.stderr and "cpu.clock" in got.stdout


def test_a_base_that_gives_no_figure_says_why_in_the_message(monkeypatch, tmp_path):
    """The base out of memory: the command said '(the outcome column says why)', but no factor runs, so the table
    has no row and no outcome, and with --factor a row's outcome is its ends', never the base's: the reason was
    nowhere. The message gives the base's status and its message, once: not on every row beside the ends' own."""
    import sim.run

    def oom(sc, progress=None):
        return dataclasses.replace(_steady_result(), status="out_of_memory", message="SGA exceeds memory", tpm=None)
    monkeypatch.setattr(sim.run, "run", oom)
    monkeypatch.setattr(sw, "sweep", lambda *a, **kw: _serial(*a, **kw))
    for factors in ([], ["--factor", "hardware.cpu.clock"]):
        got = CliRunner().invoke(cli.main, ["sensitivity", "--profile", "t5220", "--workload", "tpcc", "--set",
                                            "users=2", *factors, "--out", str(tmp_path / str(len(factors)))])
        assert got.exit_code == 1 and "the base gave no figure (out_of_memory: SGA exceeds memory)" in got.stderr
        assert "outcome column" not in got.stderr and "base: out_of_memory" not in got.stdout   # (not on each row)


def test_a_scenario_file_its_output_folder_would_replace_is_refused_before_anything_runs(monkeypatch, tmp_path):
    """A scenario kept as out/summary.csv, with --out out: the sweep writes its summary there, so the command would
    overwrite its own input. Refused (exit 2) before any run, the file untouched, as sweep refuses it."""
    import yaml

    ran = _stub(monkeypatch, _power_law)
    out = tmp_path / "s"
    out.mkdir()
    kept = out / "summary.csv"
    kept.write_text(yaml.safe_dump(BASE))
    before = kept.read_text()
    got = CliRunner().invoke(cli.main, ["sensitivity", str(kept), "--factor", "hardware.cpu.clock", "--out", str(out)])
    assert got.exit_code == 2 and "would replace this input file" in got.stderr, got.output
    assert ran == [] and kept.read_text() == before


def test_the_storage_factors_follow_any_base_replication_that_did_io_on_the_device():
    """A device idle in the base's first replication but read in its second (a cache that warmed otherwise) is one
    the base used: its drives are factors. A device no replication touched, or with no figure, is not."""
    import pandas as pd

    table = pd.DataFrame({"point": [0, 0], "replication": [0, 1], "device.array.iops": [0.0, 12.5],
                          "device.internal.iops": [0.0, 0.0], "device.redo.iops": [math.nan, math.nan]})
    assert sn._busy_devices(table) == ["array"]
