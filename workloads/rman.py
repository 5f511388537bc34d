"""RMAN backup with channels: compressed backupsets, optionally multisection.

A channel is one server process. It backs up one datafile (or, with multisection, one section)
at a time: it reads the file in 1 MB buffers, compresses each buffer on its one strand (the
next read is already in flight: RMAN reads asynchronously), and writes the compressed bytes to
the backup destination asynchronously. Without multisection a free channel takes the largest
datafile not yet started, so no channel count beats the largest file's time; channels beyond
the number of files have nothing to do. With multisection every section is a backup piece of
its own, and creating a piece is a control-file transaction: the channel takes the CF enqueue
and waits for synchronous control-file writes, one channel at a time. A file makes at most 256
sections: RMAN increases a section size that would make more so that the file makes exactly 256
(Oracle Database Backup and Recovery Reference 11g/12c, BACKUP, SECTION SIZE; Oracle 11g New Features
course notes: "There are a maximum of 256 sections per file"; D. Seiler, "Battling bigfile backup
bottlenecks", 2014: RMAN increases the size "so that exactly 256 sections are created ... still
enforced today in Oracle 12c"), so 2 MB sections of the paper's database make 1,582 pieces, not
16,386, and any section size runs.

Datafiles (DATAFILES_MB, 17 files, 32 GB in all; the paper gives only "17 datafiles of varying
size" and 32 GB): the largest is fitted to tseries.rman, row 3 channels (the paper: "the
minimum time ... is defined by the time it takes to backup the largest file"); the next three
to row 2 channels (their sizes decide how unevenly two channels end); the other thirteen are
small system, undo and user tablespaces whose sizes are estimates.

Constants (each with its source or the single published row it was fitted to):
- COMPRESS_INSTRUCTIONS_PER_MB = 2.9e8 (~275 instructions per byte, BASIC/bzip2-class
  compression; bzip2 runs at roughly 10 MB/s on one ~3 GHz core, the same order): fitted to
  tseries.rman, row 1 channel (elapsed).
- COMPRESSION_RATIO = 0.25: backup bytes per datafile byte; estimate for an OLTP database.
- MPKI = 2: misses per 1000 instructions of the compressor; estimate.
- CF_WRITES_PER_PIECE = 117: control-file writes per backup piece, each to every control-file
  copy: fitted to tseries.rman, row 25 channels (elapsed), under the 256-section limit. It stands
  for the whole serial cost of creating a piece (~1.05 s on the uncached internal drives): a
  piece's records (piece, set, datafile, checkpoint progress) need about a tenth of it, so the rest
  is a serial per-piece cost the paper does not name (the ASM file creation and extent allocation,
  not simulated, are candidates). 11 when fitted without the limit, over 16,386 pieces.
- PIECE_INSTRUCTIONS = 5.5e8: CPU to open and close a piece (open the file in ASM, allocate and
  initialise buffers and the compressor): an estimate now; it was fitted to the 25-channel row's
  usr column over 16,386 pieces, which the 256-section limit rules out.
- CONTROL_FILE_COPIES = 2: multiplexed control files (Oracle's recommended minimum).
- READ_SIZE = 1 MB: RMAN's disk input buffer size (11g); estimate of the buffer layout.
"""

from __future__ import annotations

from dataclasses import dataclass

import simpy

from sim.config import Source, param
from sim.db.physical_io import ReadAhead
from workloads.batch import MB, BatchWorkload, check_fits, device_checker, device_of, UNPLACED

# MiB, in file# order: system, sysaux, undo, users, ... then the four large data files.
DATAFILES_MB = (420.0, 360.0, 150.0, 5.0, 20.0, 20.0, 20.0, 20.0, 20.0, 18.0, 15.0, 15.0, 30.0,
                13175.0, 7000.0, 6300.0, 5180.0)
COMPRESS_INSTRUCTIONS_PER_MB = 2.9e8   # fitted: tseries.rman, 1 channel
COMPRESSION_RATIO = 0.25
MPKI = 2.0
CF_WRITES_PER_PIECE = 117              # fitted: tseries.rman, 25 channels (elapsed), 256 sections a file at most
PIECE_INSTRUCTIONS = 5.5e8              # estimate (fitted to 25 channels' usr before the 256-section limit)
CONTROL_FILE_COPIES = 2
CONTROL_FILE_WRITE = 16 * 1024.0
READ_SIZE = 1.0 * MB
MAX_SECTIONS = 256                     # RMAN's sections per file (11g, 12c)


# The parts of the instance this workload drives (sim/scenario.py INSTANCE_PARTS): backup pieces are control-file
# transactions; no commits, no buffer cache.
USES = ("control_file",)


