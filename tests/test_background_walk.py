"""A demanding user's walk through a batch job beside a steady workload (scenario background:): the edges a capacity
planner and a teacher found, each pinned where it had gone wrong."""

from __future__ import annotations

import pytest

from sim import report, scenario
from sim.config import ConfigError

TPCC = {"users": "24", "think_time": "0 s", "keying_time": "0 s", "run.max_time": "4 s"}
SLOB = {"sessions": 4, "schema_size": "200 MB", "run.max_time": "2 s"}
RMAN = {"background.workload": "rman", "background.params.channels": 2}


def _load(settings: dict, workload: str = "tpcc"):
    return scenario.load(None, settings, profile="t5220", workload=workload)


def test_a_backup_beside_slob_takes_its_files_of_database_datafile_size():
    """RMAN beside a workload backs up its database in files of database.datafile_size (rman's READS), beside
    SLOB as beside tpcc: 200 MB of schema in 64-MB files are 64, 64, 64 and 8. SLOB drives no datafiles, and the
    check of settings no workload reads refused the key, saying it acts only in tpcc, though the backup reads it."""
    sc = _load({**SLOB, **RMAN, "database.datafile_size": "64 MB"}, "slob")
    assert sc.background.datafiles_mb == (64.0, 64.0, 64.0, 8.0)
    with pytest.raises(ConfigError, match="no database.datafile_size for workload slob"):
        _load({**SLOB, "database.datafile_size": "64 MB"}, "slob")   # (alone, nothing reads it)


def test_files_of_database_datafile_size_past_the_most_a_database_has_are_refused_at_that_key():
    """The files of database.datafile_size that the backup beside a workload reads are counted against the most
    a database has (65,533), as datafiles_mb given is: 8-KB files of 100 warehouses (7.5 GB) are 980,033, and
    they were taken unchecked (a million backup pieces, each with its control-file writes: a run without end).
    The refusal names database.datafile_size, the key the user gave, and comes before any file is made."""
    with pytest.raises(ConfigError, match=r"database\.datafile_size: got '8 KB'.*at most 65533.*make 980,033"):
        _load({**TPCC, **RMAN, "warehouses": 100, "database.datafile_size": "8 KB"})
    assert len(_load({**TPCC, **RMAN, "warehouses": 100, "database.datafile_size": "1 MB"}).background.datafiles_mb) \
        == 7659   # (each table and index its own files, its last a rest)


@pytest.mark.parametrize("settings, workload", [
    ({**TPCC, "database.db_cache": "1 GB", "database.data_device": "internal"}, "tpcc"),
    ({**SLOB, "device": "internal"}, "slob"),
])
def test_a_backup_beside_a_workload_reads_its_database_on_the_workloads_device(settings, workload):
    """The backup of the workload's database reads it where the workload has it: tpcc's on database.data_device,
    SLOB's schema on params.device (the T5220's internal drives here). It read the profile's first device, the
    array, whatever the workload's, so the backup's reads fell on a device that holds none of the database, and
    beside the users' I/O on neither. Given, background.params.datafile_device is the user's; where the workload's
    database is on the first device, nothing is set (the settings line stays as it was)."""
    assert _load({**settings, **RMAN}, workload).background.datafile_device == "internal"
    given = {**settings, **RMAN, "background.params.datafile_device": "array"}
    assert _load(given, workload).background.datafile_device == "array"
    assert _load({**TPCC, **RMAN}).background.datafile_device is None


def test_channels_left_idle_by_one_file_are_said_in_words_that_fit_one():
    """Beside tpcc at 24 users the backup is one 161.8-MB file, so one of two channels works: the report said 'no
    more than the 1 files or sections' in every such run. It says why a channel is idle, and how many items there
    are, in words that read right for one as for many."""
    x = {"channels": 2, "channels_used": 1, "work_items": 1, "pieces": 1, "largest_channel_mb": 161.8}
    line = report._parallel(x)
    assert "RMAN channels 1 of 2 (a channel backs up one file or section at a time: 1 in all)" in line
    assert "the 1 files" not in line


