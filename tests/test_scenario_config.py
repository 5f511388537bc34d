"""The loaders by hand (sim/config.py, sim/scenario.py): what each declared type, unit and limit
accepts and refuses, at the boundary and one step beyond; the message a refusal gives (file, key
path, bad value, what was expected); the scenario's documented defaults (`oltpsim settings`,
RunSpec.cap) and what --set overrides resolve to. Load and validate only: nothing is simulated."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from sim import scenario as sc_mod
from sim.config import (REQUIRED, ConfigError, OltpsimError, Source, build, declared, dotted, format_setting,
                        make_folder, param, parse_scalar, read_text, read_yaml, replace_path, suggest, what_it_is)
from sim.scenario import OsSpec, RunSpec, ScenarioSpec

TIME = 'a time with a unit, like "4.5 ms" (units: ns, us, µs, ms, s, sec, min, h)'
SIZE_UNITS = "(units: B, KB, K, KiB, MB, M, MiB, GB, G, GiB, TB, TiB)"


# ---------------------------------------------------------------- a probe of every declared type

@dataclass(frozen=True, kw_only=True)
class Inner:
    depth: int = param("how deep", default=1, minimum=1)


@dataclass(frozen=True, kw_only=True)
class Probe:
    flag: bool = param("a flag")
    count: int = param("a count", minimum=2, maximum=5)
    ratio: float = param("a ratio", positive=True)
    label: str = param("a label", choices=("raw", "ufs"))
    mode: Literal["ab", "cd"] = param("a mode")
    items: tuple[int, ...] = param("some items")
    table: dict[str, float] = param("shares by name", positive=True)   # limits hold for each value
    weights: dict[str, int] = param("weights by name")
    delay: float = param("a delay", kind="time", minimum=0.0)
    block: int = param("a block size", kind="size", choices=("2 KB", "4 KB"))
    limit: float | None = param("an optional cap", kind="time", default=None, positive=True)
    inner: Inner = param("a section", default={})
    extra: dict[str, Any] = param("anything", default={})
    bits: Literal[32, 64] = param("a word size", default=64)


GOOD = {"flag": True, "count": 3, "ratio": 0.5, "label": "raw", "mode": "ab", "items": [1, 2],
        "table": {"a": 0.5}, "weights": {"w": 2}, "delay": "0 s", "block": "4 KB"}


def probe(**changes) -> Probe:
    data = {k: v for k, v in {**GOOD, **changes}.items() if v is not DROP}
    return build(Probe, data, Source("p.yaml"))


DROP = object()


def refused(**changes) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        probe(**changes)
    assert info.value.file == "p.yaml"
    return info.value


def test_a_good_probe_is_built_in_si_units():
    p = probe()
    assert (p.flag, p.count, p.ratio, p.label, p.mode, p.items) == (True, 3, 0.5, "raw", "ab", (1, 2))
    assert p.table == {"a": 0.5} and p.delay == 0.0 and p.block == 4096 and type(p.block) is int
    assert p.limit is None and p.inner == Inner(depth=1) and p.extra == {} and p.weights == {"w": 2} and p.bits == 64
    assert probe(bits=32).bits == 32
    assert probe(limit="2 min").limit == 120.0 and probe(limit=None).limit is None
    assert probe(extra={"x": [1, "y"]}).extra == {"x": [1, "y"]}     # Any: taken as written
    assert probe(inner={"depth": 4}).inner.depth == 4
    assert probe(block="2048 B").block == 2048      # the choices are quantities, whatever the unit


@pytest.mark.parametrize("key, expected", [
    ("flag", "true or false (a flag)"), ("count", "a whole number (a count)"), ("ratio", "a number (a ratio)"),
    ("label", "a string (a label)"), ("mode", "one of 'ab', 'cd' (a mode)"), ("items", "a list (some items)"),
    ("delay", f"{TIME} (a delay)"), ("table", "a mapping (shares by name)"), ("weights", "a mapping (weights by name)")])
def test_a_missing_key_says_what_it_expected(key, expected):
    e = refused(**{key: DROP})
    assert e.path == key and e.problem == f"missing key: expected {expected}"
    assert str(e) == f"p.yaml: {key}: missing key: expected {expected}"


@pytest.mark.parametrize("key, value, path, problem", [
    ("flag", "yes", "flag", "got 'yes'; expected true or false"),
    ("flag", 1, "flag", "got 1; expected true or false"),
    ("count", 2.5, "count", "got 2.5; expected a whole number"),
    ("count", 3.0, "count", "got 3.0; expected a whole number"),
    ("count", True, "count", "got True; expected a whole number"),
    ("count", "3", "count", "got '3'; expected a whole number"),
    ("ratio", "x", "ratio", "got 'x'; expected a number"),
    ("ratio", False, "ratio", "got False; expected a number"),
    ("label", 5, "label", "got 5; expected a string"),
    ("label", "rwa", "label", "got 'rwa'; expected one of 'raw', 'ufs' (did you mean 'raw'?)"),
    ("label", "xyz", "label", "got 'xyz'; expected one of 'raw', 'ufs'"),
    ("mode", "abc", "mode", "got 'abc'; expected one of 'ab', 'cd' (did you mean 'ab'?)"),
    ("mode", "xy", "mode", "got 'xy'; expected one of 'ab', 'cd'"),
    ("mode", 5, "mode", "got 5; expected one of 'ab', 'cd'"),
    ("items", 5, "items", "got 5; expected a list"),
    ("items", [1, "x"], "items[1]", "got 'x'; expected a whole number"),
    ("table", [0.5], "table", "got [0.5]; expected a mapping"),
    ("table", {"a": 0.5, "b": 0}, "table.b", "got 0; expected a positive number"),
    ("table", {"a": "x"}, "table.a", "got 'x'; expected a number"),
    ("delay", 5, "delay", f"got 5 (missing unit); expected {TIME}"),
    ("delay", "5 parsecs", "delay", f"got '5 parsecs' (unknown unit 'parsecs'); expected {TIME}"),
    ("delay", True, "delay", f"got True; expected {TIME}"),
    ("block", "3 KB", "block", "got '3 KB'; expected one of 2 KB, 4 KB"),
    ("inner", {"depth": 0}, "inner.depth", "got 0; expected at least 1"),
    ("inner", [1], "inner", "got [1]; expected a mapping of keys to values"),
    ("weights", {"w": 1.5}, "weights.w", "got 1.5; expected a whole number"),
    ("weights", "w", "weights", "got 'w'; expected a mapping"),
    # a Literal of numbers takes those numbers only: not 64.0 (a whole-number key refuses 3.0) nor True
    ("bits", 64.0, "bits", "got 64.0; expected one of 32, 64"),
    ("bits", "64", "bits", "got '64'; expected one of 32, 64"),
    ("bits", 16, "bits", "got 16; expected one of 32, 64"),
    ("bits", True, "bits", "got True; expected one of 32, 64"),
])
def test_a_wrong_value_names_its_path_the_value_and_what_was_expected(key, value, path, problem):
    e = refused(**{key: value})
    assert (e.path, e.problem) == (path, problem)
    assert str(e) == f"p.yaml: {path}: {problem}"


@pytest.mark.parametrize("key, good, bad, problem", [
    ("count", 2, 1, "got 1; expected at least 2"),
    ("count", 5, 6, "got 6; expected at most 5"),
    ("ratio", 1e-9, 0.0, "got 0.0; expected a positive number"),
    ("ratio", 1e-9, -1.0, "got -1.0; expected a positive number"),
    ("ratio", 1e300, float("inf"), "got inf; expected a finite number"),
    ("delay", "0 s", "-1 ns", "got '-1 ns'; expected at least 0"),
    ("delay", "1e300 h", "1e999 s", f"got '1e999 s'; expected a finite {TIME.removeprefix('a ')}"),
    # a whole number of bytes is rounded only once it is known to be finite
    ("block", "2 KB", "1e999 KB", "got '1e999 KB'; expected a finite size with a unit, like \"8 KB\" " + SIZE_UNITS),
    ("limit", "1 ns", "0 s", f"got '0 s'; expected a positive {TIME.removeprefix('a ')}"),
])
def test_a_limit_takes_its_boundary_and_refuses_one_step_beyond(key, good, bad, problem):
    probe(**{key: good})
    e = refused(**{key: bad})
    assert (e.path, e.problem) == (key, problem)


def test_a_whole_number_in_a_unit_is_rounded_to_the_nearest_not_truncated():
    """A whole-number quantity is rounded once: 0.7 KB is 716.8 bytes, so 717, not the 716 int() would cut it to."""
    @dataclass(frozen=True)
    class Bytes:
        n: int = param("bytes", kind="size")

    assert build(Bytes, {"n": "0.7 KB"}).n == 717 and type(build(Bytes, {"n": "0.7 KB"}).n) is int
    assert build(Bytes, {"n": "2.5 B"}).n == 2    # Python's round: half to even


def test_a_whole_number_in_exponent_form_is_one_written_without_a_point():
    """'3e0' is 3, as YAML 1.2 reads it; '3.0e0' is 3.0 and refused as 3.0 is, though its value is whole."""
    assert probe(count="3e0").count == 3 and type(probe(count="3e0").count) is int
    e = refused(count="3.0e0")
    assert (e.path, e.problem) == ("count", "got 3.0; expected a whole number")
    assert probe(ratio="2.5E-1").ratio == 0.25


def test_a_choice_is_taken_in_any_case_and_kept_as_declared():
    """Oracle takes its parameters' values in any case: 'UFS' is the choice 'ufs', and it is 'ufs' the run
    records and the models compare against (a string choice as a Literal one)."""
    assert probe(label="UFS").label == "ufs" and probe(label="Raw").label == "raw"
    assert probe(mode="CD").mode == "cd"


def test_a_bound_forgives_a_unit_its_rounding_error_and_nothing_more():
    """'100 us' parses to 9.999999999999999e-05, a hair under a minimum of 100e-6, and '70%' to
    0.7000000000000001, a hair over a maximum of 0.7: both are taken; one part in ten million beyond is a
    value beyond the bound, refused."""
    @dataclass(frozen=True)
    class Slice:
        quantum: float = param("a slice", kind="time", default="1 ms", minimum=100e-6)
        share: float = param("a share", kind="fraction", default="10%", maximum=0.7)

    assert build(Slice, {"quantum": "100 us"}).quantum == pytest.approx(1e-4)
    assert build(Slice, {"share": "70%"}).share == pytest.approx(0.7)
    for key, value, problem in [("quantum", "99.99999 us", "at least 100 us"), ("share", "70.00001%", "at most 70%")]:
        with pytest.raises(ConfigError) as info:
            build(Slice, {key: value}, Source("q.yaml"))
        assert str(info.value) == f"q.yaml: {key}: got {value!r}; expected {problem}"


def test_a_mapping_of_names_keys_its_values_by_text():
    """YAML reads the key 1 as a number: a mapping of names keys it as the name '1', as a --set or a report
    writes it."""
    assert probe(table={1: 0.5, "b": 1}).table == {"1": 0.5, "b": 1.0}


def test_nan_is_refused_though_no_comparison_with_it_fails():
    e = refused(ratio=float("nan"))
    assert e.path == "ratio" and e.problem == "got nan; expected a finite number"


def test_an_unknown_key_is_refused_with_the_close_one_and_the_known_ones():
    e = refused(cuont=3)
    known = ", ".join(f.name for f in dataclasses.fields(Probe))
    assert e.path == "cuont" and e.problem == f"unknown key (did you mean 'count'?); known keys here: {known}"
    e = refused(zzz=3)
    assert e.problem == f"unknown key; known keys here: {known}"


def test_no_mapping_is_all_defaults_and_anything_else_is_refused():
    assert build(Inner, None) == Inner(depth=1) == build(Inner, {})
    with pytest.raises(ConfigError) as info:
        build(Inner, [1, 2], Source("i.yaml"))
    assert str(info.value) == "i.yaml: got [1, 2]; expected a mapping of keys to values"
    with pytest.raises(ConfigError) as info:    # without a Source: the input is named as such
        build(Inner, 5)
    assert str(info.value) == "<input>: got 5; expected a mapping of keys to values"


def test_a_field_the_object_derives_is_no_key_of_its_mapping():
    """A field out of __init__ (dataclasses.field(init=False)) is the object's own: given in YAML it is an
    unknown key, not passed on to the constructor (a TypeError)."""
    @dataclass(frozen=True)
    class Derived:
        n: int = param("n", default=1)
        twice: int = dataclasses.field(init=False, default=0)

    with pytest.raises(ConfigError) as info:
        build(Derived, {"twice": 4}, Source("d.yaml"))
    assert str(info.value) == "d.yaml: twice: unknown key; known keys here: n"


def test_a_type_the_loader_does_not_know_is_a_programming_error():
    @dataclass(frozen=True)
    class Odd:
        s: set = param("a set")

    with pytest.raises(TypeError, match="not supported"):
        build(Odd, {"s": [1]})


def test_check_runs_on_the_built_object_with_its_source():
    seen = []

    @dataclass(frozen=True)
    class Checked:
        n: int = param("n", default=1)

        def check(self, src):
            seen.append((self.n, src.file, src.path))

    build(Checked, {"outer": {"n": 4}}["outer"], Source("c.yaml", "outer"))
    assert seen == [(4, "c.yaml", "outer")]


def test_source_paths_join_keys_with_dots_and_indexes_with_brackets():
    s = Source("f.yaml")
    assert s.at("a").path == "a" and s.at(0).path == "[0]"
    assert s.at("a").at(2).at("b").at("c").path == "a[2].b.c"
    assert str(s.at("a").at(2).error("bad")) == "f.yaml: a[2]: bad"
    assert str(s.error("bad")) == "f.yaml: bad"      # no key path: none printed
    assert str(s.at("k").bad("x", "y")) == "f.yaml: k: got 'x'; expected y"
    assert Source().file == "<input>"


def test_declared_walks_into_sections_and_marks_the_required():
    keys = {k: d for k, d, _m in declared(Probe)}
    assert keys["flag"] is REQUIRED and keys["limit"] is None and keys["inner.depth"] == 1 and keys["extra"] == {}
    assert "inner" not in keys
    spec = {k: d for k, d, _m in declared(ScenarioSpec)}
    assert spec["profile"] is REQUIRED and spec["workload"] is REQUIRED and spec["name"] == ""
    assert spec["run.seed"] == 1 and spec["database.parallel.parallel_degree_policy"] is not REQUIRED


def test_a_list_or_mapping_default_is_a_fresh_copy_each_time():
    @dataclass(frozen=True)
    class Lists:
        xs: list = param("xs", default=[1])

    a, b = Lists(), Lists()
    assert a.xs == [1] and a.xs is not b.xs


@pytest.mark.parametrize("value, meta, text", [
    (None, {"kind": "time"}, "(omit)"), (True, {}, "true"), (False, {"kind": None}, "false"),
    (0.0, {"kind": "time"}, "0 s"), (0, {"kind": "time"}, "0 s"), (1.0, {"kind": "time"}, "1 s"),
    (0.002, {"kind": "time"}, "2 ms"), (0, {"kind": "size"}, "0 B"), (8192, {"kind": "size"}, "8 KB"),
    (0.01, {"kind": "fraction"}, "1%"), (3, {}, "3"), ("raw", {}, "raw"), ({}, {}, "{}"),
    # lists and mappings as YAML's flow style writes them, which --set takes back: rman's datafiles_mb, tpcc's mix
    ((420.0, 11270.0), {}, "[420, 11270]"), ({"new_order": 0.45, "payment": 0.43}, {}, "{new_order: 0.45, payment: 0.43}"),
    ([{"a": True}], {}, "[{a: true}]"), ([8192, 16384], {"kind": "size"}, "[8 KB, 16 KB]"),
    ([123456.7, 2.0], {}, "[123456.7, 2]")])
def test_a_setting_prints_as_a_person_writes_it(value, meta, text):
    assert format_setting(value, meta) == text


def test_replace_path_copies_and_dotted_flattens():
    data = {"a": {"b": 1, "c": 2}, "d": 3}
    out = replace_path(data, "a.b", 9)
    assert out == {"a": {"b": 9, "c": 2}, "d": 3} and data == {"a": {"b": 1, "c": 2}, "d": 3}
    assert replace_path({"a": 5}, "a.b.c", 1) == {"a": {"b": {"c": 1}}}   # a scalar in the way is replaced
    assert replace_path({}, "x", 1) == {"x": 1}
    assert dotted("hw", {"m": {"size": "1 GB", "n": {"k": 1}}, "z": 0}) == {"hw.m.size": "1 GB", "hw.m.n.k": 1,
                                                                             "hw.z": 0}


@pytest.mark.parametrize("word, known, hint", [
    ("clok", ["clock", "cores"], " (did you mean 'clock'?)"), ("xyz", ["clock"], ""), ("", ["a"], ""),
    # difflib's ratio 2 x 3 / 8 = 0.75 passes the 0.6 cutoff; 2 x 2 / 8 = 0.5 does not
    ("abcd", ["abcx"], " (did you mean 'abcx'?)"), ("abcd", ["abxy"], "")])
def test_suggest_offers_only_a_close_name(word, known, hint):
    assert suggest(word, known) == hint


@pytest.mark.parametrize("value, text", [
    (None, "an empty document"), ([], "a list of 0 items"), ([1], "a list of 1 item"), ([1, 2], "a list of 2 items"),
    (5, "5"), ("x", "'x'"), ({"a": 1}, "a mapping")])
def test_what_a_document_turned_out_to_be(value, text):
    assert what_it_is(value) == text


def test_a_yaml_syntax_error_names_the_line_and_column(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("name: x\na: b: c\n")     # the second ':' on line 2 is its 5th character
    with pytest.raises(ConfigError) as info:
        read_yaml(path)
    assert str(info.value) == f"{path}: YAML syntax error at line 2, column 5: mapping values are not allowed here"


def test_a_bad_byte_names_its_line_and_the_byte(tmp_path):
    path = tmp_path / "b.yaml"
    path.write_bytes(b"a: 1\nb: 2\n\n c: \xe9t\xe9\n")
    with pytest.raises(OltpsimError) as info:
        read_text(path)
    assert str(info.value) == (f"{path}: line 4: got the byte b'\\xe9'; expected UTF-8 text (save the file as "
                               "UTF-8)")
    path.write_bytes(b"\xef\xbb\xbfa: 1\n")
    assert read_text(path) == "a: 1\n" and read_yaml(path) == {"a": 1}
    with pytest.raises(OltpsimError, match=r"nosuch\.yaml: cannot read: No such file or directory$"):
        read_text(tmp_path / "nosuch.yaml")


def test_make_folder_makes_the_parents_or_says_why_not(tmp_path):
    assert make_folder("--out", tmp_path / "a" / "b") == tmp_path / "a" / "b" and (tmp_path / "a" / "b").is_dir()
    make_folder("--out", tmp_path / "a" / "b")    # already there: fine
    (tmp_path / "f").write_text("")
    with pytest.raises(OltpsimError) as info:
        make_folder("--out", tmp_path / "f" / "x")
    assert str(info.value) == f"--out {tmp_path / 'f' / 'x'}: cannot make this folder: Not a directory"


@pytest.mark.parametrize("text, value", [("64", 64), ("true", True), ("2 GB", "2 GB"), ("0.5", 0.5),
                                         ("[1, 2]", [1, 2]), ("{a: 1}", {"a": 1}), ("[1, 2", "[1, 2"), ("", None)])
def test_a_set_value_reads_as_yaml_would(text, value):
    assert parse_scalar(text) == value and type(parse_scalar(text)) is type(value)


# ---------------------------------------------------------------- the scenario's defaults and limits

def load(*, workload="tpcc", profile="t5220", **sets):
    base = {"users": 8} if workload == "tpcc" else {}
    return sc_mod.load(None, {**base, **sets}, profile=profile, workload=workload)


def refused_setting(key, value, *, workload="tpcc", **extra) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load(workload=workload, **{**extra, key: value})
    assert info.value.file == "<command line>" and info.value.path == key, str(info.value)
    return info.value


def test_the_os_and_run_defaults_are_the_documented_ones():
    # oltpsim settings: os.quantum 10 ms, raw paths, a 64-bit kernel, LRU; run.seed 1, warm-up 2 s, batches of 1 s,
    # at least 20 of them, a 1% half-width, settle_writer on, no cap
    spec = load().spec
    assert spec.os == OsSpec(quantum=0.010, filesystem="raw", redo_filesystem="raw", bits=64, page_replacement="lru")
    assert spec.run == RunSpec(seed=1, warmup=2.0, batch=1.0, min_batches=20, target_half_width=0.01,
                               settle_writer=True, max_time=None)
    assert spec.name == "" and spec.hardware == {} and spec.database.oracle_bits == 64


def test_the_run_cap_is_120_s_measured_or_30_days_of_a_batch_job():
    assert RunSpec().cap(batch=False) == 120.0
    assert RunSpec().cap(batch=True) == 30 * 24 * 3600.0
    assert RunSpec(max_time=5.0).cap(batch=False) == 5.0 == RunSpec(max_time=5.0).cap(batch=True)
    assert load(**{"run.max_time": "3 min"}).spec.run.cap(False) == 180.0


def test_specs_are_frozen():
    sc = load()
    spec = sc.spec
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.params = None           # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.name = "x"            # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.run.seed = 2          # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.os.quantum = 1.0      # type: ignore[misc]


@pytest.mark.parametrize("key, good, got, bad, problem", [
    ("run.seed", "0", 0, "-1", "got -1; expected at least 0"),
    ("run.warmup", "0 s", 0.0, "-1 ms", "got '-1 ms'; expected at least 0"),
    ("run.batch", "1 ms", 1e-3, "0.99 ms", "got '0.99 ms'; expected at least 1 ms"),
    ("run.batch", "1 s", 1.0, "0 s", f"got '0 s'; expected a positive {TIME.removeprefix('a ')}"),
    ("run.min_batches", "2", 2, "1", "got 1; expected at least 2"),
    ("run.target_half_width", "0.1%", 0.001, "0%", "got '0%'; expected a positive fraction with a unit"),
    ("run.max_time", "1 s", 1.0, "0 s", f"got '0 s'; expected a positive {TIME.removeprefix('a ')}"),
    ("os.quantum", "100 us", 1e-4, "99 us", "got '99 us'; expected at least 100 us"),
    ("os.quantum", "10 ms", 0.01, "0 ms", f"got '0 ms'; expected a positive {TIME.removeprefix('a ')}"),
])
def test_a_run_or_os_limit_takes_its_boundary_and_refuses_one_step_beyond(key, good, got, bad, problem):
    section, name = key.split(".")
    assert getattr(getattr(load(**{key: good}).spec, section), name) == pytest.approx(got)
    e = refused_setting(key, bad)
    assert problem in e.problem, e.problem


def test_a_batch_longer_than_the_cap_is_refused_on_the_key_given():
    """A steady run measures whole batches: batches of 2 s under run.max_time 1 s ran to 2 s."""
    assert "expected at most run.max_time (1 s)" in refused_setting("run.batch", "2 s", **{"run.max_time": "1 s"}).problem
    e = refused_setting("run.max_time", "0.5 s")   # the default batch, 1 s: the cap given is blamed
    assert "expected at least run.batch (1 s, its default)" in e.problem
    assert load(**{"run.max_time": "0.5 s", "run.batch": "0.25 s"}).spec.run.max_time == 0.5
    e = refused_setting("run.batch", "200 s")   # no cap given: the default's, 120 s
    assert "expected at most run.max_time (120 s, its default)" in e.problem


def test_a_batch_as_long_as_the_cap_in_another_unit_is_taken():
    """700 ms parses to 0.7000000000000001 s: batches of 700 ms under run.max_time 0.7 s are batches of the cap,
    not one a hair longer (nor is a cap in minutes one shorter)."""
    assert load(**{"run.batch": "700 ms", "run.max_time": "0.7 s"}).spec.run.batch == pytest.approx(0.7)
    assert load(**{"run.batch": "3 s", "run.max_time": "0.05 min"}).spec.run.max_time == 3.0


def test_a_batch_job_takes_a_cap_shorter_than_the_steady_batch():
    """A batch job measures no batches (it runs to its end or run.max_time): a cap under the 1 s default
    batch is no clash for it."""
    assert load(workload="rman", channels=1, **{"run.max_time": "0.5 s"}).spec.run.cap(batch=True) == 0.5


@pytest.mark.parametrize("key, value, problem", [
    ("os.bits", "48", "got 48; expected one of 32, 64"),
    ("os.filesystem", "ufs_bufered", "got 'ufs_bufered'; expected one of 'raw', 'quick_io'"),
    ("os.page_replacement", "clock", "got 'clock'; expected one of 'lru', 'fifo'"),
    ("run.settle_writer", "1", "got 1; expected true or false"),
    ("run.seed", "1.5", "got 1.5; expected a whole number"),
])
def test_a_run_or_os_value_of_the_wrong_kind_is_refused(key, value, problem):
    e = refused_setting(key, value, **{"database.db_cache": "1 GB"})
    assert problem in e.problem, e.problem


def test_a_32_bit_kernel_needs_32_bit_oracle_and_blocks_of_at_most_16_kb():
    with pytest.raises(ConfigError) as info:
        load(**{"os.bits": "32"})          # oracle_bits stays at its default, 64
    assert str(info.value) == ("<command line>: database.oracle_bits: got 64; expected 32: 64-bit Oracle needs a 64-bit kernel "
                      "(os.bits: 64)")
    sets = {"os.bits": "32", "database.oracle_bits": "32", "database.db_cache": "1 GB"}
    assert load(**sets).spec.os.bits == 32
    e = refused_setting("database.block_size", "32 KB", **sets)
    assert e.problem == "got '32 KB'; expected at most 16 KB on a 32-bit operating system (os.bits: 32), as Oracle allows"
    assert load(**sets, **{"database.block_size": "16 KB"}).spec.database.block_size == 16 * 1024
    # 32 KB blocks and 64-bit Oracle are fine on a 64-bit kernel
    assert load(**{"database.block_size": "32 KB", "database.db_cache": "1 GB"}).spec.database.block_size == 32 * 1024
    assert sc_mod.MAX_BLOCK_SIZE_32 == 16384


def test_a_scenario_without_profile_or_workload_says_which():
    for missing, doc in (("profile", "hardware profile name or path"), ("workload", "workload name")):
        data = {"profile": "t5220", "workload": "tpcc"}
        del data[missing]
        with pytest.raises(ConfigError) as info:
            sc_mod.resolve(data, "s.yaml")
        assert str(info.value) == f"s.yaml: {missing}: missing key: expected a string ({doc})"


def test_label_and_describe():
    sc = load()
    assert sc.label == "t5220/tpcc" and sc.source == "<command line>"
    assert load(name="peak").label == "peak"
    d = sc.describe()
    assert d["profile"] == "t5220" and d["workload"] == "tpcc" and d["params.users"] == 8
    assert d["database.block_size"] == 8192 and d["os.quantum"] == 0.01 and d["run.warmup"] == 2.0
    assert d["database.parallel.parallel_degree_policy"] == sc.spec.database.parallel.parallel_degree_policy
    assert not any(k.startswith("hardware.") for k in d)
    d = load(**{"hardware.memory.size": "10 GB"}).describe()
    assert d["hardware.memory.size"] == "10 GB"


# ---------------------------------------------------------------- --set overrides

@pytest.mark.parametrize("key, path", [("users", "params.users"), ("profile", "profile"), ("workload", "workload"),
                                       ("name", "name"), ("database.db_cache", "database.db_cache"),
                                       ("run.seed", "run.seed"), ("mix", "params.mix")])
def test_a_plain_key_is_a_workload_parameter(key, path):
    assert sc_mod.setting_path(key) == path


def test_overrides_resolve_to_values_in_si_units():
    out = sc_mod.apply_overrides({"profile": "t5220"}, {"users": "64", "database.db_cache": "2 GB",
                                                         "run.settle_writer": "false", "name": "x", "think_time": 0})
    assert out == {"profile": "t5220", "params": {"users": 64, "think_time": 0}, "database": {"db_cache": "2 GB"},
                   "run": {"settle_writer": False}, "name": "x"}
    sc = load(**{"users": "64", "database.db_cache": "2 GB", "run.warmup": "500 ms"})
    assert sc.params.users == 64 and sc.spec.database.db_cache == 2 * 2**30 and sc.spec.run.warmup == 0.5
    # an override replaces what the file gave, the rest of the section stays
    data = {"profile": "t5220", "workload": "tpcc", "params": {"users": 8, "warehouses": 5}}
    sc = sc_mod.resolve(sc_mod.apply_overrides(data, {"users": 16}))
    assert (sc.params.users, sc.params.warehouses) == (16, 5) and data["params"]["users"] == 8


def test_an_override_given_as_a_python_value_is_taken_as_it_is():
    """Only text is read as YAML would read it: None from a notebook or a sweep stays None (the setting's
    default), not the text 'None', and 1e-07 stays a number, not YAML 1.1's text '1e-07'."""
    out = sc_mod.apply_overrides({}, {"run.max_time": None, "think_time": 1e-07, "warehouses": 5})
    assert out == {"run": {"max_time": None}, "params": {"think_time": 1e-07, "warehouses": 5}}
    assert load(**{"run.max_time": None}).spec.run.cap(batch=False) == 120.0


