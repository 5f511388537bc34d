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
    _load(**bits32)                          # no cache given: the pools and the database, 1 warehouse of 85 MB
    with pytest.raises(ConfigError, match=r"database\.shared_pool: got '3\.75 GB'; expected an SGA \(shared pool = 3\.75 GB\)"):
        _load(**bits32, **{"database.shared_pool": f"{limit_mb + 1:g} MB"})   # (accepted before: 5 GB ran)


def test_32_bit_oracle_without_a_buffer_cache_size_maps_the_whole_database():
    """Without database.db_cache the buffer cache holds the workload's whole database (Instance.sga_size), so under
    32-bit Oracle the database and the shared pool must fit the 3.75 GB too (the 32 MB shared pool alone was
    checked: 200 warehouses, a 16.6 GB SGA, were taken and ran where memory allowed). tpcc's database is 85 MB a
    warehouse: 44 (3,740 MB) and the 32 MB pool fit the 3,840 MB, 45 (3,825 MB) do not; with one warehouse the
    shared pool may take all the rest, to the MB."""
    bits32 = {"os.bits": 32, "database.oracle_bits": 32}
    limit_mb = inst_mod.SGA_LIMIT_32 / MB
    assert limit_mb == 3840 and inst_mod.SGA_LIMIT_32 // (85 * MB) == 45   # 45 x 85 MB = 3,825 MB: with the pool, over
    _load(**bits32, warehouses=44)
    with pytest.raises(ConfigError) as info:
        _load(**bits32, warehouses=45)
    assert info.value.path == "database.db_cache" and info.value.problem == (
        "omitted, so the buffer cache holds the whole database (params.warehouses: 45 warehouses of 85 MB), 3.74 GB; "
        "expected an SGA (database + shared pool = 3.77 GB) within the 3.75 GB that 32-bit Oracle can map: give "
        "database.db_cache, or use oracle_bits: 64")
    _load(**bits32, **{"database.shared_pool": f"{limit_mb - 85:g} MB"})          # users 8: 1 warehouse
    with pytest.raises(ConfigError, match=r"^<command line>: database\.db_cache: omitted, .*\(params\.users / 10: "
                                          r"1 warehouse of 85 MB\), 0\.08 GB; expected an SGA \(database \+ "
                                          r"shared pool = 3\.75 GB\)"):
        _load(**bits32, **{"database.shared_pool": f"{limit_mb - 84:g} MB"})
    _load(warehouses=45)                                                            # 64-bit: no such limit
    _load(**bits32, warehouses=45, **{"database.db_cache": "1 GB"})                 # a cache size: the cache is the SGA


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


def test_a_datafile_layout_without_tablespaces_puts_every_segment_in_any_file():
    """No datafile size, or more segments than files: every segment's range is None (any file), as `of` says
    for each, not a missing segment."""
    from sim.db.layout import DatafileLayout
    for layout in (DatafileLayout(10, None, {"a": 1.0, "b": 2.0}), DatafileLayout(1, MB, {"a": 1.0, "b": 2.0})):
        assert layout.uniform and layout.of("a") is None and layout.of("b") is None


def test_datafiles_grow_in_five_percent_steps_to_the_first_size_that_fits():
    """3 MB and 5 MB on four 1-MB files: below 2.5 MB a file the 5 MB needs 3 files and the 3 MB 2; from 2.5 MB
    (the first 5% step past it is 1.05^19 = 2.53 MB) they need 2 + 2, all four files. Larger steps (1.5x:
    3.4 MB) would give 1 + 2, a file left empty."""
    from sim.db.layout import DatafileLayout
    assert 1.05**18 < 2.5 < 1.05**19 < 3.0
    assert DatafileLayout(4, MB, {"a": 3 * MB, "b": 5 * MB}).ranges == {"a": (0, 2), "b": (2, 2)}


def test_a_segment_of_whole_files_takes_them_despite_a_rounding_bit():
    """2.1 GB over 0.3 GB files is 7 files, though the float quotient is 7.000000000000001: a ceiling without
    the 1e-9 allowance would take an eighth file."""
    from sim.db.layout import DatafileLayout
    assert 2.1 * GB / (0.3 * GB) > 7
    assert DatafileLayout(10, 0.3 * GB, {"a": 2.1 * GB, "b": 1.0}).ranges == {"a": (0, 7), "b": (7, 1)}


def test_lgwr_gets_the_log_buffer_and_its_cpu_per_write_as_set():
    """LGWR is built from the settings, each in its place: a 2 MB log buffer (not LogWriter's 1 MB default),
    30,000 instructions a write, a quarter of them in the kernel (two numbers that would pass swapped as types)."""
    _s, i = _instance(**{"database.log_buffer": "2 MB", "database.lgwr_instructions_per_write": "30000",
                         "database.lgwr_sys_share": "0.25"})
    assert (i.lgwr.buffer_size, i.lgwr.instructions_per_write, i.lgwr.sys_share) == (2 * MB, 30_000.0, 0.25)


