"""YAML -> frozen dataclasses, with units and errors a person can act on.

Every configurable thing (a hardware profile, a scenario, a workload's parameters) is a
frozen dataclass whose fields declare what they accept through `field` metadata: a
quantity kind ("time", "size", ...), whether it must be positive, a default and a one-line
description. `build(cls, data, source)` walks the YAML mapping against those declarations
and raises one `ConfigError` naming the file, the key path, the bad value and what was
expected. Unknown keys are refused with the closest known key suggested: a typo must
never pass silently.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import types
import typing
from pathlib import Path
from typing import Any, Literal

import yaml

from sim import units


class OltpsimError(Exception):
    """Any error caused by the user's input: the CLI prints it and exits 2."""


class ConfigError(OltpsimError):
    def __init__(self, file: str, path: str, problem: str):
        self.file, self.path, self.problem = file, path, problem
        super().__init__(f"{file}: {path}: {problem}" if path else f"{file}: {problem}")


@dataclasses.dataclass(frozen=True)
class Source:
    """Where a mapping came from, and where in it we are (for error messages)."""

    file: str = "<input>"
    path: str = ""

    def at(self, key: str | int) -> "Source":
        step = f"[{key}]" if isinstance(key, int) else str(key)
        joined = f"{self.path}{step}" if isinstance(key, int) or not self.path else f"{self.path}.{step}"
        return Source(self.file, joined)

    def error(self, problem: str) -> ConfigError:
        return ConfigError(self.file, self.path, problem)

    def bad(self, value: Any, expected: str) -> ConfigError:
        return self.error(f"got {value!r}; expected {expected}")


# ---------------------------------------------------------------- field declarations