@pytest.mark.parametrize("key", ["", 5, None])
def test_a_setting_name_that_is_no_name_is_refused(key):
    with pytest.raises(ConfigError) as info:
        sc_mod.apply_overrides({}, {key: "1"}, "row 3")
    assert str(info.value) == (f"row 3: got the setting name {key!r}; expected a setting name such as users or "
                               "database.db_cache")


def test_a_dotted_override_outside_the_sections_names_the_source():
    with pytest.raises(ConfigError) as info:
        sc_mod.apply_overrides({}, {"mix.new_order": "0.9"}, "pts.csv")
    assert info.value.file == "pts.csv" and info.value.path == "mix.new_order"
    with pytest.raises(ConfigError) as info:
        sc_mod.apply_overrides({}, {"runn.seed": "3"}, "pts.csv")
    assert info.value.problem.startswith("got '3', but runn is not a section of the scenario (did you mean 'run'?)")


def test_load_skips_fields_given_as_none_and_takes_no_overrides():
    sc = sc_mod.load(None, None, profile="t5220", workload="ctas", name=None)
    assert sc.spec.name == "" and sc.label == "t5220/ctas" and sc.spec.params == {}


def test_load_reads_a_scenario_file_and_names_it(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("profile: t5220\nworkload: tpcc\nparams: {users: 4}\nrun: {seed: 3}\n")
    sc = sc_mod.load(path, {"run.seed": 7})
    assert sc.source == str(path) and sc.params.users == 4 and sc.spec.run.seed == 7
    assert sc_mod.load(str(path), workload="slob", profile="xeon-e5-2643v3-2s", params={"sessions": 4}).spec.workload \
        == "slob"
    path.write_text("profile: t5220\nworkload: tpcc\nparams: {users: 0}\n")
    with pytest.raises(ConfigError) as info:
        sc_mod.load(path)
    assert info.value.file == str(path) and info.value.path == "params.users"


@pytest.mark.parametrize("overrides", [["users=8"], {"users": 8, 3: 1}, "users=8"])
def test_load_refuses_overrides_that_are_not_a_mapping_of_names(overrides):
    with pytest.raises(OltpsimError) as info:
        sc_mod.load(None, overrides, profile="t5220", workload="tpcc")
    assert str(info.value).startswith(f"scenario.load: overrides: got {overrides!r}; expected a mapping")


def test_a_profile_path_must_name_a_file(tmp_path):
    (tmp_path / "dir.yml").mkdir()
    with pytest.raises(OltpsimError) as info:
        sc_mod.open_profile(tmp_path / "dir.yml")
    assert str(info.value).startswith(f"{tmp_path / 'dir.yml'}: cannot read: a folder; expected a built-in profile")
    with pytest.raises(OltpsimError) as info:
        sc_mod.open_profile(str(tmp_path / "none.yml"))
    assert str(info.value).startswith(f"{tmp_path / 'none.yml'}: cannot read: no such file; expected")
    with pytest.raises(OltpsimError, match="unknown hardware profile 'none'"):   # no suffix: a built-in name
        sc_mod.open_profile("none")
    assert sc_mod.open_profile("t5220").name == "t5220"


# ---------------------------------------------------------------- settings a run would not read

def test_the_run_settings_each_kind_of_run_reads():
    steady = ["run.seed", "run.warmup", "run.batch", "run.min_batches", "run.target_half_width"]
    assert sc_mod.accepted_run_settings("tpcc") == [*steady, "run.settle_writer", "run.max_time", "run.interval"]
    assert sc_mod.accepted_run_settings("slob") == [*steady, "run.max_time", "run.interval"]   # no DBWR
    for batch in ("rman", "sqlldr", "ctas", "create_index", "calibrate_io"):
        assert sc_mod.accepted_run_settings(batch) == ["run.seed", "run.max_time", "run.interval"], batch


def test_a_steady_run_setting_at_its_default_is_no_change_for_a_batch_job():
    sc = load(workload="rman", channels=1, **{"run.warmup": "2 s", "run.min_batches": 20, "run.seed": 5})
    assert sc.spec.run.seed == 5
    e = refused_setting("run.warmup", "3 s", workload="rman", channels=1)
    assert "a batch job" in e.problem


def test_settle_writer_false_needs_a_dbwr_and_true_is_no_change():
    assert load(**{"run.settle_writer": "true"}).spec.run.settle_writer is True
    e = refused_setting("run.settle_writer", "false")
    assert e.problem.startswith("got False; expected no run.settle_writer here (no database.db_cache: the data is all "
                                "cached, and profile t5220 has no controller write-back cache)")
    assert e.problem.endswith("leave it out, or give database.db_cache")
    e = refused_setting("run.settle_writer", "false", workload="slob", profile="xeon-e5-2643v3-2s", sessions=4)
    assert "(workload slob writes no datafile through DBWR, and profile" in e.problem
    assert e.problem.endswith("leave it out")
    # a controller's write-back cache is settled too (sim/run.py): there the setting is taken
    assert load(workload="slob", profile="opteron-4way", sessions=4, schema_size="10 GB",
                **{"run.settle_writer": "false"}).spec.run.settle_writer is False


def test_redo_log_size_reads_where_the_redo_file_caches_its_writes_only():
    # a buffered redo file system reads back partial pages within the circle of logs; Cached Quick I/O caches
    # reads but writes direct, so without a DBWR the logs' size changes nothing there
    assert load(**{"database.redo_log_size": "1 GB", "os.redo_filesystem": "vxfs_buffered"}).spec.database \
        .redo_log_size == 2**30
    e = refused_setting("database.redo_log_size", "1 GB", **{"os.redo_filesystem": "cached_quick_io"})
    assert e.problem.startswith("got '1 GB'; expected no database.redo_log_size here (os.redo_filesystem "
                                "cached_quick_io, no database.db_cache): ")
    e = refused_setting("database.redo_log_size", "1 GB", **{"os.redo_filesystem": "ufs_direct"})
    assert "Give database.db_cache, or leave this key out" in e.problem
    e = refused_setting("database.redo_log_size", "1 GB", workload="sqlldr", data_size="1 GB")
    assert e.problem.endswith("Leave this key out") and "workload sqlldr changes no block DBWR writes" in e.problem
    # with a buffer cache the message does not claim there is none
    e = refused_setting("database.redo_log_size", "1 GB", workload="slob", profile="xeon-e5-2643v3-2s", sessions=4,
                        update_pct=10, **{"database.db_cache": "1 GB"})
    assert "(os.redo_filesystem raw): " in e.problem


def test_redo_log_groups_at_the_default_needs_no_log_size():
    assert load(**{"database.redo_log_groups": "3"}).spec.database.redo_log_groups == 3
    e = refused_setting("database.redo_log_groups", "2")
    assert e.problem.startswith("got 2; expected no database.redo_log_groups without database.redo_log_size")


def test_a_datafile_setting_at_its_default_is_no_change_without_a_cache():
    assert load(**{"os.filesystem": "raw", "os.page_replacement": "lru"}).spec.os.filesystem == "raw"
    e = refused_setting("os.page_replacement", "fifo")
    assert e.problem.startswith("got 'fifo'; expected no os.page_replacement without database.db_cache")


def test_a_word_size_is_a_whole_number_as_written():
    # --set os.bits=64.0 used to load, and the run recorded os.bits 64.0 (run.seed=3.0 is refused as not whole)
    e = refused_setting("os.bits", "64.0")
    assert e.problem == "got 64.0; expected one of 32, 64"
    e = refused_setting("database.oracle_bits", "true")
    assert e.problem == "got True; expected one of 32, 64"
    assert load(**{"os.bits": "64"}).describe()["os.bits"] == 64


def test_a_bad_value_given_beside_a_scenario_file_is_blamed_on_the_command_line(tmp_path):
    # oltpsim run s.yaml --set users=0 said "s.yaml: params.users: got 0", sending the reader to a file holding 4
    path = tmp_path / "s.yaml"
    path.write_text("profile: t5220\nworkload: tpcc\nparams: {users: 4}\nrun: {warmup: 2 s}\n")
    for overrides, fields, key in [({"users": "0"}, {}, "params.users"), ({"run.warmup": "-1 s"}, {}, "run.warmup"),
                                   ({}, {"profile": "t5221"}, "profile"),
                                   ({"hardware.memory.size": "ten"}, {}, "hardware.memory.size")]:
        with pytest.raises(ConfigError) as info:
            sc_mod.load(path, overrides, **fields)
        assert (info.value.file, info.value.path) == ("<command line>", key), str(info.value)
    path.write_text("profile: t5220\nworkload: tpcc\nparams: {users: 0}\n")
    with pytest.raises(ConfigError) as info:       # the file's own value is still blamed on the file
        sc_mod.load(path, {"run.seed": "3"})
    assert (info.value.file, info.value.path) == (str(path), "params.users")


@pytest.mark.parametrize("error_path, key, raw, beside", [
    ("params.users", "params.users", {"params": {"users": 4}}, True),              # at the key given
    ("params.mix.payment", "params.mix", {"params": {"mix": {}}}, True),           # inside it
    ("params.items[1]", "params.items", {"params": {"items": [1, 2]}}, True),      # an item of it
    ("params.itemsx", "params.items", {}, False),                                   # another key sharing its start
    # inside a disk group a --set adds, which the file has nothing of
    ("hardware.storage.disk_groups.new.count", "hardware.storage.disk_groups.new.disk", {"profile": "t5220"}, True),
    # a section the file leaves out is not enough: its defaults may be what clashes with the file
    ("run.max_time", "run.batch", {"profile": "t5220"}, False),
    ("hardware.memory.size", "hardware.memory.kernel", {"hardware": {"memory": {"size": "1 GB"}}}, False),
])
def test_an_error_is_about_a_setting_given_beside_the_file_at_it_in_it_or_in_what_it_adds(error_path, key, raw,
                                                                                          beside):
    """Whether load and sweeps blame an error on the command line (sim/scenario.py given_beside), by hand."""
    assert sc_mod.given_beside(error_path, key, raw) is beside


def test_a_profile_of_your_own_named_in_a_scenario_file_is_the_one_beside_that_file(tmp_path, monkeypatch):
    """`oltpsim run mine/s.yaml` with `profile: my-t5220.yaml` in the file looked for ./my-t5220.yaml ('cannot
    read: no such file'); it is mine/my-t5220.yaml, for run, sweep and capacity alike. A --profile given on the
    command line is still a path from the working folder."""
    from sim import sweep
    root = Path(__file__).resolve().parent.parent
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "my-t5220.yaml").write_text((root / "hardware_profiles" / "t5220.yaml").read_text()
                                        .replace("name: t5220", "name: my-t5220"))
    (mine / "s.yaml").write_text("profile: my-t5220.yaml\nworkload: tpcc\nparams: {users: 8}\n")
    monkeypatch.chdir(tmp_path)
    assert sc_mod.load("mine/s.yaml").profile.name == "my-t5220"
    data, _ = sc_mod.read_mapping("mine/s.yaml", "sweep")          # what sweep and capacity start from
    assert sc_mod.resolve(data, "mine/s.yaml").profile.name == "my-t5220"
    assert sweep.plan(data, "mine/s.yaml", [{"users": 4}], 1)[0].scenario.profile.name == "my-t5220"
    (tmp_path / "cwd.yaml").write_text((mine / "my-t5220.yaml").read_text().replace("name: my-t5220", "name: cwd"))
    assert sc_mod.load("mine/s.yaml", profile="cwd.yaml").profile.name == "cwd"
