"""The I/O paths of the OS: raw devices, VxFS Quick I/O and Cached Quick I/O, buffered and
direct VxFS and UFS, and buffered Linux 2.4 (ext2/ext3/ReiserFS through the page cache).

They differ in three ways that matter to a database:

- CPU: every physical I/O costs a system call, the driver and an interrupt (sys time); a
  file system adds its block map and inode work; a buffered path copies each block between
  the page cache and the caller; without kernel async I/O (KAIO, only for character devices:
  raw volumes and Quick I/O files) Oracle's async I/O is emulated by library threads on Solaris
  (libaio), each I/O costing LWP switches; on Linux file systems it is not used (below).
- Caching: buffered files and Cached Quick I/O keep blocks in the OS page cache, a second
  level under the buffer cache; a read found there costs CPU and no disk.
- Locking: a regular file has the POSIX single-writer lock (the inode's reader/writer lock,
  sim/os/rwlock.py): a write holds it exclusively until the data is on disk (Oracle opens
  datafiles O_DSYNC), and every read of that file, a page-cache hit included (the lock is
  taken around the whole read() call), waits behind it. Raw devices and Quick I/O files have
  no such lock; that is what Quick I/O was made for (VERITAS Database Edition documentation).
  Linux 2.4 differs: generic_file_read() takes no inode lock, while generic_file_write() holds
  the inode semaphore (i_sem) for the whole write, O_SYNC flush included
  (generic_osync_inode() runs before up(&inode->i_sem) in 2.4 mm/filemap.c): writers to one
  file queue behind each other, readers never wait. Oracle opens buffered datafiles O_DSYNC
  ("Oracle insists on the synchronous completion of writes for all buffered I/O to database
  files. This is done by using the O_DSYNC" flag, S. Adams, Ixora, "Buffered I/O"), which 2.4
  treats as O_SYNC. There is no kernel AIO for files in 2.4.19, and Oracle on Linux does not emulate it
  with library threads: on file system files its I/O is synchronous unless filesystemio_options is
  asynch, and that is "none" by default on Linux (Red Hat, "Tuning and Optimizing Red Hat Enterprise
  Linux for Oracle 9i and 10g Databases", 12.3), so disk_asynch_io changes nothing on this path
  (`library_aio`: a DBWR of its own writes them one at a time, as with disk_asynch_io false).
  A read or write picks its file uniformly, among all the datafiles or among a given range
  of them (the files of the segment it belongs to, sim/db/layout.py); `pick_files` does
  the same for a writer that orders its writes by file.
- Pages: the page cache holds whole pages (8 KB on UltraSPARC). A read that misses it fills
  the page (one page-sized disk read). A buffered write of less than a page into a page that
  is not cached must first read the page (the file system cannot mark part of a page valid:
  UFS wrip() faults the page in through segmap unless the write covers it whole), under the
  file's write lock; `write_page_hit` is the chance the page is cached, from the cache model.
  The write then goes to disk as that whole page: the page cache keeps one modified bit a page,
  and UFS wrip() forces "write back for synchronous write cases" (FSYNC|FDSYNC) with
  segmap_release(SM_WRITE), which puts the mapping's pages (Solaris ufs_vnops.c), as the log's
  appends below do. A 2 KB block is an 8 KB disk write; an 8 KB block on 4 KB pages its two.
  Cached Quick I/O writes directly ("direct-write, copy-behind", VERITAS Storage Foundation
  for Oracle Administrator's Guide, "How Cached Quick I/O works"): no read before write.
- The online redo log as a file (`LogFile`): LGWR appends to it, alone (no lock waits).
  Through the page cache a write goes out as the whole pages it touches, and the first write
  into a page that is not cached reads that page first (the log is reused in a circle: a
  page was last written a whole log cycle ago and is taken to be gone): a read at the page's
  place, so it pays the drive's rotational latency (the writes are sequential). Direct paths write
  the redo blocks as they are (512-byte redo blocks meet the sector alignment of direct I/O).

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

from dataclasses import dataclass

import simpy

from sim.os.rwlock import RWLock

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
    readers_lock: bool = True   # reads take the file lock too (POSIX rwlock); False: writers only (Linux i_sem)
    direct_writes: bool = False  # writes bypass the page cache even though reads use it (Cached Quick I/O)
    library_aio: bool = True    # without KAIO, async I/O by library threads (Solaris libaio); False: synchronous


PATHS = {
    "raw":             IoPath("raw", False, False, False, True),
    "quick_io":        IoPath("quick_io", True, False, False, True),
    "cached_quick_io": IoPath("cached_quick_io", True, True, False, True, direct_writes=True),
    "vxfs_buffered":   IoPath("vxfs_buffered", True, True, True, False),
    "vxfs_direct":     IoPath("vxfs_direct", True, False, True, False),
    "ufs_buffered":    IoPath("ufs_buffered", True, True, True, False),
    "ufs_direct":      IoPath("ufs_direct", True, False, True, False),
    "linux_buffered":  IoPath("linux_buffered", True, True, True, False, readers_lock=False, library_aio=False),
}
# Quick I/O maps a file to its extents once, at open: its per-I/O file-system work is tiny.
_QIO_SHARE_OF_FS = 0.1


class FileSystem:
    """Datafiles on one volume through one I/O path."""

    def __init__(self, env: simpy.Environment, dispatcher, volume, path: IoPath, files: int,
                 block_size: float, async_io: bool, rng, page_size: float = 4096.0):
        self.env, self.dispatcher, self.volume, self.path = env, dispatcher, volume, path
        self.block_size = block_size
        self.page_size = page_size
        self.page_blocks = max(1, int(page_size // block_size))
        # a page-cache miss fills a whole page; a buffered write of part of a page may read it first,
        # and goes to disk as the whole page it dirtied
        self.fill_bytes = max(block_size, page_size) if path.caches else block_size
        self.write_bytes = self.fill_bytes if path.caches and not path.direct_writes else block_size
        self.partial_writes = path.caches and not path.direct_writes and block_size < page_size
        self.write_page_hit = 1.0
        self.pages_read_for_writes = 0
        self.rng = rng
        self.files = files
        self.locks = [RWLock(env) for _ in range(files)] if path.file_lock else []
        # asynchronous writes where the path has them (KAIO, or library threads): what DBWR's width follows
        self.async_io = async_io and (path.kaio or path.library_aio)
        self.async_threads = self.async_io and not path.kaio
        # with kernel async I/O the writer's own process makes the calls (io_submit, aiowrite: sim/db/dbwr.py _issue):
        # its writes' CPU is one process's, not as many runnable processes as writes
        self.serial_issue = self.async_io and path.kaio and not (self.locks or self.partial_writes)
        kb = block_size / 1024.0
        fs = FS_INSTRUCTIONS * (_QIO_SHARE_OF_FS if path.name in ("quick_io", "cached_quick_io") else 1.0)
        copy = COPY_INSTRUCTIONS_PER_KB * kb if path.caches else 0.0
        self.read_instructions = SYSCALL_DRIVER_INSTRUCTIONS + (fs if path.file_system else 0.0) + copy
        self.cache_hit_instructions = SYSCALL_DRIVER_INSTRUCTIONS / 2 + PAGE_LOOKUP_INSTRUCTIONS + copy
        self.write_instructions = self.read_instructions + (THREAD_AIO_INSTRUCTIONS if self.async_threads else 0.0)
        self.reads = self.writes = self.cache_hits = 0

    def _pick(self, files: tuple[int, int] | None) -> int:
        """A file: uniform over all, or over the range (first, count)."""
        if files is None:
            return int(self.rng.integers(self.files))
        first, count = files
        return (first + int(self.rng.integers(count))) % self.files

    def read(self, cached: bool, files: tuple[int, int] | None = None, cpu: float = 0.0, sys_share: float = 0.0):
        """Generator: one block read by a process (a session's single-block read) from one of
        `files` (a range; None: any datafile). `cpu`: the process's instructions up to the call
        (`sys_share` of them in the kernel), run in the same burst as the call's own: a process
        entering the kernel keeps its strand (two bursts had sent it back through the run queue).
        Returns when the call began: the burst's end less the call's share of its time on a strand."""
        hit = cached and self.path.caches
        call = self.cache_hit_instructions if hit else self.read_instructions
        on_cpu = yield self.dispatcher.run(cpu + call, (cpu * sys_share + call) / (cpu + call))
        began = self.env.now - on_cpu * call / (cpu + call)
        lock = self.locks[self._pick(files)] if self.locks and self.path.readers_lock else None
        if lock is not None:
            yield lock.acquire(False)
        if not hit:
            yield self.volume.submit("read", self.fill_bytes)
        if lock is not None:
            lock.release(False)
        # counted as it ends, where the instance counts its physical reads (Session.read_block): counted as it began,
        # a read under way at the window's end was a page-cache hit and no physical read ('disk reads/s -0.2')
        if hit:
            self.cache_hits += 1
        else:
            self.reads += 1
        return began

    def pick_files(self, n: int, ranges: list | None = None) -> list[int]:
        """The files of n blocks to write: uniform over all files, or each over its range."""
        if ranges is None:
            return self.rng.integers(self.files, size=n).tolist()
        return [self._pick(r) for r in ranges]

    def set_write_page_hit(self, p: float) -> None:
        """The chance that the page of a written block is in the page cache (the cache model's)."""
        self.write_page_hit = min(1.0, max(0.0, p))

    def write(self, file: int | None = None):
        """Generator: one block written through to disk (O_DSYNC), holding the file's lock
        (on a buffered path first reading its page if that is not cached)."""
        self.writes += 1
        yield self.dispatcher.run(self.write_instructions, 1.0)
        fill = self.partial_writes and (self.write_page_hit <= 0.0 or self.rng.random() >= self.write_page_hit)
        lock = None
        if self.locks:
            lock = self.locks[int(self.rng.integers(self.files)) if file is None else file % self.files]
            yield lock.acquire(True)
        offset = None
        if fill:   # the page is read, then written back in place
            self.pages_read_for_writes += 1
            offset = self.volume.random_offset(self.page_size)
            yield self.volume.submit("read", self.page_size, offset)
        yield self.volume.submit("write", self.write_bytes, offset)
        if lock is not None:
            lock.release(True)

    def write_then(self, file: int | None, done) -> None:
        """write() for a writer that wants a call, done(), when it ends rather than an event to
        wait on (DBWR's many writes in flight). Without a file lock or a page to read first
        (raw, Quick I/O, Cached Quick I/O) the steps are chained callbacks, not a process: two
        events fewer per write, the same work in the same order."""
        if self.locks or self.partial_writes:
            self.env.process(self._write_and_call(file, done))
            return
        self.writes += 1
        submit, size = self.volume.submit, self.write_bytes
        self.dispatcher.run(self.write_instructions, 1.0).callbacks.append(
            lambda _e: submit("write", size).callbacks.append(lambda _e2: done()))

    def submit_writes(self, n: int, done, issued) -> None:
        """n writes from one process under kernel async I/O (serial_issue): their system calls one burst on its
        strand (io_submit of n requests; aiowrite after aiowrite), then all in flight together; issued() once
        they are made, done() as each ends. One process, so it adds one to the run queue, not n."""
        self.writes += n
        submit, size = self.volume.submit, self.write_bytes

        def made(_e):
            for _ in range(n):
                submit("write", size).callbacks.append(lambda _e2: done())
            issued()
        self.dispatcher.run(n * self.write_instructions, 1.0).callbacks.append(made)

    def _write_and_call(self, file: int | None, done):
        yield from self.write(file)
        done()

    def reset_stats(self) -> None:
        self.reads = self.writes = self.cache_hits = 0
        self.pages_read_for_writes = 0
        for lock in self.locks:
            lock.reset_stats()

    def lock_report(self) -> dict:
        """The file locks over the measured span: the mean share of time a file is held by a
        writer, readers waiting (mean count, all files), and the mean wait of a read and of a
        write for its lock (ms)."""
        if not self.locks:
            return {}
        fills = {"write_page_reads_pct": 100.0 * self.pages_read_for_writes / self.writes if self.writes else 0.0}
        st = [lock.stats() for lock in self.locks]
        reads = sum(s["read_acquires"] for s in st)
        writes = sum(s["write_acquires"] for s in st)
        return {
            "file_lock_write_held_pct": 100.0 * sum(s["write_held"] for s in st) / len(st),
            "file_lock_readers_waiting": sum(s["readers_waiting"] for s in st),
            "file_lock_read_wait_ms": 1000.0 * sum(s["read_wait_total"] for s in st) / reads if reads else 0.0,
            "file_lock_write_wait_ms": 1000.0 * sum(s["write_wait_total"] for s in st) / writes if writes else 0.0,
            **(fills if self.partial_writes else {}),
        }


class LogFile:
    """A file written by sequential appends on `path` (a database's log): a device-like target
    whose submit returns the write's completion event. The writer's own system call is its
    business; the path adds its file-system CPU and, through the page cache, the page copy.
    Buffered, an append writes the whole pages it touches and first reads a new last page it
    does not fill, on the spot (the head is on the file's track: a track-to-track seek and the
    drive's rotation). Appends wrap around in `size` bytes (None: the device's capacity), each
    write at its place in that circle; one that would straddle its end begins the next circle."""

    def __init__(self, env: simpy.Environment, dispatcher, device, path: IoPath, page_size: float,
                 size: float | None = None):
        self.env, self.dispatcher, self.device, self.path = env, dispatcher, device, path
        self.page_size = page_size
        self.paged = path.caches and not path.direct_writes
        fs = FS_INSTRUCTIONS * (_QIO_SHARE_OF_FS if path.name in ("quick_io", "cached_quick_io") else 1.0)
        self.instructions = fs if path.file_system else 0.0
        self.copy_per_byte = COPY_INSTRUCTIONS_PER_KB / 1024.0 if path.caches else 0.0
        self.position = 0.0       # bytes appended so far
        size = size if size is not None else getattr(device, "capacity", float("inf"))
        self.size = max(page_size, size - size % page_size) if size != float("inf") else size   # whole pages

    def submit(self, kind: str, nbytes: float, offset: float | None = None, sequential: bool = False) -> simpy.Event:
        """Appends (sequential writes) go through the path; any other I/O straight to the device. An append's
        event is worth the seconds it waited for a strand (its path's CPU queued): the writer's, not the log's."""
        if kind != "write" or not sequential or offset is not None:
            return self.device.submit(kind, nbytes, offset, sequential)
        return self.env.process(self._append(nbytes))

    def _append(self, nbytes: float):
        asked = self.env.now
        on_cpu = yield self.dispatcher.run(self.instructions + self.copy_per_byte * nbytes, 1.0)
        queued = self.env.now - asked - (on_cpu or 0.0)
        start = self.position
        room = self.size - start % self.size
        if nbytes > room:   # a write never straddles the logs' end: it begins the next circle
            start += room
        end = self.position = start + nbytes
        if not self.paged:
            yield self.device.submit("write", nbytes, start % self.size, sequential=True)
            return queued
        page = self.page_size
        first, last = int(start // page), int(-(-end // page))
        # the page the previous append ended in is cached; a new last page not written whole is read first;
        # the write starts at the first page it touches, so it rewrites what a last append or that read just passed
        if end % page and (last - 1 > first or start % page == 0):
            yield self.device.submit("read", page, ((last - 1) * page) % self.size)
        yield self.device.submit("write", (last - first) * page, (first * page) % self.size, sequential=True)
        return queued
