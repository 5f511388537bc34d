"""A hardware profile's checks at their boundaries, its derived figures in closed form, and the capacity rules
(sim/hardware/profile.py). From a mutation round: each check was tested only far from its boundary (a 10 ns
remote latency, a 1 TB stripe unit, 100 controllers), so moving the boundary, or the figures `oltpsim profile
show` derives, went unnoticed. Each case loads a built-in profile with a what-if (no run): milliseconds."""

from __future__ import annotations

import re

import pytest

from sim.config import ConfigError
from sim.hardware.profile import _builtin_dir, data_disks, load_profile

OPT = "opteron-2way"   # 2 sockets, local latency 80 ns; disk groups external (7 x 34 GB, 64 KB stripe) and local


def _disk(**keys) -> dict:
    return {"storage": {"disk_groups": {"external": {"disk": keys}}}}


def _group(**keys) -> dict:
    return {"storage": {"disk_groups": {"external": keys}}}


def test_derived_figures_are_the_closed_forms():
    """2 sockets x 4 cores x 4 strands over 2 pipelines a core at 2 GHz, CPI 2; memory 100 ns local, 150 ns
    remote (interleaved: 125 ns average), 10 GB/s a socket."""
    p = load_profile(OPT, {"cpu": {"cores_per_socket": 4, "strands_per_core": 4, "pipelines_per_core": 2,
                                   "clock": "2 GHz", "cpi_issue": 2.0},
                           "memory": {"latency": "100 ns", "remote_latency": "150 ns"}})
    d = p.derived()
    assert (d["cpu_count"], d["cores"], d["pipelines"], d["strands_per_pipeline"]) == (32, 8, 16, 2)
    assert d["peak_instruction_rate"] == pytest.approx(8 * 2 * 2e9 / 2.0, rel=1e-12)
    assert d["memory_latency_cycles"] == pytest.approx(125e-9 * 2e9, rel=1e-12)
    assert d["memory_bandwidth"] == pytest.approx(2 * p.memory.bandwidth_per_socket, rel=1e-12)


@pytest.mark.parametrize("changes, key, fragment", [
    ({"memory": {"remote_latency": "79 ns"}}, "memory.remote_latency", "at least latency (80 ns)"),
    ({"memory": {"line_size": "8 KB"}}, "memory.line_size", "at most page_size (4 KB)"),
    ({"memory": {"page_size": "4096.5 B"}}, "memory.page_size", "a power of two"),
    ({"memory": {"swap_device": "nowhere"}}, "memory.swap_device", "one of the storage devices: external, local"),
    (_disk(track_seek="1 ms", full_seek="1 ms"), "storage.disk_groups.external.disk.full_seek",
     "more than track_seek (1 ms)"),
    (_disk(track_seek="0.5 ms", full_seek="4.7 ms"), "storage.disk_groups.external.disk.avg_seek",
     "between track_seek"),   # avg_seek 4.7 ms: the curve's end, not inside it
    (_disk(track_seek="4.7 ms", full_seek="9 ms"), "storage.disk_groups.external.disk.avg_seek", "between track_seek"),
    (_group(stripe_unit="35 GB"), "storage.disk_groups.external.stripe_unit", "at most a drive's capacity (34 GB)"),
    (_group(controllers=8), "storage.disk_groups.external.controllers", "at most count (7)"),
])
def test_a_value_just_past_a_boundary_is_refused_at_its_key(changes, key, fragment):
    with pytest.raises(ConfigError) as err:
        load_profile(OPT, changes)
    assert re.search(rf"\b{re.escape(key)}: got .*; expected .*{re.escape(fragment)}", str(err.value)), str(err.value)


@pytest.mark.parametrize("changes", [
    {"memory": {"remote_latency": "80 ns"}},   # as near as the socket's own
    {"memory": {"line_size": "4 KB"}},         # a line of a whole page
    _disk(track_seek="0.5 ms", full_seek="4.8 ms"),
    _group(stripe_unit="34 GB"),               # one unit a whole drive
    _group(controllers=7),                     # a controller a drive
])
def test_a_value_at_a_boundary_is_taken(changes):
    load_profile(OPT, changes)


def test_a_flash_arrays_floor_must_be_below_its_mean_service_time():
    arr = {"storage": {"flash_arrays": {"xtremio": {"service_floor": "0.25 ms"}}}}   # service_time 0.25 ms
    with pytest.raises(ConfigError, match=r"storage.flash_arrays.xtremio.service_floor: got .*; expected less than"):
        load_profile("xeon-e5-2699v3-2s", arr)
    # both times as the profile writes them, not as seconds ('got 0.0002; ... (1e-06 s)')
    arr["storage"]["flash_arrays"]["xtremio"].update(service_time="1 us", service_floor="200 us")
    with pytest.raises(ConfigError, match=r"service_floor: got '200 us'; expected less than service_time \(1 us\): "):
        load_profile("xeon-e5-2699v3-2s", arr)
    del arr["storage"]["flash_arrays"]["xtremio"]["service_time"]
    arr["storage"]["flash_arrays"]["xtremio"]["service_floor"] = "0.249 ms"
    load_profile("xeon-e5-2699v3-2s", arr)


def test_data_disks_of_each_layout():
    """Striped: every drive; RAID5: one less (one at least); a mirror: one; ASM normal: half, a half drive too."""
    assert [data_disks("stripe", 7), data_disks("raid5", 5), data_disks("raid5", 1), data_disks("mirror", 4),
            data_disks("normal", 3), data_disks("normal", 4)] == [7, 4, 1, 1, 1.5, 2]


def test_capacity_keys_name_what_sets_each_devices_capacity():
    p = load_profile(OPT, _group(volume_size="10 GB"))
    assert p.storage.capacity("external") == 10 * 2**30
    assert p.storage.capacity_keys("external") == "hardware.storage.disk_groups.external.volume_size"
    g = "hardware.storage.disk_groups.local"
    assert p.storage.capacity_keys("local") == f"{g}.count, {g}.disk.capacity, {g}.layout"
    x = load_profile("xeon-e5-2699v3-2s").storage
    assert x.capacity_keys("xtremio") == "hardware.storage.flash_arrays.xtremio.capacity"


def test_a_profile_file_ending_yml_is_a_file_not_a_name(tmp_path):
    path = tmp_path / "mine.yml"
    path.write_text((_builtin_dir() / "t5220.yaml").read_text())
    assert load_profile(path).name == "t5220" and load_profile(str(path)).cpu.cores_per_socket == 8
