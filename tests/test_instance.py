"""The instance by hand (sim/db/instance.py): what it refuses, where it puts the redo logs and control files,
which parts it starts, what it maps in memory, and its checkpoint bound and DBWR settling at the warm-up's end."""

from __future__ import annotations

import pytest

from sim import scenario
from sim.config import ConfigError
from sim.db import instance as inst_mod
from sim.db.checkpoint import LogSwitchCheckpoints
from sim.system import System

MB = 1024.0 * 1024.0
GB = 1024.0 * MB


def _load(profile="t5220", **sets):
    return scenario.load(None, {"users": "8", **{k: str(v) for k, v in sets.items()}}, profile=profile,
                         workload="tpcc")


def _instance(profile="t5220", **sets):
    system = System(_load(profile, **sets))
    return system, system.instance


def test_the_smallest_cache_and_log_buffer_oracle_takes_are_accepted_and_one_byte_less_refused():
    assert inst_mod.MIN_CACHE_BLOCKS == 4 and inst_mod.REDO_BLOCK == 512
    _load(**{"database.db_cache": "32 KB"})                        # 4 blocks of 8 KB
    _load(**{"database.db_cache": "8 KB", "database.block_size": "2 KB"})
    with pytest.raises(ConfigError, match="at least 4 database blocks, 32 KB"):
        _load(**{"database.db_cache": "32767 B"})
    _load(**{"database.log_buffer": "512 B"})
    with pytest.raises(ConfigError, match="at least one redo log block, 512 B"):
        _load(**{"database.log_buffer": "511 B"})


def test_32_bit_oracle_maps_an_sga_up_to_4_gb_less_256_mb():
    assert inst_mod.SGA_LIMIT_32 == 4 * GB - 256 * MB
    bits32 = {"os.bits": 32, "database.oracle_bits": 32}
    limit_mb = inst_mod.SGA_LIMIT_32 / MB
    sc = _load(**bits32, **{"database.db_cache": f"{limit_mb - 32:g} MB"})        # + the 32 MB shared pool
    assert sc.spec.database.sga == inst_mod.SGA_LIMIT_32
    with pytest.raises(ConfigError, match="within the 3.75 GB that 32-bit Oracle can map"):
        _load(**bits32, **{"database.db_cache": f"{limit_mb - 31:g} MB"})
    with pytest.raises(ConfigError, match="within"):
        _load(**bits32, **{"database.db_cache": f"{limit_mb - 40:g} MB", "database.shared_pool": "41 MB"})
    _load(**{"database.db_cache": f"{limit_mb:g} MB"})                             # 64-bit: no such limit
    _load(**bits32)                                                                # no cache given: the pools alone
    _load(**bits32, **{"database.shared_pool": f"{limit_mb:g} MB"})
    with pytest.raises(ConfigError, match=r"database\.shared_pool: got '3\.75 GB'; expected an SGA \(shared pool = 3\.75 GB\)"):
        _load(**bits32, **{"database.shared_pool": f"{limit_mb + 1:g} MB"})   # (accepted before: 5 GB ran)


def test_redo_and_control_files_go_with_the_datafiles_unless_placed():
    s, i = _instance(**{"database.db_cache": "1 GB"})
    array, internal = s.devices["array"], s.devices["internal"]
    assert i.lgwr.device is array and i.control_file is array and s.datafiles.volume is array
    s, i = _instance(**{"database.db_cache": "1 GB", "database.data_device": "internal"})
    internal = s.devices["internal"]
    assert i.lgwr.device is internal and i.control_file is internal and s.datafiles.volume is internal
    s, i = _instance(**{"database.redo_device": "internal"})
    internal = s.devices["internal"]
    assert i.lgwr.device is internal and i.control_file is internal    # control files beside the redo logs
    s = System(scenario.load(None, {"channels": 1, "database.control_file_device": "internal"}, profile="t5220",
                             workload="rman"))
    assert s.instance.lgwr.device is s.devices["array"] and s.instance.control_file is s.devices["internal"]
    spec = _load().spec.database
    assert inst_mod.data_device(spec, ["a", "b"]) == "a" and inst_mod.redo_device(spec, ["a", "b"]) == "a"
    for key in ("redo_device", "data_device", "control_file_device"):
        with pytest.raises(ConfigError, match=f"database.{key}: got 'tape'; expected one of the profile's "
                                              "storage devices: array, internal"):
            if key == "control_file_device":
                scenario.load(None, {"channels": 1, f"database.{key}": "tape"}, profile="t5220", workload="rman")
            else:
                _load(**{f"database.{key}": "tape", "database.db_cache": "1 GB"})


