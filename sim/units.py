"""Quantities with units, as people write them in YAML: "1.4 GHz", "8 KB", "4.5 ms".

Every quantity is converted once, at load time, to a plain float in SI base units
(seconds, bytes, hertz, bytes per second, revolutions per second, events per second).
Sizes are binary (1 KB = 1024 bytes), as Oracle and operating systems count memory and
blocks. A number without a unit is refused: "8" could be bytes, blocks or gigabytes.
"""

from __future__ import annotations

import re

# kind -> {unit symbol: factor to the SI base unit}
_UNITS: dict[str, dict[str, float]] = {
    "time": {
        "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0,
        "min": 60.0, "h": 3600.0,
    },
    "size": {
        "B": 1.0, "KB": 1024.0, "K": 1024.0, "KiB": 1024.0, "MB": 1024.0**2, "M": 1024.0**2,
        "MiB": 1024.0**2, "GB": 1024.0**3, "G": 1024.0**3, "GiB": 1024.0**3,
        "TB": 1024.0**4, "TiB": 1024.0**4,
    },
    "frequency": {"Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9},
    "rotation": {"rpm": 1.0 / 60.0},
    "bandwidth": {
        "B/s": 1.0, "KB/s": 1024.0, "MB/s": 1024.0**2, "GB/s": 1024.0**3, "TB/s": 1024.0**4,
        "Gb/s": 1e9 / 8, "Mb/s": 1e6 / 8,
    },
    "rate": {"/s": 1.0, "IOPS": 1.0, "per s": 1.0, "/min": 1.0 / 60.0},
    "fraction": {"%": 0.01},
}

_EXAMPLES = {
    "time": '"4.5 ms"', "size": '"8 KB"', "frequency": '"1.4 GHz"', "rotation": '"7200 rpm"',
    "bandwidth": '"100 MB/s"', "rate": '"50000 IOPS"', "fraction": '"40%"',
}

_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\d\s].*?)?\s*$")


class UnitError(ValueError):
    """A quantity string that cannot be read; the message says what was expected."""


def expected(kind: str) -> str:
    """What a value of this kind should look like, for error messages."""
    units = ", ".join(_UNITS[kind])
    return f"a {kind} with a unit, like {_EXAMPLES[kind]} (units: {units})"


def parse(value: object, kind: str) -> float:
    """Convert a YAML value of the given kind to a float in SI base units."""
    if kind not in _UNITS:
        raise KeyError(f"unknown quantity kind {kind!r}")
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise UnitError(expected(kind))
    if not isinstance(value, str):   # a fraction too: 5 could mean 5% or 500%
        raise UnitError(f"missing unit: {expected(kind)}")
    match = _QUANTITY.match(value)
    if not match:
        raise UnitError(expected(kind))
    number, unit = float(match.group(1)), (match.group(2) or "").strip()
    if not unit:
        raise UnitError(f"missing unit: {expected(kind)}")
    factor = _UNITS[kind].get(unit)
    if factor is None:
        raise UnitError(f"unknown unit {unit!r}: {expected(kind)}")
    return number * factor


def format_quantity(value: float, kind: str) -> str:
    """A readable string for a value in SI base units (for reports and `profile show`)."""
    if kind == "size":
        for unit in ("TB", "GB", "MB", "KB"):
            f = _UNITS["size"][unit]
            if abs(value) >= f:
                return f"{value / f:.4g} {unit}"
        return f"{value:.4g} B"
    if kind == "time":
        for unit, f in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
            if abs(value) >= f:
                return f"{value / f:.4g} {unit}"
        return f"{value / 1e-9:.4g} ns"
    if kind == "frequency":
        return f"{value / 1e9:.4g} GHz" if value >= 1e9 else f"{value / 1e6:.4g} MHz"
    if kind == "bandwidth":
        return format_quantity(value, "size") + "/s"
    if kind == "rotation":
        return f"{value * 60:.0f} rpm"
    if kind == "fraction":
        return f"{value * 100:.3g}%"
    return f"{value:.4g}"


def exact_quantity(value: float, kind: str) -> str:
    """The value with a unit, as format_quantity picks it, to 12 significant digits: parse() gives it back to a
    rounding ('1.54 GHz' of a clock 10% above 1.4 GHz, where format_quantity's 4 digits would lose 1.4001 GHz's)."""
    unit = _QUANTITY.match(format_quantity(value, kind)).group(2) or "/s"   # (a rate is shown without a unit)
    return f"{value / _UNITS[kind][unit]:.12g} {unit}"
