"""Where independent runs execute: in this process, a local process pool, or a Dask cluster.

Every kind is a `concurrent.futures.Executor`, so callers submit and wait the same way
whatever runs the work. Dask is reached through its own `Client.get_executor()`; there is no
home-made distribution layer. `slots` is how many runs can usefully be in flight at once:
callers keep about that many submitted, so that results come back (and get saved) as they
finish and a sweep of thousands of points never queues thousands of futures.

A Dask LocalCluster starts its workers with multiprocessing's "spawn", which re-imports the
main module: from a script, call it under `if __name__ == "__main__":`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Iterator

from sim.config import OltpsimError


class ExecutorFailed(OltpsimError):
    """What runs the runs failed (a worker process died: killed, out of memory; a cluster went away): not the
    input's fault, so the command exits 1, not bad input's 2."""

    exit_code = 1


def executor_failed(exc: BaseException, in_flight: list[str], saved: str = "") -> ExecutorFailed:
    """One message for a broken pool or cluster: which runs were in flight (a dead worker takes every run
    handed to the pool with it, so the one that killed it cannot be told from the others)."""
    shown = "; ".join(in_flight[:6]) + (f"; and {len(in_flight) - 6} more" if len(in_flight) > 6 else "")
    return ExecutorFailed(f"the executor failed ({type(exc).__name__}: {str(exc).rstrip('.')}) with "
                          f"{len(in_flight)} run{'s' if len(in_flight) != 1 else ''} in flight: {shown or 'none'}. "
                          "A worker process that dies (killed, out of memory) takes these with it" + (
                              f". Finished runs are saved in {saved}; run the same command again to complete the rest"
                              if saved else ""))


class InProcess(Executor):
    """Runs each call at submission, in this process (serial baselines, debugging)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        fut: Future = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            fut.set_exception(exc)
        return fut


@dataclass
class Opened:
    executor: Executor
    slots: int
    description: str


def kind_of(kind: str | Executor | None, scheduler: str | None = None) -> str | Executor:
    """What `open_executor(kind, scheduler=...)` opens: the kind given, else a Dask client where a scheduler is
    named, else the local process pool."""
    return kind or ("dask" if scheduler else "process")


def check_scheduler(scheduler: str) -> None:
    """Refuse a --scheduler no Dask scheduler answers at, before anything is written or run."""
    _dask()
    _reach(scheduler)


def _reach(scheduler: str, seconds: float = 10.0) -> None:
    """Ask the scheduler who it is, all within `seconds`. Client(timeout=...) bounds only the TCP connect: a
    port that accepts and never answers as Dask (the dashboard's HTTP port) hung it for ever (dask/distributed
    #8071), and one that answers something else made it allocate what the bytes claimed (MemoryError)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect
    from distributed.security import Security

    async def identity():   # (TLS as Client() takes it: from the dask config, distributed.comm.tls.*)
        comm = await connect(scheduler, timeout=seconds, **Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    where = f"--scheduler {scheduler}"
    try:
        with ThreadPoolExecutor(1) as thread:   # (its own event loop: a notebook's main thread runs one already)
            reply = thread.submit(asyncio.run, asyncio.wait_for(identity(), seconds + 2)).result()
    except ValueError as exc:   # not an address: 'http://...', 'host:port' with a port that is not a number
        raise OltpsimError(f"{where}: not a scheduler address ({exc}); expected tcp://HOST:PORT") from None
    except (asyncio.TimeoutError, TimeoutError):
        raise OltpsimError(f"{where}: no Dask scheduler answered there within {seconds + 2:g} s (the dashboard's port, "
                           "8787 by default, is not the scheduler's, 8786)") from None
    except Exception as exc:   # noqa: BLE001 - refused, unresolvable, or not speaking Dask
        raise OltpsimError(f"{where}: cannot reach a Dask scheduler there ({type(exc).__name__}: {exc})") from None
    if not (isinstance(reply, dict) and reply.get("type") == "Scheduler"):
        raise OltpsimError(f"{where}: what answered there is not a Dask scheduler ({str(reply)[:80]})")


def _dask():
    try:
        import distributed
    except ImportError:
        raise OltpsimError("Dask is not installed: pip install 'oltpsim[dask]' (or leave out --scheduler and "
                           "--dask-local to run on the local process pool)") from None
    return distributed


@contextlib.contextmanager
def open_executor(kind: str | Executor | None = None, workers: int | None = None,
                  scheduler: str | None = None) -> Iterator[Opened]:
    """Open an executor and close what was opened here.

    kind: "process" (default; a pool of `workers` processes, all cores if None), "serial"
    (this process), "dask" (the cluster at `scheduler`, or a LocalCluster of `workers`
    single-threaded processes that is started here and stopped afterwards), or an Executor
    of your own (used as is, never shut down here).
    """
    if isinstance(kind, Executor):
        yield Opened(kind, max(1, workers or os.cpu_count() or 1) * 2, type(kind).__name__)
        return
    kind = kind_of(kind, scheduler)
    if workers is not None and workers < 1:
        raise OltpsimError(f"workers: got {workers}; expected at least 1")
    if kind == "serial":
        yield Opened(InProcess(), 1, "in this process")
    elif kind == "process":
        n = workers or os.cpu_count() or 1
        pool = ProcessPoolExecutor(max_workers=n)
        try:
            yield Opened(pool, 2 * n, f"local process pool of {n}")
        except BaseException:
            # Ctrl-C (or a failure): stop the workers now. Waiting let the run already handed to a worker go on
            # to its end, only to be thrown away, and a second Ctrl-C could leave the parent waiting on a pipe
            for proc in list((getattr(pool, "_processes", None) or {}).values()):   # (CPython's pool keeps them here)
                proc.terminate()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        else:
            pool.shutdown(wait=True, cancel_futures=True)
    elif kind == "dask":
        distributed = _dask()
        cluster = None
        if scheduler:
            check_scheduler(scheduler)
            try:
                client = distributed.Client(scheduler, timeout="10s")
            except (OSError, TimeoutError, ValueError) as exc:
                raise OltpsimError(f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({exc})") from None
            where = f"Dask cluster at {scheduler}"
        else:
            n = workers or os.cpu_count() or 1
            cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                               dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR)
            client = distributed.Client(cluster)
            where = f"Dask LocalCluster of {n} processes x 1 thread"
        try:
            threads = sum(client.nthreads().values())
            if not threads:   # (the runs wait, silently, until a worker joins)
                print(f"{where}: no workers yet; the runs wait until one joins", file=sys.stderr)
            threads = threads or 1
            # pure=False: two submissions are two runs, never one cached result.
            yield Opened(client.get_executor(pure=False), 2 * threads, where)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    else:
        raise OltpsimError(f"executor: got {kind!r}; expected 'process', 'serial', 'dask' or an Executor")
