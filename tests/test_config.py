"""Bad input: every malformed profile or scenario gives one clear message naming the file,
the key path, the bad value and what was expected; the CLI exits 2 with no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from sim import scenario, units
from sim.config import ConfigError, OltpsimError, read_yaml
from sim.hardware.profile import load_profile, profile_names

ROOT = Path(__file__).resolve().parents[1]
T5220 = yaml.safe_load((ROOT / "hardware_profiles" / "t5220.yaml").read_text())


def write_profile(tmp_path: Path, mutate) -> Path:
    data = yaml.safe_load(yaml.safe_dump(T5220))
    mutate(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def cli(*args):
    return subprocess.run([sys.executable, "-m", "sim.cli", *args], capture_output=True, text=True, cwd=ROOT)


def error_of(tmp_path, mutate) -> ConfigError:
    path = write_profile(tmp_path, mutate)
    with pytest.raises(ConfigError) as info:
        load_profile(path)
    assert str(path) in str(info.value)
    return info.value


def test_units_convert_to_si():
    assert units.parse("1.4 GHz", "frequency") == pytest.approx(1.4e9)
    assert units.parse("8 KB", "size") == 8192
    assert units.parse("4.5 ms", "time") == pytest.approx(0.0045)
    assert units.parse("110 ns", "time") == pytest.approx(110e-9)
    assert units.parse("7200 rpm", "rotation") == pytest.approx(120.0)
    assert units.parse("40%", "fraction") == pytest.approx(0.4)


# Every unit people may write, against its value from its definition (binary sizes, decimal bit rates).
EVERY_UNIT = {
    "time": {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "sec": 1, "min": 60, "h": 3600},
    "size": {"B": 1, "KB": 2**10, "K": 2**10, "KiB": 2**10, "MB": 2**20, "M": 2**20, "MiB": 2**20, "GB": 2**30,
             "G": 2**30, "GiB": 2**30, "TB": 2**40, "TiB": 2**40},
    "frequency": {"Hz": 1, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9},
    "rotation": {"rpm": 1 / 60},
    "bandwidth": {"B/s": 1, "KB/s": 2**10, "MB/s": 2**20, "GB/s": 2**30, "TB/s": 2**40, "Gb/s": 125e6, "Mb/s": 125e3},
    "rate": {"/s": 1, "IOPS": 1, "per s": 1, "/min": 1 / 60},
    "fraction": {"%": 0.01},
}


@pytest.mark.parametrize("kind", sorted(EVERY_UNIT))
def test_every_unit_is_its_definition_and_nothing_else_is_a_unit(kind):
    for unit, si in EVERY_UNIT[kind].items():
        assert units.parse(f"2.5 {unit}", kind) == pytest.approx(2.5 * si), unit
        assert units.parse(f" 2.5{unit} ", kind) == pytest.approx(2.5 * si), unit
    assert units.parse("-1e3 " + next(iter(EVERY_UNIT[kind])), kind) == pytest.approx(-1e3 * next(iter(EVERY_UNIT[kind].values())))
    others = {u for k, table in EVERY_UNIT.items() if k != kind for u in table} - set(EVERY_UNIT[kind])
    for unit in others:
        with pytest.raises(units.UnitError, match="unknown unit"):
            units.parse(f"2 {unit}", kind)


@pytest.mark.parametrize("value, kind, text", [
    (1024, "size", "1 KB"), (1023, "size", "1023 B"), (1.5 * 2**30, "size", "1.5 GB"), (2**40, "size", "1 TB"),
    (1.0, "time", "1 s"), (0.0015, "time", "1.5 ms"), (1.5e-6, "time", "1.5 us"), (5e-8, "time", "50 ns"),
    (1e9, "frequency", "1 GHz"), (1.4e9, "frequency", "1.4 GHz"), (400e6, "frequency", "400 MHz"),
    (2**20, "bandwidth", "1 MB/s"), (250.0, "rotation", "15000 rpm"), (0.4, "fraction", "40%"),
])
def test_quantities_print_in_the_largest_unit_that_keeps_them_at_least_1(value, kind, text):
    assert units.format_quantity(value, kind) == text


def test_a_fraction_prints_to_three_digits():
    """The round trip below draws fractions of 1 almost always (it clamps its large draws to 1): 12.5%
    printed to two digits would read back as 12%, a 4% error in a target given as 12.5%."""
    assert units.format_quantity(0.125, "fraction") == "12.5%"
    assert units.format_quantity(0.0333, "fraction") == "3.33%"


def test_a_negative_time_prints_in_the_unit_of_its_size():
    """A time is put in its unit by its magnitude, as a size is: -1.5 ms is not '-1.5e+06 ns'."""
    assert units.format_quantity(-0.0015, "time") == "-1.5 ms"
    assert units.format_quantity(-2.0, "time") == "-2 s"
    assert units.format_quantity(-2048.0, "size") == "-2 KB"


@given(st.sampled_from(["time", "size", "frequency", "bandwidth", "rotation", "fraction"]),
       st.floats(min_value=1e-8, max_value=1e13))
def test_a_printed_quantity_reads_back_as_itself_to_four_digits(kind, value):
    if kind == "frequency":
        value = max(value, 1e6)           # printed in MHz or GHz
    if kind == "rotation":
        value = min(max(value, 1.0), 1e4)  # whole rpm
    if kind == "fraction":
        value = min(value, 1.0)            # printed to three digits
    text = units.format_quantity(value, kind)
    rel = {"rotation": 1e-2, "fraction": 5e-3}.get(kind, 5e-4)
    assert units.parse(text, kind) == pytest.approx(value, rel=rel), text


@pytest.mark.parametrize("value, kind, fragment", [
    ("8", "size", "missing unit"), (8, "size", "missing unit"), ("8 XB", "size", "unknown unit 'XB'"),
    ("fast", "time", "a time with a unit"), ("1.4 Ghz", "frequency", "unknown unit 'Ghz'"), (True, "time", "a time with a unit"),
    ("5", "fraction", "missing unit"), (0.05, "fraction", "missing unit"),
])
def test_units_refuse(value, kind, fragment):
    with pytest.raises(units.UnitError, match=fragment):
        units.parse(value, kind)


def test_missing_key(tmp_path):
    e = error_of(tmp_path, lambda d: d["cpu"].pop("clock"))
    assert e.path == "cpu.clock" and "missing key" in e.problem and "frequency" in e.problem


def test_unknown_key_suggests_the_close_one(tmp_path):
    e = error_of(tmp_path, lambda d: d["cpu"].__setitem__("clok", "1 GHz"))
    assert e.path == "cpu.clok" and "did you mean 'clock'" in e.problem


def test_wrong_type(tmp_path):
    e = error_of(tmp_path, lambda d: d["cpu"].__setitem__("sockets", "two"))
    assert e.path == "cpu.sockets" and "'two'" in e.problem and "whole number" in e.problem


def test_unknown_unit(tmp_path):
    e = error_of(tmp_path, lambda d: d["memory"].__setitem__("latency", "105 nsec"))
    assert e.path == "memory.latency" and "unknown unit 'nsec'" in e.problem and "'105 nsec'" in e.problem


def test_missing_unit(tmp_path):
    e = error_of(tmp_path, lambda d: d["cpu"].__setitem__("clock", 1.4))
    assert e.path == "cpu.clock" and "missing unit" in e.problem


@pytest.mark.parametrize("key, value", [("clock", "0 GHz"), ("clock", "-1 GHz"), ("cpi_issue", 0)])
def test_zero_or_negative(tmp_path, key, value):
    e = error_of(tmp_path, lambda d: d["cpu"].__setitem__(key, value))
    assert e.path == f"cpu.{key}" and "positive" in e.problem
    assert f"got {value!r}; expected a positive {'number' if key == 'cpi_issue' else 'frequency with a unit'}" \
        in e.problem


def test_strands_not_a_multiple_of_pipelines(tmp_path):
    e = error_of(tmp_path, lambda d: d["cpu"].__setitem__("pipelines_per_core", 3))
    assert e.path == "cpu.strands_per_core" and "multiple of pipelines_per_core (3)" in e.problem


def test_asm_normal_redundancy_needs_two_drives(tmp_path):
    e = error_of(tmp_path, lambda d: d["storage"]["disk_groups"]["array"].__setitem__("count", 1))
    assert e.path == "storage.disk_groups.array.count" and "at least 2 drives" in e.problem


def test_no_storage_is_refused(tmp_path):
    e = error_of(tmp_path, lambda d: d.__setitem__("storage", {"disk_groups": {}}))
    assert "storage" in e.path and "at least one" in e.problem


def test_yaml_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\ncpu:\n  sockets: [1, 2\nmemory: {}\n")
    with pytest.raises(ConfigError, match=r"broken.yaml: .*YAML syntax error at line \d+"):
        load_profile(path)


@pytest.mark.parametrize("text, path, lines", [
    # a scenario: the second db_cache ran, silently
    ("profile: t5220\nworkload: tpcc\nparams: {users: 8}\ndatabase:\n  db_cache: 1 GB\n  block_size: 8 KB\n"
     "  db_cache: 2 GB\n", "database.db_cache", (5, 7)),
    ("profile: t5220\nprofile: t5440\n", "profile", (1, 2)),
    ("- {users: 8, users: 16}\n", "[0].users", (1, 1)),                             # a sweep file's points
    ("rows:\n  - label: a\n  - label: b\n    set: {users: 8}\n    label: c\n", "rows[1].label", (3, 5)),  # an experiment's
])
def test_a_key_given_twice_is_refused(tmp_path, text, path, lines):
    file = tmp_path / "twice.yaml"
    file.write_text(text)
    with pytest.raises(ConfigError) as info:
        read_yaml(file)
    assert str(info.value) == f"{file}: {path}: given twice (lines {lines[0]} and {lines[1]}); expected each key once"


def test_merge_keys_are_not_keys_given_twice(tmp_path):
    """YAML's '<<' merges the keys of anchored mappings, which the mapping may then override: neither a key
    overriding a merged one nor two merges in one mapping is a key given twice."""
    file = tmp_path / "merge.yaml"
    file.write_text("a: &a {x: 1, z: 0}\nb: &b {y: 2}\nc:\n  <<: *a\n  <<: *b\n  x: 3\n")
    assert read_yaml(file)["c"] == {"x": 3, "y": 2, "z": 0}


def test_a_key_given_twice_stops_a_run_and_a_profile(tmp_path):
    path = tmp_path / "scen.yaml"
    path.write_text("profile: t5220\nworkload: tpcc\nparams: {users: 8}\ndatabase:\n  db_cache: 1 GB\n  db_cache: 2 GB\n")
    proc = cli("run", str(path))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == f"oltpsim: error: {path}: database.db_cache: given twice (lines 5 and 6); expected each key once"
    text = (ROOT / "hardware_profiles" / "t5220.yaml").read_text()
    profile = tmp_path / "twice.yaml"
    profile.write_text(text.replace("\nmemory:\n", "\nmemory:\n  size: 1 GB\n", 1))
    with pytest.raises(ConfigError, match=r"twice.yaml: memory.size: given twice \(lines \d+ and \d+\)"):
        load_profile(profile)
    # an inline mapping given with --set, a key twice in it: refused at the setting, on the command line
    with pytest.raises(ConfigError) as info:
        scenario.load(None, {"users": 8, "mix": "{payment: 0.4, payment: 0.5}"}, profile="t5220", workload="tpcc")
    assert str(info.value) == ("<command line>: mix: got '{payment: 0.4, payment: 0.5}', with payment given twice; "
                               "expected each key once")


def test_a_profile_is_parsed_once_until_its_file_changes(tmp_path):
    path = write_profile(tmp_path, lambda d: None)
    from sim.hardware.profile import _load
    first = load_profile(path)
    hits = _load.cache_info().hits
    again = load_profile(path)
    assert _load.cache_info().hits == hits + 1   # a sweep's points share one parse ...
    assert again == first and again is not first  # ... each a copy of it
    write_profile(tmp_path, lambda d: d["cpu"].update(sockets=2))
    assert load_profile(path).cpu.sockets == 2 and first.cpu.sockets == 1


def test_unknown_profile_lists_the_known_ones():
    with pytest.raises(OltpsimError) as info:
        load_profile("t5221")
    assert "did you mean 't5220'" in str(info.value)
    for name in profile_names():
        assert name in str(info.value)


def test_unknown_workload_lists_the_known_ones():
    with pytest.raises(ConfigError) as info:
        scenario.load(None, {}, profile="t5220", workload="tpcd")
    assert info.value.path == "workload" and "tpcc" in str(info.value)


def test_bad_workload_parameter_names_its_path():
    with pytest.raises(ConfigError) as info:
        scenario.load(None, {"users": -3}, profile="t5220", workload="tpcc")
    assert info.value.path == "params.users" and "-3" in info.value.problem


def test_unknown_device_for_redo():
    with pytest.raises(ConfigError) as info:
        scenario.load(None, {"users": 4, "database.redo_device": "aray"}, profile="t5220", workload="tpcc")
    assert info.value.path == "database.redo_device" and "array" in info.value.problem


def test_every_builtin_profile_loads_and_derives_cpu_count():
    for name in profile_names():
        p = load_profile(name)
        assert p.cpu_count == p.cpu.sockets * p.cpu.cores_per_socket * p.cpu.strands_per_core
        assert p.derived()["memory_latency_cycles"] > 0


@pytest.mark.parametrize("args, fragment", [
    (["run", "--profile", "t5221", "--workload", "tpcc"], "unknown hardware profile 't5221'"),
    (["run", "--profile", "t5220", "--workload", "tpcc", "--set", "userz=3"], "params.userz: unknown key"),
    (["run", "--profile", "t5220", "--workload", "tpcc", "--set", "users=8", "--set", "run.max_time=5"],
     "run.max_time: got 5 (missing unit); expected a time with a unit"),
    (["profile", "show", "nosuch"], "unknown hardware profile"),
    (["reproduce", "nosuch.experiment"], "unknown experiment"),
    (["run", "--profile", "t5220", "--workload", "tpcc", "--set", "users=8", "--set", "users=16"],
     "--set users: given twice ('8', then '16'); give it once"),
    (["profile", "show", "nosuch.yaml"], "nosuch.yaml: cannot read: no such file; expected a built-in profile name"),
    (["run", "--profile", "nosuch.yml", "--workload", "tpcc"], "profile: nosuch.yml: cannot read: no such file"),
    (["run", "--profile", "t5220", "--workload", "tpcc", "--set", "users=8", "--json", "no-such-dir/r.json"],
     "--json no-such-dir/r.json: folder no-such-dir does not exist; expected a file in an existing folder"),
    (["reproduce", "tseries.t5440", "--json", "no-such-dir/s.json"], "--json no-such-dir/s.json: folder no-such-dir"),
    (["run", "--profile", "t5220", "--workload", "tpcc", "--set", "users=8", "--json", "/proc/r.json"],
     "--json /proc/r.json: cannot write"),   # a folder the permission bits call writable, that is not
    (["reproduce", "tseries.t5440", "--plot", "README.md/plots"], "--plot README.md/plots: cannot make this folder"),
    (["sweep", "--profile", "t5220", "--workload", "tpcc", "--vary", "users=8", "--out", "README.md/sw"],
     "--out README.md/sw: cannot make this folder: Not a directory"),
])
def test_cli_exits_2_with_one_line_and_no_traceback(args, fragment):
    proc = cli(*args)
    assert proc.returncode == 2, proc.stderr
    assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert proc.stdout == ""   # refused before anything ran: no report, no scoreboard


@pytest.mark.parametrize("args", [["run", "--profile", "t5220", "--workload", "tpcc", "--json", ""],
                                  ["reproduce", "tseries.t5440", "--plot", " "],
                                  ["sweep", "--profile", "t5220", "--workload", "tpcc", "--vary", "users=8", "--out", ""]])
def test_an_empty_output_path_is_refused_not_dropped(args):
    proc = cli(*args)
    assert proc.returncode == 2 and "an empty path; expected a file or folder name" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_the_output_file_probe_leaves_no_file_and_keeps_an_old_one(tmp_path):
    from sim.cli import _check_output_file
    new, old, link = tmp_path / "new.json", tmp_path / "old.json", tmp_path / "link.json"
    old.write_text("{}")
    link.symlink_to(tmp_path / "target.json")   # dangling: the probe would make its target
    for path in (new, old, link):
        _check_output_file("--json", str(path))
    assert not new.exists() and old.read_text() == "{}" and not (tmp_path / "target.json").exists()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    _check_output_file("--json", str(fifo))   # not opened: that would hang here (no reader) or consume one


def test_bad_scenario_file_names_the_file(tmp_path):
    path = tmp_path / "sc.yaml"
    path.write_text("profile: t5220\nworkload: tpcc\nparams: {users: 8}\nrun: {warmup: 2}\n")
    proc = subprocess.run([sys.executable, "-m", "sim.cli", "run", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert f"{path}: run.warmup: got 2 (missing unit); expected a time with a unit" in proc.stderr


def test_hardware_changes_lay_over_the_profile_and_leave_it_alone():
    sc = scenario.load(None, {"users": 9, "hardware.memory.size": "10 GB", "hardware.cpu.sockets": 8},
                       profile="ue10000", workload="tpcc")
    base = load_profile("ue10000")
    assert sc.profile.memory.size == 10 * 2**30 and sc.profile.cpu.sockets == 8
    assert sc.profile.memory.latency == base.memory.latency and sc.profile.storage == base.storage
    assert base.memory.size == 6 * 2**30 and base.cpu.sockets == 16  # the cached profile is not changed


def test_a_profile_edited_in_place_leaves_the_next_load_as_the_file_says():
    """A notebook that empties a loaded profile's disk groups (its mappings are plain dicts) does not change
    the next scenario's: the parse is shared, each load is a copy (one shared object had cut the next
    fresh load's TPM in half)."""
    edited = load_profile("ue10000")
    edited.storage.disk_groups.clear()
    sc = scenario.load(None, {"users": 9}, profile="ue10000", workload="tpcc")
    assert list(sc.profile.storage.disk_groups) == list(load_profile("ue10000").storage.disk_groups) != []