def param(doc: str, *, default: Any = dataclasses.MISSING, kind: str | None = None,
          positive: bool = False, minimum: float | None = None, maximum: float | None = None,
          choices: tuple | None = None) -> Any:
    """Declare a configurable field: its description, unit kind and limits."""
    if kind is not None and isinstance(default, str):
        default = units.parse(default, kind)  # defaults are written as people write values
    if kind is not None and choices is not None:   # so are the values a quantity may take: ("2 KB", "4 KB")
        choices = tuple(units.parse(c, kind) if isinstance(c, str) else c for c in choices)
    meta = {"doc": doc, "kind": kind, "positive": positive, "minimum": minimum,
            "maximum": maximum, "choices": choices}
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda d=default: type(d)(d), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _describe(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if tp is bool:
        return "true or false"
    if tp is int:
        return "a whole number"
    if tp is float:
        return "a number"
    if tp is str:
        return "a string"
    if origin is Literal:
        return "one of " + ", ".join(repr(c) for c in typing.get_args(tp))
    if dataclasses.is_dataclass(tp):
        return "a mapping"
    if origin in (tuple, list):
        return "a list"
    if origin is dict:
        return "a mapping"
    return str(tp)


_EXPONENT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")   # 1e3, 2.5E-3: a number in YAML 1.2 and in Python


def _convert(tp: Any, value: Any, meta: dict, src: Source) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        return _convert(args[0], value, meta, src)
    kind = meta.get("kind")
    if kind is not None:
        try:
            out = units.parse(value, kind)
        except units.UnitError as exc:
            raise _unit_error(src, value, kind, str(exc)) from None
        if tp is int and math.isfinite(out):   # rounded once known finite: _limits refuses '1e999 KB' clearly
            out = int(round(out))
        out = _limits(out, value, meta, src, units.expected(kind))
        choices = meta.get("choices")
        if choices and out not in choices:
            raise src.bad(value, "one of " + ", ".join(units.format_quantity(c, kind) for c in choices))
        return out
    if tp is bool:
        if not isinstance(value, bool):
            raise src.bad(value, "true or false")
        return value
    if tp in (int, float):
        if isinstance(value, str) and _EXPONENT.match(value.strip()):   # YAML 1.1 reads 1e3 as text, 1.0e+3 as a number
            number = float(value)
            # a whole number is one written without a point (1e3), as 1000 is and 1000.0 is not (refused alike)
            whole = tp is int and "." not in value and number.is_integer() and math.isfinite(number)
            value = int(number) if whole else number
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (tp is int and not isinstance(value, int)):
            raise src.bad(value, _describe(tp))
        return _limits(tp(value), value, meta, src, _describe(tp))
    if tp is str:
        if not isinstance(value, str):
            raise src.bad(value, "a string")
        choices = meta.get("choices")
        if choices and value not in choices:
            same = [c for c in choices if isinstance(c, str) and c.lower() == value.lower()]
            if same:   # AUTO is auto, as Oracle takes its parameters' values in any case
                return same[0]
            raise src.bad(value, "one of " + ", ".join(repr(c) for c in choices) + suggest(value, choices))
        return value
    if origin is Literal:
        allowed = typing.get_args(tp)
        # of the same type too: 64.0 and True equal a Literal's 64 and 1, yet a whole-number key refuses 3.0
        same = [a for a in allowed if isinstance(a, str) and isinstance(value, str) and a.lower() == value.lower()]
        if same:   # AUTO is auto, as Oracle takes its parameters' values in any case
            return same[0]
        if not any(type(value) is type(a) and value == a for a in allowed):
            hint = suggest(value, [a for a in allowed if isinstance(a, str)]) if isinstance(value, str) else ""
            raise src.bad(value, "one of " + ", ".join(repr(a) for a in allowed) + hint)
        return value
    if dataclasses.is_dataclass(tp):
        return build(tp, value, src)
    if origin in (tuple, list):
        (item_tp, *_rest) = typing.get_args(tp)
        if not isinstance(value, list):
            raise src.bad(value, "a list")
        return tuple(_convert(item_tp, v, {}, src.at(i)) for i, v in enumerate(value))
    if origin is dict:
        key_tp, val_tp = typing.get_args(tp)
        if not isinstance(value, dict):
            raise src.bad(value, "a mapping")
        return {str(k): _convert(val_tp, v, meta if not dataclasses.is_dataclass(val_tp) else {}, src.at(str(k)))
                for k, v in value.items()}
    if tp is Any or tp is object:
        return value
    raise TypeError(f"config type {tp!r} is not supported")  # a programming error, not input


def _unit_error(src: Source, value: Any, kind: str, reason: str) -> ConfigError:
    """'got '10 GBB' (unknown unit 'GBB'); expected a size with a unit, ...': what is wrong with
    the value beside the value, then what was expected (units.parse puts both in one message)."""
    expected = units.expected(kind)
    what = reason[: -len(expected)].rstrip(": ") if reason.endswith(expected) else ""
    return src.error(f"got {value!r}{f' ({what})' if what else ''}; expected {expected}")


def _qualified(adjective: str, expected: str) -> str:
    """'a size' -> 'a positive size'; anything else -> 'a positive value (...)'."""
    if expected.startswith("a "):
        return f"a {adjective} " + expected.removeprefix("a ")
    return f"a {adjective} value ({expected})"


def _limits(out: float, raw: Any, meta: dict, src: Source, expected: str) -> float:
    if not math.isfinite(out):   # '1e999 GB' or .inf would pass every limit below, and NaN fails none
        raise src.bad(raw, _qualified("finite", expected))
    if meta.get("positive") and not out > 0:
        raise src.bad(raw, _qualified("positive", expected))
    lo, hi = meta.get("minimum"), meta.get("maximum")

    def written(bound: float) -> str:   # in the setting's unit, as a user writes it ('1 ms', not 0.001)
        return units.format_quantity(bound, meta["kind"]) if bound and meta.get("kind") else f"{bound:g}"
    # a bound written in a unit ('100 us' = 100 x 1e-6) may parse a rounding error off itself
    if lo is not None and out < lo - 1e-12 * abs(lo):
        raise src.bad(raw, f"at least {written(lo)}")
    if hi is not None and out > hi + 1e-12 * abs(hi):
        raise src.bad(raw, f"at most {written(hi)}")
    return out


def suggest(word: str, known: typing.Iterable[str], cutoff: float = 0.6) -> str:
    """' (did you mean X?)' for the known name closest to `word` (difflib's ratio at least `cutoff`), else ''."""
    close = difflib.get_close_matches(str(word), list(known), n=1, cutoff=cutoff)
    return f" (did you mean {close[0]!r}?)" if close else ""


REQUIRED = "(required)"


def declared(cls: type, prefix: str = "") -> typing.Iterator[tuple[str, Any, dict]]:
    """(dotted key, default, field metadata) of every field of a config dataclass, its sections
    walked into; the default is REQUIRED where there is none."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[f.name]):
            yield from declared(hints[f.name], f"{prefix}{f.name}.")
            continue
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else REQUIRED)
        yield prefix + f.name, default, dict(f.metadata)


def format_setting(value: Any, meta: dict) -> str:
    """A setting as a person writes it in YAML: '8 KB', '10 ms', 'true'; '(omit)' for None."""
    if value is None:
        return "(omit)"
    if isinstance(value, bool):
        return str(value).lower()
    if meta.get("kind") and isinstance(value, (int, float)):
        # format_quantity picks the unit by size, which makes a zero time '0 ns'
        return "0 s" if value == 0 and meta["kind"] == "time" else units.format_quantity(value, meta["kind"])
    if isinstance(value, dict):   # YAML's flow style, which --set takes back (Python's repr it does not)
        return "{" + ", ".join(f"{k}: {format_setting(v, meta)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_setting(v, meta) for v in value) + "]"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))   # (420.0 as 420; others as Python's shortest exact repr)
    return str(value)


def build(cls: type, data: Any, src: Source | None = None) -> Any:
    """Build a frozen config dataclass from a YAML mapping, or raise one ConfigError."""
    src = src or Source()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise src.bad(data, "a mapping of keys to values")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for key in data:
        if key not in fields:
            known = ", ".join(fields)
            raise src.at(str(key)).error(f"unknown key{suggest(str(key), fields)}; known keys here: {known}")
    kwargs = {}
    for name, f in fields.items():
        if name in data:
            kwargs[name] = _convert(hints[name], data[name], dict(f.metadata), src.at(name))
        elif dataclasses.is_dataclass(hints[name]):
            kwargs[name] = build(hints[name], {}, src.at(name))  # a section left out: all its defaults
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            kind = f.metadata.get("kind")
            what = units.expected(kind) if kind else _describe(hints[name])
            raise src.at(name).error(f"missing key: expected {what} ({f.metadata.get('doc', name)})")
    obj = cls(**kwargs)
    check = getattr(obj, "check", None)
    if check is not None:
        check(src)
    return obj


def replace_path(data: dict, dotted: str, value: Any) -> dict:
    """Return a copy of a nested mapping with one dotted key set (for --set and sweeps)."""
    out = dict(data)
    head, _, rest = dotted.partition(".")
    if rest:
        inner = out.get(head)
        out[head] = replace_path(inner if isinstance(inner, dict) else {}, rest, value)
    else:
        out[head] = value
    return out


def get_path(data: Any, dotted_key: str) -> tuple[bool, Any]:
    """Whether a nested mapping holds a dotted key ('database.db_cache'), and its value there."""
    node: Any = data
    for part in dotted_key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def dotted(prefix: str, tree: dict) -> dict:
    """Nested keys as flat columns: ('hardware', {'memory': {'size': '10 GB'}}) -> {'hardware.memory.size': '10 GB'}."""
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(dotted(f"{prefix}.{key}", value))
        else:
            out[f"{prefix}.{key}"] = value
    return out


def make_folder(option: str, path: Path | str) -> Path:
    """Create an output folder up front: a path that cannot be one stops a command before it runs."""
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OltpsimError(f"{option} {path}: cannot make this folder: {exc.strerror}") from None
    return Path(path)


def read_text(path: Path | str) -> str:
    """A text input file, refused as input when it cannot be read or is not UTF-8 text. A leading
    byte-order mark (what Excel's 'CSV UTF-8' writes) is dropped: kept, it became part of the first
    CSV column's name, refused as an unknown setting that prints as the right one."""
    path = Path(path)
    try:
        return path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise OltpsimError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise OltpsimError(f"{path}: line {line}: got the byte {exc.object[exc.start:exc.start + 1]!r}; expected "
                           "UTF-8 text (save the file as UTF-8)") from None


def what_it_is(value: Any) -> str:
    """What a YAML document turned out to be, for 'expected a mapping' messages."""
    if value is None:
        return "an empty document"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    return f"{value!r}" if not isinstance(value, dict) else "a mapping"


class _KeyTwice(Exception):
    def __init__(self, path: str, lines: tuple[int, int]):
        self.path, self.lines = path, lines


class _Loader(yaml.SafeLoader):
    """Safe loading that refuses a key given twice in one mapping: PyYAML keeps the last one
    silently, so a value edited further down a file would override the one a person reads."""

    def construct_document(self, node):
        self._root = node   # (to find a repeated key's path from)
        return super().construct_document(node)

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _value in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":   # '<<' merges keys the mapping may then override
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:   # an unhashable key: construct_mapping refuses it as PyYAML does
                    continue
                if first is not key_node:
                    where = _node_path(self._root, node, Source()) or Source()   # (None: a mapping used as a key)
                    raise _KeyTwice(where.at(str(key)).path,
                                    (first.start_mark.line + 1, key_node.start_mark.line + 1))
        return super().construct_mapping(node, deep)


def _node_path(at: yaml.Node, target: yaml.Node, src: Source, seen: set | None = None) -> Source | None:
    """The key path of `target` in the document under `at`, for messages."""
    if at is target:
        return src
    seen = set() if seen is None else seen
    if id(at) in seen:   # an alias back up the tree (&a [*a]) would lead round it forever
        return None
    seen.add(id(at))
    if isinstance(at, yaml.MappingNode):
        children = [(src.at(str(k.value)), v) for k, v in at.value]
    elif isinstance(at, yaml.SequenceNode):
        children = [(src.at(i), v) for i, v in enumerate(at.value)]
    else:
        return None
    for child_src, child in children:
        found = _node_path(child, target, child_src, seen)
        if found is not None:
            return found
    return None


def read_yaml(path: Path | str) -> Any:
    """Read a YAML file; a syntax error names the file and the line, a key given twice its lines."""
    text = read_text(path)
    try:
        return yaml.load(text, Loader=_Loader)
    except _KeyTwice as exc:
        raise ConfigError(str(path), exc.path, f"given twice (lines {exc.lines[0]} and {exc.lines[1]}); "
                          "expected each key once") from None
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), "", f"YAML syntax error at {_where(exc, text)}: {_problem(exc)}") from None


def _where(exc: yaml.YAMLError, text: str) -> str:
    """'line L, column C' of a parse error, or of a character the reader refused (it gives an offset)."""
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return f"line {mark.line + 1}, column {mark.column + 1}"
    if isinstance(exc, yaml.reader.ReaderError) and isinstance(exc.position, int):
        before = text[:exc.position]
        return f"line {before.count(chr(10)) + 1}, column {exc.position - before.rfind(chr(10))}"
    return "an unknown place"


def _problem(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.reader.ReaderError) and isinstance(exc.character, int):   # the reader gives its code
        return f"character U+{exc.character:04X} is not allowed in YAML ({exc.reason})"
    return getattr(exc, "problem", None) or str(exc)


def parse_scalar(text: str, where: Source | None = None) -> Any:
    """A --set value as YAML would read it: "64" -> 64, "true" -> True, "2 GB" stays a string. An inline
    mapping with a key twice ('mix={payment: 0.4, payment: 0.5}') is refused, at `where` (the setting)."""
    try:
        return yaml.load(text, Loader=_Loader)
    except _KeyTwice as exc:
        where = where or Source("<command line>")
        raise where.error(f"got {text!r}, with {exc.path} given twice; expected each key once") from None
    except yaml.YAMLError:
        return text
