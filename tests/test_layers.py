"""DESIGN.md's layers: workloads drive sessions, never hardware internals. Every workload's I/O goes through
the database layer (sim/db), which records its waits as AWR would; rman and sqlldr are checked end to end."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from sim import scenario
from sim.run import run
from workloads import rman, sqlldr

WORKLOADS = sorted((Path(__file__).resolve().parent.parent / "workloads").glob("*.py"))
MB = 2.0**20


def _calls_and_imports(path: Path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield "import", node.module, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield "import", alias.name, node.lineno
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "submit":
            yield "submit", ast.unparse(node.func), node.lineno


@pytest.mark.parametrize("path", WORKLOADS, ids=lambda p: p.name)
def test_workloads_import_no_hardware_or_os_and_submit_no_io(path):
    """A workload asks a session (or another sim/db object) for its I/O: it neither imports the hardware or OS
    layers nor calls a device's submit itself."""
    bad = [f"{path.name}:{line}: {kind} {what}" for kind, what, line in _calls_and_imports(path)
           if kind == "submit" or what.startswith(("sim.hardware", "sim.os"))]
    assert not bad, "workloads reach below the database layer:\n" + "\n".join(bad)


def _run(workload: str, overrides: dict):
    r = run(scenario.load(None, {"run.max_time": "100000 s", **overrides}, profile="t5220", workload=workload))
    assert r.status == "ok", r.message
    waits = {e["event"]: e["waits"] for e in r.top_events}
    written = {name: d["mb_per_s"] * r.elapsed * MB for name, d in r.devices.items()}
    return r, waits, written


def test_rman_channel_io_and_control_file_transactions_are_the_sessions_waits():
    """Every 1 MB input buffer a channel waits for is one 'RMAN backup & recovery I/O' wait, and so is each
    piece's wait for its last output buffer to be written (its output fits the 4 buffers: no other); every piece
    one CF enqueue get (a wait only behind the other channel's: never the first) and CF_WRITES_PER_PIECE 'control
    file parallel write's; the backup device gets the compressed
    bytes, the datafile device the datafiles plus the control-file writes (they share it here)."""
    sizes = (5.0, 3.5, 2.0)
    r, waits, moved = _run("rman", {"channels": 2, "datafiles_mb": str(list(sizes)), "datafile_device": "array",
                                    "backup_device": "internal", "database.control_file_device": "array"})
    pieces = r.extra["pieces"]
    assert pieces == len(sizes)
    assert all(s * rman.COMPRESSION_RATIO * MB <= rman.OUTPUT_BUFFERS * rman.OUTPUT_BUFFER for s in sizes)
    assert waits["RMAN backup & recovery I/O"] == sum(math.ceil(s * MB / rman.READ_SIZE) for s in sizes) + pieces
    assert waits.get("enq: CF - contention", 0) < pieces
    assert waits["control file parallel write"] == pieces * rman.CF_WRITES_PER_PIECE
    assert moved["internal"] == pytest.approx(sum(sizes) * MB * rman.COMPRESSION_RATIO, rel=1e-9)
    cf = pieces * rman.CF_WRITES_PER_PIECE * rman.CONTROL_FILE_COPIES * rman.CONTROL_FILE_WRITE
    assert moved["array"] == pytest.approx(sum(sizes) * MB + cf, rel=1e-9)


@pytest.mark.parametrize("direct", [False, True])
def test_sqlldr_reads_commits_and_table_writes_go_through_the_session(direct):
    """Each 16 MB input buffer is one 'SQL*Net more data from client' wait; the conventional path commits each ('log file
    sync'), the direct path commits nothing; the table's device gets every input byte, asynchronously: the direct
    load waits for its last writes at its end, the conventional one leaves them to DBWR (at most 2 rounds)."""
    size = 100.0
    r, waits, moved = _run("sqlldr", {"data_size": f"{size:g} MB", "direct": str(direct).lower(),
                                      "input_device": "internal", "table_device": "array",
                                      "database.redo_device": "internal"})
    buffers = math.ceil(size * MB / sqlldr.BUFFER)
    assert waits["SQL*Net more data from client"] == buffers
    assert waits.get("log file sync", 0) == (0 if direct else buffers)
    if direct:
        assert moved["array"] == pytest.approx(size * MB, rel=1e-9)
        assert waits["direct path write"] >= 1
    else:
        assert size * MB - sqlldr.WRITE_SLOTS * sqlldr.BUFFER <= moved["array"] <= size * MB * (1 + 1e-9)
