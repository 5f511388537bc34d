"""What runs the runs failing: a worker process that dies, a --scheduler where no Dask scheduler answers.
One clear line, exit 1 (not bad input's 2), the runs in flight named, the finished ones kept."""

from __future__ import annotations

import re
import socket
import time
from concurrent.futures import Executor, Future
from concurrent.futures.process import BrokenProcessPool

import pytest
from click.testing import CliRunner

from sim import sweep as sw
from sim.config import OltpsimError
from sim.executors import ExecutorFailed, _reach

TINY_RUN = {"warmup": "0.2 s", "batch": "0.2 s", "min_batches": 2, "max_time": "0.4 s"}
BASE = {"profile": "t5220", "workload": "tpcc", "params": {"users": 2, "think_time": "0 s", "keying_time": "0 s"},
        "run": TINY_RUN}


class DyingPool(Executor):
    """A process pool whose worker dies at the run of `users=die`: that future and every one after it fail with
    BrokenProcessPool, and a later submit is refused, as CPython's pool does."""

    def __init__(self, die: int, error=BrokenProcessPool):
        self.die, self.error, self.broken = die, error, False

    def submit(self, fn, /, *args, **kwargs) -> Future:
        if self.broken and self.error is BrokenProcessPool:
            raise BrokenProcessPool("A child process terminated abruptly, the process pool is not usable anymore")
        fut: Future = Future()
        if self.broken or args[0].params.users == self.die:
            self.broken = self.error is BrokenProcessPool
            fut.set_exception(self.error("the worker died"))
        else:
            fut.set_result(fn(*args, **kwargs))
        return fut


def test_a_dead_worker_stops_the_sweep_with_one_line_exit_1_naming_the_runs_in_flight(tmp_path):
    with pytest.raises(ExecutorFailed, match=r"in flight: point 1 \[users=8\] replication 0.*saved in") as err:
        sw.sweep(BASE, vary={"users": [2, 8, 12]}, out=tmp_path, executor=DyingPool(8), workers=1, progress=False)
    assert err.value.exit_code == 1
    assert len(sw.Journal(tmp_path / "points.jsonl").read()) == 1     # users=2 finished before: kept


def test_a_dask_run_whose_workers_all_died_is_recorded_as_crashed_and_the_sweep_goes_on(tmp_path):
    distributed = pytest.importorskip("distributed")
    def killed(_message):
        from types import SimpleNamespace
        return distributed.KilledWorker("run_one-1", SimpleNamespace(address="tcp://127.0.0.1:1"), 3)

    res = sw.sweep(BASE, vary={"users": [2, 8, 12]}, out=tmp_path, executor=DyingPool(8, killed), workers=1,
                   progress=False)
    assert list(res.table["status"]) == ["ok", "error", "ok"]
    assert res.table["message"][1].startswith("KilledWorker")


def test_the_cli_exits_1_on_a_failed_executor_and_2_on_bad_input(monkeypatch):
    from sim import cli

    def broken(*_a, **_k):
        raise sw.executor_failed(BrokenProcessPool("died"), ["point 0 [users=8] replication 0"], "out/points.jsonl")

    monkeypatch.setattr(sw, "sweep", broken)
    args = ["sweep", "--profile", "t5220", "--workload", "tpcc", "--vary", "users=8"]
    got = CliRunner().invoke(cli.main, args)
    assert got.exit_code == 1 and "oltpsim: error: the executor failed (BrokenProcessPool: died)" in got.output
    assert "Traceback" not in got.output
    assert CliRunner().invoke(cli.main, [*args, "--vary", "users=9"]).exit_code == 2
    both = CliRunner().invoke(cli.main, [*args, "--dask-local", "1", "-j", "2"])   # -j was silently ignored
    assert both.exit_code == 2 and "-j 2: local worker processes; with --dask-local" in both.output


def test_capacity_on_a_dead_worker_says_which_loads_were_running(monkeypatch):
    import contextlib

    from sim import capacity as cp
    from sim.executors import Opened

    monkeypatch.setattr(cp, "open_executor", lambda *_a: contextlib.nullcontext(Opened(DyingPool(3), 4, "dying")))
    with pytest.raises(ExecutorFailed, match=r"in flight: users=3"):
        cp.capacity(BASE, ["cpu_busy <= 99%"], start=2, stop=4, workers=2)


@pytest.mark.parametrize("address", ["http://127.0.0.1:1", "localhost:notaport"])
def test_a_scheduler_address_that_is_not_one_is_bad_input(address, tmp_path):
    pytest.importorskip("distributed")
    with pytest.raises(OltpsimError, match=r"not a scheduler address.*expected tcp://HOST:PORT"):
        sw.sweep(BASE, vary={"users": [2]}, out=tmp_path / "s", scheduler=address, progress=False)
    assert not (tmp_path / "s").exists()   # nothing written, nothing run


