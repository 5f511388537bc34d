"""How sim/system.py wires a profile into a server (from a mutation round: each was untested): the swap area on
the profile's swap_device, else its last disk group; SysV shared memory locked whole on Solaris only; a group's
controller overhead on each of its drives. Building a System runs nothing: milliseconds each."""

from __future__ import annotations

import pytest

from sim import scenario
from sim.system import System


def _system(profile, **sets):
    return System(scenario.load(None, {"users": "8", **sets}, profile=profile, workload="tpcc"))


def test_swap_goes_on_the_swap_device_else_on_the_last_disk_group():
    s = _system("ue10000")                                   # groups data, redo; no swap_device
    assert s.vm.swap_device is s.devices["redo"]
    s = _system("opteron-2way", **{"hardware.memory.swap_device": "external"})   # (its own: local, the last)
    assert s.vm.swap_device is s.devices["external"]


@pytest.mark.parametrize("os_name, locks", [("solaris", True), ("linux", False), ("hpux", False)])
def test_only_solaris_locks_the_sga_whole(os_name, locks):
    assert _system("t5220", **{"hardware.os": os_name}).vm.locks_shared_memory is locks


def test_each_drive_pays_its_groups_controller_overhead():
    s = _system("opteron-2way")
    assert [d.overhead for d in s.devices["external"].disks] == pytest.approx([0.15e-3] * 7)
    assert [d.overhead for d in s.devices["local"].disks] == pytest.approx([0.05e-3])


def test_each_group_gets_its_controllers():
    s = _system("opteron-2way", **{"hardware.storage.disk_groups.external.controllers": "3"})
    assert len(s.devices["external"].controllers) == 3 and len(s.devices["local"].controllers) == 1


def test_redo_log_files_span_every_group_and_files_use_the_profiles_page_size():
    """Three 1 MB groups on a buffered file: LGWR circles over 3 MB. The UE10000's pages are 8 KB (not the 4 KB
    default) in the datafiles' and the log's file system."""
    s = _system("ue10000", **{"os.redo_filesystem": "ufs_buffered", "database.redo_log_size": "1 MB",
                              "database.redo_log_groups": "3", "database.db_cache": "1 GB",
                              "os.filesystem": "ufs_buffered"})
    log = s.instance.lgwr.device
    assert log.size == 3 * 2**20 and log.page_size == 8192
    assert s.datafiles.page_size == 8192


def test_a_lone_strand_runs_at_clock_over_cpi_issue_without_misses():
    """The T5220: 4 strands a pipeline; one alone issues every cpi_issue cycles (the rate latch spinning burns)."""
    s = _system("t5220")
    s.set_memory_behaviour(0.0)
    cpu = s.profile.cpu
    assert s.single_strand_rate() == pytest.approx(cpu.clock / cpu.cpi_issue, rel=1e-12)


def test_each_drive_draws_its_own_random_numbers():
    """Two drives of one group on one stream would rotate and seek in lock step (correlated service times)."""
    disks = _system("ue10000").devices["data"].disks
    assert len({d.rng.uniform() for d in disks}) == len(disks)


def test_the_page_cache_policy_and_a_reset_reach_the_layers():
    s = _system("ue10000", **{"os.page_replacement": "fifo", "database.db_cache": "1 GB"})
    assert s.vm.page_replacement == "fifo"
    s.memory.misses = s.memory.span = 5.0   # as if a warm-up had counted some
    s.reset_stats()
    assert s.memory.misses == 0.0 and s.memory.span == 0.0
