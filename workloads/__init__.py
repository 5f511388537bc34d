"""Workloads: each module turns parameters into work items for sessions.

A workload module defines `Params` (a config dataclass: its parameters, with units and
limits) and `Workload` (built with a System, its Params and a random generator). The
registry maps the names people type to modules, imported only when used.
"""

from __future__ import annotations

import importlib

from sim.config import OltpsimError, suggest

REGISTRY = {
    "tpcc": "workloads.tpcc",
    "slob": "workloads.slob",
    "calibrate_io": "workloads.calibrate_io",
}


def names() -> list[str]:
    return sorted(REGISTRY)


def get(name: str):
    """The workload module registered under `name`."""
    if name not in REGISTRY:
        raise OltpsimError(f"unknown workload {name!r}{suggest(name, REGISTRY)}; known workloads: {', '.join(names())}")
    return importlib.import_module(REGISTRY[name])