def test_a_port_that_accepts_but_never_answers_as_dask_is_refused_in_time():
    """The dashboard's HTTP port, say: distributed.Client(timeout=...) waited there for ever (dask/distributed#8071)."""
    pytest.importorskip("distributed")
    with socket.socket() as quiet:
        quiet.bind(("127.0.0.1", 0))
        quiet.listen()
        start = time.perf_counter()
        with pytest.raises(OltpsimError, match=r"no Dask scheduler answered there within 3 s"):
            _reach(f"tcp://127.0.0.1:{quiet.getsockname()[1]}", seconds=1)
        assert time.perf_counter() - start < 10


def test_the_scheduler_check_speaks_tls_as_the_client_would(monkeypatch):
    """A tls:// scheduler set up in the dask config (distributed.comm.tls.*): Client() took it; the check asked it
    with no ssl_context and refused it (TypeError: TLS expects a `ssl_context` argument)."""
    distributed = pytest.importorskip("distributed")
    import distributed.comm
    import distributed.security

    seen = {}

    class Comm:
        async def write(self, msg):
            pass

        async def read(self):
            return {"type": "Scheduler"}

        def abort(self):
            pass

    async def connect(address, timeout=None, **connection_args):
        seen.update(connection_args)
        return Comm()

    monkeypatch.setattr(distributed.comm, "connect", connect)
    monkeypatch.setattr(distributed.security.Security, "get_connection_args",
                        lambda self, role: {"ssl_context": f"the {role}'s", "require_encryption": True})
    _reach("tls://127.0.0.1:1", seconds=1)
    assert seen == {"ssl_context": "the client's", "require_encryption": True}


def test_dask_local_serves_its_dashboard_on_this_host_only():
    """':0' bound the scheduler's HTTP server (its identity, its workers' pages) on every interface."""
    pytest.importorskip("distributed")
    from sim.executors import open_executor

    with open_executor("dask", 1) as opened:
        server = opened.executor._client.cluster.scheduler.http_server
        assert {s.getsockname()[0] for s in server._sockets.values()} == {"127.0.0.1"}


def _dies_at_8_users(scenario):
    """run_one, but the worker process dies (as a SIGKILL or the OOM killer would end it) at users=8."""
    import os
    if scenario.params.users == 8:
        os._exit(137)
    return sw.__dict__["_real_run_one"](scenario)


@pytest.mark.skipif(__import__("multiprocessing").get_start_method() != "fork",
                    reason="the stand-in run_one reaches the workers by fork")
def test_a_point_that_kills_its_worker_is_run_alone_recorded_as_crashed_and_the_sweep_goes_on(tmp_path, monkeypatch,
                                                                                               capsys):
    """Its worker died at users=8 with users=2 in flight beside it in a pool of 2: each runs again alone, users=8 kills
    its own pool too and is recorded as crashed, users=2 gives its figures, and the other points run (the sweep had
    stopped there on every re-run)."""
    monkeypatch.setitem(sw.__dict__, "_real_run_one", sw.run_one)
    monkeypatch.setattr(sw, "run_one", _dies_at_8_users)
    res = sw.sweep(BASE, vary={"users": [2, 8, 4, 6]}, out=tmp_path, executor="process", workers=1, progress=False)
    assert list(res.table["users"]) == [2, 8, 4, 6]
    assert list(res.table["status"]) == ["ok", "error", "ok", "ok"]
    assert "worker process died" in res.table["message"][1]
    assert res.computed == 4 and len(sw.Journal(tmp_path / "points.jsonl").read()) == 4
    assert "sweep: a worker process died (BrokenProcessPool) with" in capsys.readouterr().err


@pytest.mark.skipif(__import__("multiprocessing").get_start_method() != "fork",
                    reason="the stand-in run_one reaches the workers by fork")
def test_ctrl_c_while_runs_go_again_alone_says_where_the_finished_runs_are(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sw.__dict__, "_real_run_one", sw.run_one)
    monkeypatch.setattr(sw, "run_one", _dies_at_8_users)

    def interrupted(_run):
        raise KeyboardInterrupt

    monkeypatch.setattr(sw, "_alone", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sw.sweep(BASE, vary={"users": [2, 8, 4]}, out=tmp_path, executor="process", workers=1, progress=False)
    assert re.search(r"sweep interrupted: \d runs saved in .*points\.jsonl; run the same command again",
                     capsys.readouterr().err)
