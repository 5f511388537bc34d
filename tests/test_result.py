"""The Result record as data (sim/result.py): a named figure, the flat row a sweep's table takes,
by hand on records built here (the text report's own tests are tests/test_report.py)."""

from __future__ import annotations

from sim.result import Result


def test_a_named_figure_is_a_field_cpu_as_three_throughput_as_tpm_or_a_key_of_extra():
    """Experiments read a run's figures by name (sim/experiments.py, a metric's `result`): 'throughput' is the TPM
    (not the per-second rate), 'cpu' the three vmstat columns, or none at all where the run measured nothing
    (an out-of-memory run: not [None, None, None], which reads as a figure)."""
    r = Result("x", "p", "tpcc", {}, tpm=1200.0, throughput_per_s=20.0, elapsed=None, cpu_idle=10.0, cpu_usr=60.0,
               cpu_sys=30.0, extra={"iops": 800.0})
    assert r.metric("throughput") == r.metric("tpm") == 1200.0
    assert r.metric("cpu") == [10.0, 60.0, 30.0] and r.metric("iops") == 800.0
    assert r.metric("elapsed") is None and r.metric("no_such_figure") is None
    assert Result("x", "p", "tpcc", {}, status="out_of_memory").metric("cpu") is None


def test_the_flat_row_gives_utilisations_as_their_means_and_keeps_a_figure_that_is_none():
    """core/strand utilisation are the means of their lists ((90 + 30) / 2 = 60, (100 + 80 + 20 + 0) / 4 = 50), as
    the text report prints them; a workload figure that is None (no run measured it) keeps its column, so a sweep's
    table has one column whatever its runs gave; a list (a level table) and a nested mapping's leaves go their own
    ways: the list is left out, the leaves are columns."""
    r = Result("x", "p", "calibrate_io", {"users": 8}, core_utilisation=[90.0, 30.0],
               strand_utilisation=[100.0, 80.0, 20.0, 0.0],
               extra={"max_iops": None, "level_table": [1, 2], "memory": {"ram_mb": 1024.0}})
    row = r.flat()
    assert row["core_utilisation_mean"] == 60.0 and row["strand_utilisation_mean"] == 50.0
    assert "extra.max_iops" in row and row["extra.max_iops"] is None
    assert "extra.level_table" not in row and row["extra.memory.ram_mb"] == 1024.0
    assert row["in.users"] == 8 and "core_utilisation" not in row and "extra" not in row
    assert "core_utilisation_mean" not in Result("x", "p", "tpcc", {}).flat()   # no list: no mean (not 0/0)


def test_a_figures_unit_is_read_from_its_name_where_the_suffix_is_whole():
    """Units by hand: 'ms' only as the suffix _ms (rman's extra.work_items is a count, not milliseconds), TPC-C's
    rate a second in tx/s, the TPM interval in TPM, CALIBRATE_IO's max_iops in IOPS, a device's mb_per_s in MB/s
    (not seconds: a rate, though it ends in _s)."""
    from sim.result import figure_unit

    assert [figure_unit(m) for m in ("extra.work_items", "throughput_per_s", "tpm_half_width", "extra.max_iops",
                                     "device.array.mb_per_s", "device.array.reads_per_s", "rt.new_order.p99",
                                     "rt.new_order.count", "strand_utilisation_mean")] == [
        "", "tx/s", "TPM", "IOPS", "MB/s", "", "s", "", "%"]


def test_json_turns_not_a_number_into_null_inside_tuples_and_mappings_too():
    """finite() goes all the way down: a NaN or an infinite interval in a tuple of extra, or in a mapping of a
    mapping, is null (Python's NaN token is not JSON, and to_json refuses to write it)."""
    import json
    import math

    from sim.result import finite

    r = Result("x", "p", "tpcc", {}, tpm=math.nan, extra={"pair": (1.0, math.inf), "deep": {"ci": -math.inf}})
    d = json.loads(r.to_json())
    assert d["tpm"] is None and d["extra"] == {"pair": [1.0, None], "deep": {"ci": None}}
    assert finite((2.0, [math.nan])) == [2.0, [None]] and finite("nan") == "nan"


def test_a_devices_write_cache_column_is_named_as_a_flag_not_a_figure():
    """device.NAME.write_cache is a column of flat() (whether the device has a write-back cache), not a figure
    with a number: asked for as a metric it is refused with that reason, not a guess at a misspelt STAT."""
    from sim.result import stat_problem

    assert stat_problem("device.array.write_cache").startswith("write_cache is whether the device has a write-back")
    assert "no figure 'write_cache'" in stat_problem("wait.log file sync.write_cache")