def test_the_instance_starts_dbwr_only_for_data_not_all_cached_and_log_switch_checkpoints_only_for_sized_logs():
    s, i = _instance()
    assert i.dbwr is None and i.datafiles is None and i.lgwr.checkpoints is None
    assert i.cpu_count == s.cpu.cpu_count == 64 and i.px.params["cpu_count"] == 64
    assert i.settle_writer() == 0 and i.checkpoint_bound() is None
    s, i = _instance(**{"database.db_cache": "1 GB"})
    assert i.dbwr is not None and i.lgwr.checkpoints is None
    given = System(scenario.load(None, {"table_size": "8 MB", "database.cpu_count": "16"}, profile="t5220",
                                 workload="ctas")).instance
    assert given.cpu_count == 16 and given.px.params["cpu_count"] == 16
    s, i = _instance(**{"database.db_cache": "1 GB", "database.redo_log_size": "100 MB",
                        "database.redo_log_groups": 4})
    ck = i.lgwr.checkpoints
    assert isinstance(ck, LogSwitchCheckpoints) and ck.size == 100 * MB and ck.groups == 4
    assert i.cf_enqueue.capacity == 1


def test_the_checkpoint_bound_is_what_the_other_logs_hold_at_the_dirtying_rate_seen():
    """(groups - 1) x log size x buffers dirtied per redo byte; none before any redo."""
    s, i = _instance(**{"database.db_cache": "1 GB", "database.redo_log_size": "100 MB",
                        "database.redo_log_groups": 3})
    assert i.checkpoint_bound() is None                 # no redo yet
    i.lgwr.bytes = 50 * MB
    i.dbwr.dirtied_total = 1000
    assert i.checkpoint_bound() == pytest.approx(2 * 100 * MB * 1000 / (50 * MB)) == 4000.0


def test_settling_dbwr_at_the_warm_ups_end_heeds_the_checkpoint_bound():
    """Below DBWR's free-buffer limit the checkpoints' bound is met first: DBWR is left to its own pace (0
    dirtied to settle it); above, or with no checkpoints, it is moved to its limit (catch_up)."""
    s, i = _instance(**{"database.db_cache": "1 GB", "database.redo_log_size": "100 MB"})
    calls = []
    i.dbwr.catch_up = lambda: calls.append("catch_up") or 7
    i.dbwr.unwatch = lambda: calls.append("unwatch")
    i.lgwr.bytes, i.dbwr.dirtied_total = 1e12, 1          # a tiny bound
    assert i.checkpoint_bound() < i.dbwr.limit
    assert i.settle_writer() == 0 and calls == ["unwatch"]
    i.dbwr.dirtied_total = 10**9                          # a bound far above the limit
    assert i.checkpoint_bound() > i.dbwr.limit
    assert i.settle_writer() == 7 and calls == ["unwatch", "catch_up"]
    s, i = _instance(**{"database.db_cache": "1 GB"})    # no log-switch checkpoints
    i.dbwr.catch_up = lambda: 5
    assert i.settle_writer() == 5


def test_the_instance_maps_its_pools_background_and_server_processes_in_memory():
    s, i = _instance(**{"database.db_cache": "1 GB", "database.shared_pool": "48 MB", "database.log_buffer": "2 MB",
                        "database.dbwr_io_slaves": 3, "database.disk_asynch_io": "false"})
    vm, spec = s.vm, i.spec
    assert vm.shared["sga_pools"] == 50 * MB
    assert vm.kinds["oracle_background"] == [1, spec.background_memory, spec.background_memory]
    assert vm.kinds["dbwr_io_slave"] == [3, spec.server_memory, spec.server_working_set]
    before = vm.kinds.get("oracle_server", [0])[0]
    sessions = len(i.sessions)
    sess = i.new_session()
    assert sess.sid == sessions and i.sessions[-1] is sess
    assert vm.kinds["oracle_server"][0] == before + 1
    assert vm.kinds["oracle_server"][1:] == [spec.server_memory, spec.server_working_set]
    assert spec.sga == 1 * GB + 48 * MB
    assert i.sga_size(10 * GB) == 48 * MB + 2 * MB + 1 * GB
    _s, nocache = _instance()
    assert "dbwr_io_slave" not in _s.vm.kinds
    assert nocache.sga_size(10 * GB) == 32 * MB + 1 * MB + 10 * GB          # the whole database cached