@dataclass(frozen=True, kw_only=True)
class Params:
    channels: int = param("RMAN channels (configure device type disk parallelism N)", minimum=1)
    section_size: float | None = param("multisection backup: SECTION SIZE (omit: whole files)", kind="size",
                                       default=None, positive=True)
    compressed: bool = param("compressed backupset", default=True)
    datafile_device: str | None = param("storage device (ASM disk group) of the datafiles " + UNPLACED, default=None)
    backup_device: str | None = param("storage device (ASM disk group) of the backup pieces " + UNPLACED,
                                      default=None)
    datafiles_mb: tuple[float, ...] = param("datafile sizes in MB, in file# order (omit: the paper's database)",
                                            default=DATAFILES_MB)

    def check(self, src: Source) -> None:
        if not self.datafiles_mb or any(not isinstance(s, (int, float)) or s <= 0 for s in self.datafiles_mb):
            raise src.at("datafiles_mb").bad(self.datafiles_mb, "a list of sizes in MB, each > 0")


_check_devices = device_checker("datafile_device", "backup_device")


def check_scenario(spec, profile, params: Params, src: Source) -> None:
    _check_devices(spec, profile, params, src)
    check_fits(spec, profile, src, "datafiles_mb", sum(params.datafiles_mb) * MB,
               device_of(params, "datafile_device", profile.storage.device_names()))


def work_items(sizes_mb: tuple[float, ...], section_mb: float | None) -> list[tuple[int, float, float]]:
    """(file, offset MB, MB) pieces of work: whole files largest first, or every file's sections."""
    if section_mb is None:
        order = sorted(range(len(sizes_mb)), key=lambda i: (-sizes_mb[i], i))
        return [(i, 0.0, sizes_mb[i]) for i in order]
    items = []
    for i, size in enumerate(sizes_mb):
        if size > MAX_SECTIONS * section_mb:   # RMAN enlarges the sections so that the file makes exactly 256
            step = size / MAX_SECTIONS
            items += [(i, k * step, step) for k in range(MAX_SECTIONS)]
            continue
        pos = 0.0
        while pos < size:
            items.append((i, pos, min(section_mb, size - pos)))
            pos += section_mb
    return items


class Workload(BatchWorkload):
    def __init__(self, system, params: Params):
        sizes = tuple(float(s) for s in params.datafiles_mb)
        super().__init__(system, params, mpki=MPKI, total_bytes=sum(sizes) * MB)
        self.sizes = sizes
        starts, pos = [], 0.0
        for s in self.sizes:
            starts.append(pos)
            pos += s
        self.file_start = starts  # MB into the disk group: files laid out one after another
        section = params.section_size / MB if params.section_size else None
        self.items = work_items(self.sizes, section)
        self.pieces = 0
        self.channels_used = 0
        self.done_items = 0
        self.per_channel_mb: list[float] = []

    def job(self):
        n = min(self.params.channels, len(self.items))
        self.channels_used = n
        self.per_channel_mb = [0.0] * n
        queue = list(reversed(self.items))
        procs = [self.env.process(self._channel(c, self.instance.new_session(), queue)) for c in range(n)]
        yield simpy.AllOf(self.env, procs)

    def _channel(self, c: int, session, queue: list):
        p = self.params
        names = list(self.system.devices)
        datafiles = self.system.devices[device_of(p, "datafile_device", names)]
        backup = self.system.devices[device_of(p, "backup_device", names)]
        ipm = COMPRESS_INSTRUCTIONS_PER_MB if p.compressed else 0.0
        ratio = COMPRESSION_RATIO if p.compressed else 1.0
        while queue:
            f, off_mb, mb = queue.pop()
            yield from self._new_piece(session)   # a section, or a file's part of the set
            # RMAN reads asynchronously: the next input buffer is in flight while this one is compressed
            src = ReadAhead(session, datafiles, (self.file_start[f] + off_mb) * MB, mb * MB, READ_SIZE,
                            "RMAN backup & recovery I/O")
            while src.left > 0:
                n = yield from src.next_buffer()
                yield session.cpu(ipm * n / MB)
                session.write_async(backup, n * ratio)   # the piece's output buffer, written asynchronously
                self.done_bytes += n
                self.per_channel_mb[c] += n / MB
            self.done_items += 1

    def _new_piece(self, session):
        """Create a backup piece: CPU, then a control-file transaction under the CF enqueue."""
        self.pieces += 1
        yield session.cpu(PIECE_INSTRUCTIONS)
        yield from session.control_file_transaction(CF_WRITES_PER_PIECE, CONTROL_FILE_WRITE, CONTROL_FILE_COPIES)

    def report(self, span: float) -> dict:
        return {**super().report(span), "channels": self.params.channels, "channels_used": self.channels_used,
                "pieces": self.pieces,
                "work_items": len(self.items), "items_done": self.done_items,
                "largest_channel_mb": max(self.per_channel_mb, default=0.0)}