@pytest.mark.parametrize("change, path, fragment", [
    ({"hardware.memory.sise": "10 GB"}, "hardware.memory.sise", "did you mean 'size'"),
    ({"hardware.memory.size": "ten"}, "hardware.memory.size", "a size with a unit"),
    ({"hardware.cpu.strands_per_core": 3}, "hardware.cpu.strands_per_core", "a multiple of pipelines_per_core"),
    ({"hardware.cpu.clock": "1.4 Hz"}, "hardware.cpu.clock", "got '1.4 Hz'; expected at least 10 MHz"),   # a unit slip
    ({"hardware.cpu.clock": "14 GHz"}, "hardware.cpu.clock", "got '14 GHz'; expected at most 10 GHz"),
    ({"hardware.cpu.cpi_issue": 0.0001}, "hardware.cpu.cpi_issue", "got 0.0001; expected at least 0.1"),
    ({"hardware.cpu.cores_per_socket": 100000}, "hardware.cpu.cores_per_socket", "expected at most 1024"),
    ({"hardware.memory.latency": "1 h"}, "hardware.memory.latency", "got '1 h'; expected at most 10 us"),
    ({"hardware.memory.latency": "130 us"}, "hardware.memory.latency", "expected at most 10 us"),   # '130 ns'
])
def test_a_bad_hardware_change_names_the_scenario_key(change, path, fragment):
    with pytest.raises(ConfigError) as info:
        scenario.load(None, {"users": 8, **change}, profile="t5220", workload="tpcc")
    assert info.value.path == path and fragment in info.value.problem