@pytest.mark.parametrize("locks", [True, False])
def test_the_resident_buffer_cache_is_what_the_database_fills_unless_the_os_locks_the_sga_whole(locks):
    s, i = _instance(**{"database.db_cache": "2 GB"})
    s.vm.locks_shared_memory = locks
    i.attach_database(0.5 * GB)
    assert s.vm.shared["sga_buffer_cache"] == (2 * GB if locks else 0.5 * GB)
    i.attach_database(3 * GB)
    assert s.vm.shared["sga_buffer_cache"] == 2 * GB
    s, i = _instance()                                     # no db_cache: the database is the cache
    s.vm.locks_shared_memory = locks
    i.attach_database(0.5 * GB)
    assert s.vm.shared["sga_buffer_cache"] == 0.5 * GB


def test_reset_stats_clears_the_waits_reads_and_writers_counts():
    s, i = _instance(**{"database.db_cache": "1 GB"})
    i.physical_reads = 9
    i.waits.add("db file sequential read", 0.1)
    i.lgwr.writes, i.lgwr.bytes = 3, 1536.0
    i.reset_stats()
    assert i.physical_reads == 0 and i.waits.events == {} and i.lgwr.writes == 0 and i.lgwr.bytes == 0.0


def test_watching_dbwr_starts_only_where_there_is_one_and_the_counts_start_at_zero():
    s, i = _instance()
    i.watch_writer(1.0)                                   # no DBWR: nothing to watch, no error
    assert i.physical_reads == 0
    s, i = _instance(**{"database.db_cache": "1 GB"})
    assert i.physical_reads == 0 and i.dbwr.watch_from is None
    i.watch_writer(1.5)
    assert i.dbwr.watch_from == 1.5
    i.dbwr.writes, i.datafiles.reads = 4, 6
    i.reset_stats()
    assert i.dbwr.writes == 0 and i.datafiles.reads == 0


def test_a_32_bit_sga_refusal_states_the_cache_the_sga_and_the_limit_in_gb():
    with pytest.raises(ConfigError) as info:
        _load(**{"os.bits": 32, "database.oracle_bits": 32, "database.db_cache": "3.5 GB",
                 "database.shared_pool": "512 MB"})
    assert "got '3.50 GB'" in str(info.value)
    assert "(buffer cache + shared pool = 4.00 GB) within the 3.75 GB" in str(info.value)


@pytest.mark.parametrize("key, ok, bad", [
    ("redo_log_groups", ["2"], ["1"]),                    # Oracle needs at least two online log groups
    ("redo_log_size", ["1 MB"], ["0 MB"]),
    ("log_checkpoint_timeout", ["1 s"], ["0 s"]),
    ("rollback_size", ["1 MB"], ["0 MB"]),
    ("lgwr_sys_share", ["0", "1"], ["1.01", "-0.1"]),
    ("lgwr_instructions_per_write", ["0"], ["-1"]),
    ("datafiles", ["1"], ["0"]),
    ("datafile_size", ["1 MB"], ["0 MB"]),
    ("dbwr_io_slaves", ["0"], ["-1"]),
    ("dbwr_max_writes", ["0"], ["-1"]),
    ("shared_pool", ["0 MB"], ["-1 MB"]),
    ("server_memory", ["0 MB"], ["-1 MB"]),
    ("server_working_set", ["0 MB"], ["-1 MB"]),
    ("background_memory", ["0 MB"], ["-1 MB"]),
])
def test_database_settings_take_the_range_oracle_gives_them(key, ok, bad):
    base = {"database.db_cache": "1 GB", **({"database.redo_log_size": "100 MB"} if key == "redo_log_groups" else {})}
    for value in ok:
        _load(**base, **{f"database.{key}": value})
    for value in bad:
        with pytest.raises(ConfigError, match=f"database.{key}"):
            _load(**base, **{f"database.{key}": value})