def test_a_section_size_past_the_workloads_database_says_whose_file_it_is():
    """A section_size as large as the largest file is refused; beside tpcc the files are the workload's database,
    which the user never listed, so the refusal says so ('the largest datafile (161.8 MB)' named a file
    given nowhere). Alone, or with datafiles_mb given, the files are the user's and the words stay as they were."""
    with pytest.raises(ConfigError, match=r"background\.params\.section_size: got '200 MB'; expected less than the "
                                          r"largest datafile \(161.8 MB of the workload's database, which the backup"):
        _load({**TPCC, **RMAN, "background.params.section_size": "200 MB"})
    with pytest.raises(ConfigError, match=r"largest datafile \(60 MB\): every file"):
        _load({**TPCC, **RMAN, "background.params.section_size": "200 MB", "background.params.datafiles_mb": [60]})
    with pytest.raises(ConfigError, match=r"largest datafile \(60 MB\): every file"):
        _load({"channels": 2, "section_size": "200 MB", "datafiles_mb": [60]}, "rman")


def test_a_backup_beside_tpcc_reads_the_database_its_device_holds():
    """The backup reads what tpcc's datafiles store: its tables' and indexes' blocks at database.block_size (and the
    rollback segments'), the size tpcc's own check fits on the device, not warehouses x 85 MB, the estimate the
    buffer cache is sized by. 5,500 warehouses store 410.8 GB on the T5220's 438-GB array and run alone; beside a
    backup of 456.5 GB the scenario was refused, naming background.params.datafiles_mb, never given, as 'the
    default'. 2 warehouses are 161.8 MB in 8-KB blocks, 189.8 MB in 2-KB ones, and 100 MB more with rollback."""
    from workloads import tpcc
    big = _load({**TPCC, **RMAN, "warehouses": 5500})
    assert sum(big.background.datafiles_mb) * 2**20 == pytest.approx(sum(tpcc.database_segments(big.spec, big.params)))
    assert 410 * 2**30 < sum(tpcc.database_segments(big.spec, big.params)) < big.profile.storage.capacity("array")
    cached = {**TPCC, **RMAN, "database.db_cache": "1 GB"}
    assert _load(cached).background.datafiles_mb == pytest.approx((161.84375,))
    assert _load({**cached, "database.block_size": "2 KB"}).background.datafiles_mb == pytest.approx((189.8046875,))
    assert _load({**cached, "database.rollback_size": "100 MB"}).background.datafiles_mb == pytest.approx((261.84375,))


def test_files_of_database_datafile_size_hold_one_table_or_index_each_as_that_setting_lays_them_out():
    """database.datafile_size gives every table and index its own tablespace of as many files as it needs (its
    declared meaning, and tpcc's layout with a buffer cache, sim/db/layout.py): the backup beside tpcc reads those
    files, each segment's whole files and its rest. In 64-MB files 2 warehouses are 7 files (stock's 67.9 MB two
    of them), not 64, 64 and 33.8 as if the tables shared files; the files add up to the database. SLOB's schema
    is one table: 64, 64, 64 and 8 MB."""
    from workloads import tpcc
    sc = _load({**TPCC, **RMAN, "database.datafile_size": "64 MB"})
    segments = tpcc.database_segments(sc.spec, sc.params)
    files = sc.background.datafiles_mb
    assert len(files) == sum(-(-b // 2**26) for b in segments) == 7
    assert max(files) == 64.0 and sum(files) * 2**20 == pytest.approx(sum(segments))
    assert files[:2] == pytest.approx((64.0, segments[0] / 2**20 - 64.0))   # stock: a whole file and its rest


def test_a_database_too_large_for_its_device_names_the_device_as_it_is_chosen():
    """Without database.data_device the datafiles are on the profile's first device whatever database.redo_device
    is (sim/db/instance.py data_device); the refusal of a database too large for it said 'the first device not
    database.redo_device's' while naming the redo device itself (ue10000, redo on 'data')."""
    with pytest.raises(ConfigError, match=r"fits on device 'data' \(no database.data_device: the profile's first "
                                          r"device\): 1000 warehouses"):
        scenario.load(None, {"users": 24, "warehouses": 1000, "database.db_cache": "1 GB",
                             "database.redo_device": "data"}, profile="ue10000", workload="tpcc")