def test_the_kernel_footprint_of_the_other_os_flavour_is_refused_as_changing_nothing():
    """The UE10000 gives Solaris's memory for each kernel (memory.kernel, kernel_64): a 64-bit run reads only
    kernel_64, so a what-if on kernel had printed the same memory account as without it."""
    with pytest.raises(ConfigError) as info:
        scenario.load(None, {"users": 6, "hardware.memory.kernel": "2000 MB"}, profile="ue10000", workload="tpcc")
    assert info.value.path == "hardware.memory.kernel" and "memory.kernel_64" in info.value.problem
    scenario.load(None, {"users": 6, "hardware.memory.kernel": "400 MB"}, profile="ue10000", workload="tpcc")  # its own
    sc = scenario.load(None, {"users": 6, "hardware.memory.kernel_64": "2000 MB"}, profile="ue10000", workload="tpcc")
    assert sc.profile.memory.kernel_64 == 2000 * 2**20
    with pytest.raises(ConfigError) as info:
        scenario.load(None, {"users": 6, "os.bits": 32, "database.oracle_bits": 32,
                             "hardware.memory.kernel_64": "2000 MB"}, profile="ue10000", workload="tpcc")
    assert info.value.path == "hardware.memory.kernel_64"


def test_a_hardware_change_that_is_not_a_mapping_where_the_profile_has_one_is_refused():
    with pytest.raises(ConfigError) as info:
        scenario.load(None, {"users": 8, "hardware.memory": 5}, profile="t5220", workload="tpcc")
    assert info.value.path == "hardware.memory" and "mapping" in info.value.problem


