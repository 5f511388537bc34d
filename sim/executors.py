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
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Iterator

from sim.config import OltpsimError


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
    kind = kind or ("dask" if scheduler else "process")
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
            try:
                client = distributed.Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise OltpsimError(f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({exc})") from None
            where = f"Dask cluster at {scheduler}"
        else:
            n = workers or os.cpu_count() or 1
            cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                               dashboard_address=None, silence_logs=logging.ERROR)
            client = distributed.Client(cluster)
            where = f"Dask LocalCluster of {n} processes x 1 thread"
        try:
            threads = sum(client.nthreads().values()) or 1
            # pure=False: two submissions are two runs, never one cached result.
            yield Opened(client.get_executor(pure=False), 2 * threads, where)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    else:
        raise OltpsimError(f"executor: got {kind!r}; expected 'process', 'serial', 'dask' or an Executor")
