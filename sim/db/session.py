"""A session: one dedicated server ("shadow") process working for one user.

Workloads drive sessions with work items (CPU, commit, waits); the session turns them
into requests to the OS and the instance and records the time it waits, by event name,
as AWR would.
"""

from __future__ import annotations

import simpy


class Session:
    __slots__ = ("instance", "sid", "env", "cpu", "page_owed")

    def __init__(self, instance, sid: int):
        self.instance, self.sid = instance, sid
        self.env = instance.env
        # cpu(instructions, sys_share=0.0): run on a strand (queueing for one if all are busy);
        # yield the returned event. The dispatcher's own method, bound: no call in between.
        self.cpu = instance.dispatcher.run
        self.page_owed = 0.0   # the part of a swapped-out page this process's next wake faults back (sim/os/vm.py)

    def redo(self, redo_bytes: float):
        """Generator: copy redo into the log buffer, a buffer's worth at a time, waiting for room while it is
        full ('log buffer space'); LGWR writes it in the background."""
        lgwr, env = self.instance.lgwr, self.env
        while redo_bytes > 0.0:
            piece = min(redo_bytes, lgwr.buffer_size)
            if not lgwr.has_room(piece):
                start = env._now
                while not lgwr.has_room(piece):
                    yield lgwr.room()
                self.instance.waits.add("log buffer space", env._now - start)
            lgwr.put(piece)
            redo_bytes -= piece

    def commit(self, redo_bytes: float):
        """Generator: the transaction's last redo into the log buffer, then post LGWR and wait for all its
        redo to be written ('log file sync')."""
        env, lgwr = self.env, self.instance.lgwr
        if not lgwr.has_room(redo_bytes):   # (rare: the buffer is full)
            yield from self.redo(redo_bytes)
            redo_bytes = 0.0
        start = env._now
        yield lgwr.commit(redo_bytes)
        if env._now > start:   # (its redo went out before it: Oracle does not wait, and records no wait)
            self.instance.waits.add("log file sync", env._now - start)

    def read_block(self, os_cached: bool = False, files: tuple[int, int] | None = None, cpu: float = 0.0,
                   sys_share: float = 0.0):
        """Generator: a buffer-cache miss: a free buffer, then one block from the datafiles
        ('db file sequential read'); `os_cached`: the OS page cache holds the block; `files`:
        the range of datafiles its segment lives in (None: any); `cpu`: the instructions the session
        runs up to the read (`sys_share` of them in the kernel), on the strand that then makes the call."""
        inst = self.instance
        if inst.dbwr is not None:
            yield from inst.dbwr.free_buffer()
        # the wait is timed from the read's system call, as Oracle times it: not the CPU up to it
        began = yield from inst.datafiles.read(os_cached, files, cpu, sys_share)
        inst.physical_reads += 1
        inst.waits.add("db file sequential read", self.env.now - began)

    def dirtied(self, blocks: int, files: tuple[int, int] | None = None, checkpoint: bool = False) -> None:
        """Hand blocks this session changed (and that will leave the cache dirty) to DBWR;
        `files`: the range of datafiles their segment lives in (None: any); `checkpoint`: blocks
        that stay cached, written by a checkpoint rather than when the LRU scan evicts them."""
        if self.instance.dbwr is not None:
            self.instance.dbwr.dirty(blocks, files, checkpoint)

    def wake(self, client_working_set: float = 0.0):
        """Generator: the session's process (and its client's, on the same host) wakes after idling;
        fault back what the OS paged out meanwhile (nothing unless memory is overcommitted)."""
        vm = self.instance.vm
        if vm is None or vm.overcommit() <= 0.0:
            return
        start = self.env.now
        self.page_owed = yield from vm.page_in(self.instance.spec.server_working_set + client_working_set,
                                               self.page_owed)
        if self.env.now > start:
            self.instance.waits.add("OS page in (swap)", self.env.now - start)

    def io(self, device, kind: str, nbytes: float, offset: float | None = None, event_name: str = "db file sequential read"):
        """Generator: a synchronous physical I/O on a storage device, waited for under an AWR event."""
        start = self.env.now
        yield device.submit(kind, nbytes, offset)
        self.instance.waits.add(event_name, self.env.now - start)

    def control_file_transaction(self, writes: int, write_size: float, copies: int):
        """Generator: take the CF enqueue ('enq: CF - contention'), then `writes` synchronous writes of
        `write_size`, each to all `copies` of the control file at once ('control file parallel write')."""
        inst, env = self.instance, self.env
        start = env.now
        with inst.cf_enqueue.request() as req:
            yield req
            if env.now > start:   # (a get granted at once is no wait: AWR records none)
                inst.waits.add("enq: CF - contention", env.now - start)
            cf = inst.control_file
            for _ in range(writes):
                t = env.now
                yield simpy.AllOf(env, [cf.submit("write", write_size) for _ in range(copies)])
                inst.waits.add("control file parallel write", env.now - t)

    def wait(self, event_name: str, seconds: float):
        """Generator: an idle or timed wait recorded under an AWR event name."""
        yield self.env.timeout(seconds)
        self.instance.waits.add(event_name, seconds)