def test_a_layout_by_segment_needs_a_file_per_segment():
    base = {"users": 4, "warehouses": 20, "database.db_cache": "100 MB", "database.datafile_size": "100 MB"}
    with pytest.raises(ConfigError) as info:
        scenario.load(None, {**base, "database.datafiles": 3}, profile="ue10000", workload="tpcc")
    assert info.value.path == "database.datafiles" and "at least 7" in info.value.problem
    assert scenario.load(None, {**base, "database.datafiles": 7}, profile="ue10000", workload="tpcc")


def test_a_control_character_in_a_file_is_placed_by_line_and_column(tmp_path):
    path = tmp_path / "nul.yaml"    # the YAML reader gives only an offset into the text
    path.write_text('profile: t5220\nworkload: tpcc\nparams: {users: 8, think_time: "1\x00 s"}\n')
    with pytest.raises(ConfigError) as info:
        scenario.load(path)
    assert str(info.value) == (f"{path}: YAML syntax error at line 3, column 34: character U+0000 is not allowed "
                               "in YAML (special characters are not allowed)")


def test_a_bad_unit_shows_the_value_then_what_was_expected():
    with pytest.raises(ConfigError) as info:
        scenario.load(None, {"users": 8, "database.db_cache": "10 GBB"}, profile="t5220", workload="tpcc")
    assert info.value.path == "database.db_cache"
    assert "got '10 GBB' (unknown unit 'GBB'); expected a size with a unit" in str(info.value)


