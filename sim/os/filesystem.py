"""The I/O paths of the OS: raw devices, VxFS Quick I/O and Cached Quick I/O, buffered and
direct VxFS and UFS.

They differ in three ways that matter to a database:

- CPU: every physical I/O costs a system call, the driver and an interrupt (sys time); a
  file system adds its block map and inode work; a buffered path copies each block between
  the page cache and the caller; without kernel async I/O (KAIO, only for character devices:
  raw volumes and Quick I/O files) Oracle's async I/O is emulated by library threads, each
  I/O costing LWP switches.
- Caching: buffered files and Cached Quick I/O keep blocks in the OS page cache, a second
  level under the buffer cache; a read found there costs CPU and no disk.
- Locking: a regular file has the POSIX single-writer lock (the inode's reader/writer lock):
  a write holds it exclusively until the data is on disk (Oracle opens datafiles O_DSYNC), and
  reads of that file wait behind it. Raw devices and Quick I/O files have no such lock; that
  is what Quick I/O was made for (VERITAS Database Edition documentation).

CPU constants (instructions on the I/O path, charged as sys time; estimates for Solaris 7):

- SYSCALL_DRIVER_INSTRUCTIONS = 20,000: pread/pwrite entry, sd/esp driver, interrupt and
  completion (about 50-70 us on a 1999 400 MHz CPU, the usual 'sys time per I/O' then).
- FS_INSTRUCTIONS = 10,000: the file system's extent/block map, inode and lock handling.
- COPY_INSTRUCTIONS_PER_KB = 500: bcopy of 1 KB (128 load/store pairs) plus its misses.
- THREAD_AIO_INSTRUCTIONS = 15,000: a library thread picks up the request and completes it
  (two LWP context switches and the aio bookkeeping).
- PAGE_LOOKUP_INSTRUCTIONS = 8,000: find a cached page (hash, segmap) on a page-cache hit.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import simpy

SYSCALL_DRIVER_INSTRUCTIONS = 20_000.0
FS_INSTRUCTIONS = 10_000.0
COPY_INSTRUCTIONS_PER_KB = 500.0
THREAD_AIO_INSTRUCTIONS = 15_000.0
PAGE_LOOKUP_INSTRUCTIONS = 8_000.0


@dataclass(frozen=True)
class IoPath:
    name: str
    file_system: bool   # a file system's block map and inode work on each I/O
    caches: bool        # blocks go through the OS page cache (second-level cache)
    file_lock: bool     # POSIX single-writer lock per file
    kaio: bool          # kernel async I/O possible


PATHS = {
    "raw":             IoPath("raw", False, False, False, True),
    "quick_io":        IoPath("quick_io", True, False, False, True),
    "cached_quick_io": IoPath("cached_quick_io", True, True, False, True),
    "vxfs_buffered":   IoPath("vxfs_buffered", True, True, True, False),
    "vxfs_direct":     IoPath("vxfs_direct", True, False, True, False),
    "ufs_buffered":    IoPath("ufs_buffered", True, True, True, False),
    "ufs_direct":      IoPath("ufs_direct", True, False, True, False),
}
# Quick I/O maps a file to its extents once, at open: its per-I/O file-system work is tiny.
_QIO_SHARE_OF_FS = 0.1


class FileLock:
    """A reader/writer lock that prefers writers (Solaris rwlock): a waiting writer blocks
    new readers."""

    __slots__ = ("env", "readers", "writer", "waiting_writers", "waiting_readers")

    def __init__(self, env: simpy.Environment):
        self.env = env
        self.readers = 0
        self.writer = False
        self.waiting_writers: deque = deque()
        self.waiting_readers: list = []

    def acquire(self, exclusive: bool) -> simpy.Event:
        ev = simpy.Event(self.env)
        if exclusive:
            if not self.writer and not self.readers and not self.waiting_writers:
                self.writer = True
                ev.succeed()
            else:
                self.waiting_writers.append(ev)
        elif not self.writer and not self.waiting_writers:
            self.readers += 1
            ev.succeed()
        else:
            self.waiting_readers.append(ev)
        return ev

    def release(self, exclusive: bool) -> None:
        if exclusive:
            self.writer = False
        else:
            self.readers -= 1
        if self.writer or self.readers:
            return
        if self.waiting_writers:
            self.writer = True
            self.waiting_writers.popleft().succeed()
        elif self.waiting_readers:
            waiting, self.waiting_readers = self.waiting_readers, []
            self.readers += len(waiting)
            for ev in waiting:
                ev.succeed()


class FileSystem:
    """Datafiles on one volume through one I/O path."""

    def __init__(self, env: simpy.Environment, dispatcher, volume, path: IoPath, files: int,
                 block_size: float, async_io: bool, rng):
        self.env, self.dispatcher, self.volume, self.path = env, dispatcher, volume, path
        self.block_size = block_size
        self.rng = rng
        self.files = files
        self.locks = [FileLock(env) for _ in range(files)] if path.file_lock else []
        self.async_kernel = async_io and path.kaio
        self.async_threads = async_io and not path.kaio
        kb = block_size / 1024.0
        fs = FS_INSTRUCTIONS * (_QIO_SHARE_OF_FS if path.name in ("quick_io", "cached_quick_io") else 1.0)
        copy = COPY_INSTRUCTIONS_PER_KB * kb if path.caches else 0.0
        self.read_instructions = SYSCALL_DRIVER_INSTRUCTIONS + (fs if path.file_system else 0.0) + copy
        self.cache_hit_instructions = SYSCALL_DRIVER_INSTRUCTIONS / 2 + PAGE_LOOKUP_INSTRUCTIONS + copy
        self.write_instructions = self.read_instructions + (THREAD_AIO_INSTRUCTIONS if self.async_threads else 0.0)
        self.reads = self.writes = self.cache_hits = 0
        self.lock_wait = 0.0

    def read(self, cached: bool):
        """Generator: one block read by a process (a session's single-block read)."""
        if cached and self.path.caches:
            self.cache_hits += 1
            yield self.dispatcher.run(self.cache_hit_instructions, 1.0)
            return
        self.reads += 1
        yield self.dispatcher.run(self.read_instructions, 1.0)
        if self.locks:
            lock = self.locks[int(self.rng.integers(self.files))]
            t = self.env.now
            yield lock.acquire(False)
            self.lock_wait += self.env.now - t
            yield self.volume.submit("read", self.block_size)
            lock.release(False)
        else:
            yield self.volume.submit("read", self.block_size)

    def write(self):
        """Generator: one block written through to disk (O_DSYNC), holding the file's lock."""
        self.writes += 1
        yield self.dispatcher.run(self.write_instructions, 1.0)
        if self.locks:
            lock = self.locks[int(self.rng.integers(self.files))]
            yield lock.acquire(True)
            yield self.volume.submit("write", self.block_size)
            lock.release(True)
        else:
            yield self.volume.submit("write", self.block_size)

    def reset_stats(self) -> None:
        self.reads = self.writes = self.cache_hits = 0
        self.lock_wait = 0.0
