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