def test_dbwr_gets_the_caches_buffers_its_async_io_and_its_write_limit_as_set():
    """DBWR's free-buffer limit is a quarter of the cache's buffers at the block size given (1 GB of 16 KB
    blocks: 65,536 buffers, limit 16,384, not 8 KB's 32,768); with async I/O it keeps up to MAX_ASYNC_WRITES
    writes queued unless dbwr_max_writes caps them (4); without (disk_asynch_io false) one at a time."""
    from sim.db import dbwr
    _s, i = _instance(**{"database.db_cache": "1 GB", "database.block_size": "16 KB"})
    assert i.datafiles.async_io and i.dbwr.limit == dbwr.FREE_BUFFER_LIMIT * GB / (16 * 1024) == 16384.0
    assert i.dbwr.width == dbwr.MAX_ASYNC_WRITES
    _s, i = _instance(**{"database.db_cache": "1 GB", "database.dbwr_max_writes": "4"})
    assert i.dbwr.width == 4
    _s, i = _instance(**{"database.db_cache": "1 GB", "database.disk_asynch_io": "false"})
    assert not i.datafiles.async_io and i.dbwr.width == 1


def test_dbwr_is_behind_only_for_a_watched_backlog_that_grew():
    """writer_behind: a net fill rate above 0 (not one of exactly 0: a backlog that held), none unwatched
    (None) or without a DBWR; writer_fill_rate is 0 where nothing is known; an unwatched DBWR is not waiting to
    be judged; unwatch_writer ends the watch."""
    _s, i = _instance()
    assert not i.writer_behind() and i.writer_fill_rate() == 0.0 and not i.writer_unjudged()
    i.unwatch_writer()                                    # no DBWR: nothing to end
    _s, i = _instance(**{"database.db_cache": "1 GB"})
    assert not i.writer_unjudged()                        # not watched: nothing to judge
    for rate, behind in ((None, False), (0.0, False), (1e-9, True)):
        i.dbwr.fill_rate = rate
        assert i.writer_behind() is behind
    i.watch_writer(2.0)
    i.unwatch_writer()
    assert i.dbwr.watch_from is None


class _Cache:
    """A workload's buffer cache that answers dirty_writes with fixed writes: the log switches' alone, or with the
    timeout's; it remembers what it was asked."""
    LOG, TIMED = {"stock": (0.1, 0.2)}, {"stock": (0.1, 0.5)}

    def __init__(self):
        self.asked = []

    def dirty_writes(self, period=None, timeout_tx=None):
        self.asked.append((period, timeout_tx))
        return self.LOG if timeout_tx is None else self.TIMED


def test_cached_block_checkpoints_apply_the_log_switches_at_once_and_the_timeout_from_its_release():
    """With 100 MB logs and 1,000 bytes of redo a transaction (a switch every 104,857.6 transactions) the
    log-switch writes go to the workload at once; the timeout's (1800 s at 50 transactions/s: 90,000
    transactions) only once released, not to a DBWR behind, and once only, from the next pace window; held
    again, the log-switch writes are back at once."""
    from sim.db.checkpoint import PACE_WINDOW
    s, i = _instance(**{"database.db_cache": "1 GB", "database.redo_log_size": "100 MB",
                        "database.log_checkpoint_timeout": "1800 s"})
    assert i.cached_block_checkpoints is None and not i.release_checkpoints(False)
    i.hold_checkpoints()                                  # none: nothing to hold
    env, cache, applied = s.env, _Cache(), []
    i.checkpoint_cached_blocks(cache, 1000.0, lambda: int(env.now * 50), applied.append)
    ck = i.cached_block_checkpoints
    assert applied == [_Cache.LOG] and ck.timeout == 1800.0 and ck.period == 100 * MB / 1000 and ck.held
    env.run(until=env.now + PACE_WINDOW * 1.5)
    assert applied == [_Cache.LOG]                        # held through the warm-up
    assert not i.release_checkpoints(writer_behind=True) and ck.held
    assert i.release_checkpoints(writer_behind=False) and not i.release_checkpoints(writer_behind=False)
    env.run(until=env.now + PACE_WINDOW)
    assert applied[-1] == _Cache.TIMED and cache.asked[-1] == (100 * MB / 1000, pytest.approx(1800 * 50))
    i.hold_checkpoints()
    assert ck.held and applied[-1] == _Cache.LOG
