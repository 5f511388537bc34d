"""Where runs execute (sim/executors.py): slots and descriptions of each kind, an Executor of one's own used as
is, a serial call's failure handed back through its future, Ctrl-C stopping the pool's workers, and the Dask paths
(through a stand-in `distributed`: no cluster is started). From a mutation round: each was untested."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from sim import executors
from sim.config import OltpsimError
from sim.executors import InProcess, open_executor


def test_serial_runs_at_submission_and_hands_a_failure_back_through_the_future():
    with open_executor("serial") as opened:
        assert (opened.slots, opened.description) == (1, "in this process")
        assert opened.executor.submit(pow, 2, 10).result() == 1024
        fut = opened.executor.submit(int, "x")   # (raises ValueError: the caller gets it from the future)
    assert isinstance(fut.exception(), ValueError)


def test_an_executor_of_ones_own_is_used_as_is_with_two_slots_a_worker_and_not_shut_down():
    own = ThreadPoolExecutor(max_workers=1)
    with open_executor(own, workers=3) as opened:
        assert opened.executor is own and opened.slots == 6 and opened.description == "ThreadPoolExecutor"
    assert own.submit(pow, 3, 2).result() == 9   # still open
    own.shutdown()


def test_workers_below_one_and_an_unknown_kind_are_refused():
    with pytest.raises(OltpsimError, match=r"workers: got 0; expected at least 1"):
        with open_executor("serial", workers=0):
            pass
    with pytest.raises(OltpsimError, match=r"executor: got 'threads'; expected"):
        with open_executor("threads"):
            pass


def test_a_process_pool_of_n_has_two_slots_a_worker_and_waits_for_its_runs_on_a_normal_exit():
    n = (os.cpu_count() or 1) + 1   # (not the core count, which a pool of the default size has)
    with open_executor("process", n) as opened:
        assert opened.slots == 2 * n and opened.description == f"local process pool of {n}"
        fut = opened.executor.submit(time.sleep, 0.2)
    assert fut.done()   # (shutdown waited for the run in hand)


def test_ctrl_c_terminates_the_workers_not_only_the_futures():
    """The pool's processes are ended at once: without terminate() they slept on in the background (the existing
    Ctrl-C test passed, then the interpreter waited two minutes at exit for them)."""
    with pytest.raises(KeyboardInterrupt):
        with open_executor("process", 1) as opened:
            fut = opened.executor.submit(time.sleep, 60)
            while not fut.running():
                time.sleep(0.01)
            time.sleep(0.2)   # (the worker past its start-up, in the call)
            procs = list(opened.executor._processes.values())
            raise KeyboardInterrupt
    for p in procs:
        p.join(timeout=10)
        assert not p.is_alive()


class _FakeDistributed:
    """A stand-in for dask.distributed that records how it was called."""

    def __init__(self, reachable=True):
        self.calls, self.closed, self.reachable = [], [], reachable
        fake = self

        class Client:
            def __init__(self, where, timeout=None):
                if not fake.reachable:
                    raise OSError("connection refused")
                fake.calls.append(("Client", where))

            def nthreads(self):
                return {"w1": 1, "w2": 2}

            def get_executor(self, **kw):
                fake.calls.append(("get_executor", kw))
                return InProcess()

            def close(self):
                fake.closed.append("client")

        class LocalCluster:
            def __init__(self, **kw):
                fake.calls.append(("LocalCluster", kw))

            def close(self):
                fake.closed.append("cluster")
        self.Client, self.LocalCluster = Client, LocalCluster


def test_a_scheduler_means_dask_and_an_unreachable_one_is_one_error(monkeypatch):
    fake = _FakeDistributed(reachable=False)
    monkeypatch.setattr(executors, "_dask", lambda: fake)
    monkeypatch.setattr(executors, "check_scheduler", lambda scheduler: None)
    with pytest.raises(OltpsimError, match=r"--scheduler tcp://x:1: cannot reach a Dask scheduler there"):
        with open_executor(scheduler="tcp://x:1"):
            pass


def test_dask_runs_are_never_pure_and_a_local_cluster_of_n_is_closed_after(monkeypatch):
    fake = _FakeDistributed()
    monkeypatch.setattr(executors, "_dask", lambda: fake)
    monkeypatch.setattr(executors, "check_scheduler", lambda scheduler: None)
    with open_executor("dask", workers=3) as opened:
        assert opened.slots == 2 * 3 and opened.description == "Dask LocalCluster of 3 processes x 1 thread"
    kinds = dict((c[0], c[1]) for c in fake.calls)
    assert kinds["LocalCluster"]["n_workers"] == 3 and kinds["LocalCluster"]["threads_per_worker"] == 1
    assert kinds["get_executor"] == {"pure": False}
    assert sorted(fake.closed) == ["client", "cluster"]
    fake.closed.clear()
    with open_executor(scheduler="tcp://x:1") as opened:
        assert opened.description == "Dask cluster at tcp://x:1"
    assert fake.closed == ["client"]   # (a cluster not started here is not closed here)