def test_a_yaml_syntax_error_has_no_key_path(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\ncpu: [1, 2\n")
    with pytest.raises(ConfigError) as info:
        load_profile(path)
    assert str(info.value).startswith(f"{path}: YAML syntax error at line 3")


def test_a_profile_path_that_names_no_file_is_input_not_a_crash(tmp_path):
    missing = tmp_path / "nosuch.yaml"
    with pytest.raises(ConfigError) as info:
        scenario.load(None, {"users": 8}, profile=str(missing), workload="tpcc")
    assert info.value.path == "profile" and f"{missing}: cannot read: no such file" in info.value.problem


@pytest.mark.parametrize("args", [["reproduce", "tseries.t5440"],
                                  ["sweep", "--profile", "t5220", "--workload", "tpcc", "--vary", "users=8"]])
def test_zero_jobs_is_refused(args):
    proc = cli(*args, "-j", "0")
    assert proc.returncode == 2 and "'--jobs' / '-j': 0 is not in the range x>=1" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_a_batch_job_cut_at_run_max_time_exits_1_saying_so():
    proc = cli("run", "--profile", "t5220", "--workload", "rman", "--set", "channels=1", "--set", "run.max_time=60 s")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == ("oltpsim: timeout: not finished after 60 s simulated (run.max_time; a larger one "
                                   "lets it finish)")
    assert "outcome: TIMEOUT" in proc.stdout and "elapsed: 0:01:00.00" in proc.stdout


def test_an_sga_larger_than_memory_exits_1_naming_the_settings_that_decide_it():
    proc = cli("run", "--profile", "t5220", "--workload", "tpcc", "--set", "users=8", "--set", "database.db_cache=200 GB")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1 and err.startswith("oltpsim: out of memory: kernel and SGA (")
    assert "exceed physical memory 65,536.0 MB by " in err and "sga buffer cache 204,800.0" in err
    assert "database.db_cache" in err and "hardware.memory.size" in err
    assert "OUT OF MEMORY" in proc.stdout and "throughput" not in proc.stdout


def test_every_listed_setting_takes_its_listed_default_back():
    from sim.cli import _settings
    from sim.scenario import ScenarioSpec

    listed = {k: d for k, d, _doc in _settings(ScenarioSpec) if k.split(".")[0] in ("database", "os", "run")}
    assert listed["database.block_size"] == "8 KB" and listed["os.filesystem"] == "raw"
    assert listed["run.max_time"] == "(omit)" and listed["run.warmup"] == "2 s" and listed["database.db_cache"] == "(omit)"
    assert "database.parallel.parallel_degree_policy" in listed
    base = scenario.load(None, {"users": 8}, profile="t5220", workload="tpcc")
    for key, default in listed.items():
        if default != "(omit)":   # written back as printed, it changes nothing
            sc = scenario.load(None, {"users": 8, key: default}, profile="t5220", workload="tpcc")
            assert sc.spec == base.spec, key
    assert "database.db_cache" in cli("settings").stdout


def test_a_profile_given_as_a_command_of_profile_points_at_show_and_the_rpm_is_said_once():
    from click.testing import CliRunner

    from sim import cli as cli_mod
    got = CliRunner().invoke(cli_mod.main, ["profile", "t5220"])
    assert got.exit_code == 2 and "no command 't5220': to inspect a profile, oltpsim profile show t5220" in got.output
    shown = CliRunner().invoke(cli_mod.main, ["profile", "show", "ue10000"]).output
    disks = [line for line in shown.splitlines() if line.strip().startswith("disks")]
    assert disks and all(line.count("rpm") == 1 for line in disks)   # the model names its 7200 rpm already
    assert "(15000 rpm, seek 3.5 ms)" in CliRunner().invoke(cli_mod.main, ["profile", "show", "t5220"]).output
