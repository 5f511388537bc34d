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

Compressors share the last-level cache. BASIC compression is bzip2 (11.2's V$RMAN_COMPRESSION_ALGORITHM
gives BASIC and BZIP2 the same description; R. Egner, "Oracle 11g Release 2 - RMAN compression
comparison", 2009: BASIC "BZIP2"), whose compressor keeps 400 KB + 8 x its block (bzip2 manual,
MEMORY MANAGEMENT: 7.6 MB at the default 900 KB block) private to the channel, more than a T2's
whole 4 MB L2. With k channels compressing, each has 1/k of the cache and misses more by
the square-root rule (as workloads/tpcc.py's server code does with cache per core): a strand stalls
longer per MB, so the CPU a backup burns, and a channel's time per MB, grow with the channels
running, as the paper's usr column does (experiments/tseries_rman.yaml, round 3). A backup without compression reads and writes through
buffers of RMAN's, with no such working set: its miss rate stays MPKI.

Datafiles (DATAFILES_MB, 17 files, 32 GB in all; the paper gives only "17 datafiles of varying
size" and 32 GB): the largest is fitted to tseries.rman, row 3 channels (the paper: "the
minimum time ... is defined by the time it takes to backup the largest file"); the next three
chosen so that two channels end together (row 2 channels, within 1.2%) and the other two of three
channels end before the largest file's; the other thirteen are small system,
undo and user tablespaces whose sizes are estimates.

Constants (each with its source or the single published row it was fitted to):
- COMPRESS_INSTRUCTIONS_PER_MB = 2.9e8 (~275 instructions per byte, BASIC/bzip2-class
  compression; bzip2 runs at roughly 10 MB/s on one ~3 GHz core, the same order): fitted to
  tseries.rman, row 1 channel (elapsed).
- COMPRESSION_RATIO = 0.25: backup bytes per datafile byte; estimate for an OLTP database.
- MPKI = 2: misses per 1000 instructions of the compressor alone on a T2's 4 MB L2; estimate.
- COMPRESSOR_WORKING_SET = 7.6 MB: bzip2's compression memory at its default 900 KB block (bzip2
  manual); which block BASIC uses is not published (Egner, above, guesses 100 KB: 1.2 MB, so that
  three would share a T2's L2 unharmed, and the 2- and 3-channel rows would burn no more CPU per MB
  than one, where the paper's usr rises).
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
- OUTPUT_BUFFERS = 4 of OUTPUT_BUFFER = 1 MB: a channel writes a full output buffer asynchronously and
  goes on compressing into the next; with all four in flight it waits for one ('RMAN backup & recovery
  I/O'), and a piece is complete once its last buffer is written. Oracle's RMAN tuning chapters give
  four output buffers a channel (1 MB each to disk; 256 KB each to tape, as HP Data Protector's Oracle
  integration guide restates); the disk size is the 11g figure, an estimate for the paper's release.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import simpy

from sim.config import Source, param
from sim.db.instance import MAX_DATAFILES
from sim.db.physical_io import ReadAhead, WriteBehind
from sim.units import format_quantity
from workloads.batch import MB, BatchWorkload, check_fits, device_checker, device_of, UNPLACED

# MiB, in file# order: system, sysaux, undo, users, ... then the four large data files.
DATAFILES_MB = (420.0, 360.0, 150.0, 5.0, 20.0, 20.0, 20.0, 20.0, 20.0, 18.0, 15.0, 15.0, 30.0,
                11270.0, 10000.0, 5700.0, 4685.0)
COMPRESS_INSTRUCTIONS_PER_MB = 2.9e8   # fitted: tseries.rman, 1 channel
COMPRESSION_RATIO = 0.25
MPKI = 2.0                             # the compressor alone on a T2's 4 MB L2
MPKI_REF_CACHE = 4 * MB
COMPRESSOR_WORKING_SET = 7.6 * MB      # bzip2 at its 900 KB block: 400 KB + 8 x block (bzip2 manual)
CF_WRITES_PER_PIECE = 117              # fitted: tseries.rman, 25 channels (elapsed), 256 sections a file at most
PIECE_INSTRUCTIONS = 5.5e8              # estimate (fitted to 25 channels' usr before the 256-section limit)
CONTROL_FILE_COPIES = 2
CONTROL_FILE_WRITE = 16 * 1024.0
READ_SIZE = 1.0 * MB
OUTPUT_BUFFER = 1.0 * MB   # a disk channel's output buffers: four of 1 MB (see the docstring)
OUTPUT_BUFFERS = 4
MAX_SECTIONS = 256                     # RMAN's sections per file (11g, 12c)
SMALLFILE_BLOCKS = 4 * 2**20 - 1       # blocks of the largest smallfile datafile (Physical Database Limits)


# The parts of the instance this workload drives (sim/scenario.py INSTANCE_PARTS): backup pieces are control-file
# transactions; no commits, no buffer cache.
USES = ("control_file",)
# A setting of the database it reads where others would not (sim/scenario.py _refuse_unused_datafile_keys): beside a
# workload it backs up the workload's database in files of database.datafile_size (beside()).
READS = ("database.datafile_size",)


@dataclass(frozen=True, kw_only=True)
class Params:
    # "You can allocate up to 255 channels" (Oracle Database Backup and Recovery Reference 11.1, ALLOCATE CHANNEL)
    channels: int = param("RMAN channels (configure device type disk parallelism N)", minimum=1, maximum=255)
    section_size: float | None = param("multisection backup: SECTION SIZE (omit: whole files)", kind="size",
                                       default=None, positive=True)
    compressed: bool = param("compressed backupset", default=True)
    datafile_device: str | None = param("storage device (ASM disk group) of the datafiles " + UNPLACED, default=None)
    backup_device: str | None = param("storage device (ASM disk group) of the backup pieces " + UNPLACED,
                                      default=None)
    datafiles_mb: tuple[float, ...] = param("datafile sizes in MB, in file# order (omit: the paper's database; beside "
                                            "a workload, the workload's)", default=DATAFILES_MB)

    def check(self, src: Source) -> None:
        if not self.datafiles_mb or any(not isinstance(s, (int, float)) or s <= 0 for s in self.datafiles_mb):
            raise src.at("datafiles_mb").bad(self.datafiles_mb, "a list of sizes in MB, each > 0")
        if len(self.datafiles_mb) > MAX_DATAFILES:   # (the whole list would fill the message)
            raise src.at("datafiles_mb").bad(f"{len(self.datafiles_mb)} datafiles",
                                             f"at most {MAX_DATAFILES}, the most a database has (Oracle Database "
                                             "Reference, Physical Database Limits)")


_check_devices = device_checker("datafile_device", "backup_device")


def beside(params: Params, given: dict, spec, tablespaces: tuple[float, ...], device: str | None,
           src: Source) -> Params:
    """A backup beside a workload backs up the workload's database (`tablespaces`: the bytes of each of its tables
    and indexes) where it is (`device`, None where that is the profile's first, the backup's own default), unless
    datafile_device is given: tpcc's under database.data_device, SLOB's schema under params.device. Unless
    datafiles_mb is given, in files of database.datafile_size where that is given, each table and index in its
    own tablespace of as many as it needs, as that setting lays them out (the last of each holding what is left),
    else in as few equal files as the largest smallfile datafile allows (4M - 1 blocks: 32 GB at 8 KB; Oracle
    Database Reference, Physical Database Limits).
    Not in database.datafiles' many equal files: each file here is a backup piece of its own, with its serial
    control-file cost (CF_WRITES_PER_PIECE), where RMAN puts up to 64 files in one backup set (FILESPERSET)."""
    if device is not None and "datafile_device" not in given:
        params = dataclasses.replace(params, datafile_device=device)
    if "datafiles_mb" in given:
        return params
    size, database = spec.database.datafile_size, sum(tablespaces)
    if size is None:
        n = math.ceil(database / (SMALLFILE_BLOCKS * spec.database.block_size))
        files = (database / n / MB,) * n
    else:
        # (counted before they are made: 8-KB files of a 100-warehouse database are a million)
        count = sum(math.ceil(t / size - 1e-9) for t in tablespaces)
        if count > MAX_DATAFILES:   # (datafiles_mb's own check ran before, on the files given)
            raise src.at("database.datafile_size").bad(
                format_quantity(size, "size"), f"files that make at most {MAX_DATAFILES} of the database the backup "
                f"beside {spec.workload} reads, the most a database has (Oracle Database Reference, Physical Database "
                f"Limits): its {format_quantity(database, 'size')} make {count:,}")
        files = ()
        for t in tablespaces:
            whole, rest = divmod(t, size)
            files += (size / MB,) * int(whole) + ((rest / MB,) if rest > 0.0 else ())
    return dataclasses.replace(params, datafiles_mb=files)


def check_scenario(spec, profile, params: Params, src: Source) -> None:
    _check_devices(spec, profile, params, src)
    largest = max(params.datafiles_mb) * MB
    if params.section_size is not None and params.section_size >= largest:
        # every file one section: a whole-file backup, but taken in file# order, not largest first
        # (beside a workload, files the user did not give: say whose they are)
        whose = (" of the workload's database, which the backup beside it reads" if "datafiles_mb" not in spec.params
                 and spec.background.workload == spec.workload else "")
        raise src.at("params").at("section_size").bad(
            format_quantity(params.section_size, "size"),
            f"less than the largest datafile ({format_quantity(largest, 'size')}{whose}): every file would be one "
            "section, a backup of whole files, which is what leaving section_size out does")
    check_fits(spec, profile, src, "datafiles_mb", sum(params.datafiles_mb) * MB,
               device_of(params, "datafile_device", profile.storage.device_names()))


def compressor_misses_per_instruction(llc: float, compressors: float) -> float:
    """LLC misses per instruction of one of `compressors` compressors sharing `llc` bytes of last-level
    cache (one socket's; compressors: per socket, spread evenly): each holds llc / compressors of it (no
    more than its working set) and misses by the square-root rule (as workloads/tpcc.py): MPKI on the
    4 MB it has alone on a T2, more on less."""
    share = min(llc / max(compressors, 1.0), COMPRESSOR_WORKING_SET)
    return MPKI / 1000.0 * (share / MPKI_REF_CACHE) ** -0.5


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
        cpu = system.profile.cpu
        self.llc, self.sockets = cpu.llc_size, cpu.sockets
        self.strands = cpu.strands
        alone = 1000.0 * compressor_misses_per_instruction(self.llc, 1) if params.compressed else MPKI
        super().__init__(system, params, mpki=alone, total_bytes=sum(sizes) * MB)
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
        self.compressing = 0   # channels inside a piece, each with its compressor's private working set in the LLC
        self._sharing_area, self._sharing_since = 0.0, self.env.now   # compressors on strands x time, and since when

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
        out = WriteBehind(session, backup, OUTPUT_BUFFERS, "RMAN backup & recovery I/O")
        while queue:
            f, off_mb, mb = queue.pop()
            yield from self._new_piece(session)   # a section, or a file's part of the set
            self._sharers(+1)
            # RMAN reads asynchronously: the next input buffer is in flight while this one is compressed
            src = ReadAhead(session, datafiles, (self.file_start[f] + off_mb) * MB, mb * MB, READ_SIZE,
                            "RMAN backup & recovery I/O")
            filled = 0.0   # bytes in the output buffer being filled
            while src.left > 0:
                n = yield from src.next_buffer()
                yield session.cpu(ipm * n / MB)
                filled += n * ratio
                while filled >= OUTPUT_BUFFER:   # a full output buffer is written asynchronously
                    yield from out.write(OUTPUT_BUFFER)
                    filled -= OUTPUT_BUFFER
                self.done_bytes += n
                self.per_channel_mb[c] += n / MB
            if filled > 0.0:
                yield from out.write(filled)
            yield from out.drain()   # the piece is complete once it is on the backup device
            self._sharers(-1)
            self.done_items += 1

    def _sharers(self, change: int) -> None:
        """Compressors share the last-level cache: each has LLC / k of it, and misses more by the
        square-root rule (as workloads/tpcc.py), down to the rate of its whole working set. Only those
        on a strand at once share it: more channels than strands take turns by time slice, and a slice
        refills the cache many times over (a 10 ms slice at ~1-3 GHz brings in megabytes), so a channel
        waiting in the run queue holds none of it."""
        if not self.params.compressed:
            return
        now = self.env.now
        self._sharing_area += (now - self._sharing_since) * min(self.compressing, self.strands)
        self._sharing_since = now
        self.compressing += change
        if self.compressing == 0:
            return
        running = min(self.compressing, self.strands)
        self.system.set_memory_behaviour(compressor_misses_per_instruction(self.llc, running / self.sockets),
                                         self.tenant)

    def _new_piece(self, session):
        """Create a backup piece: CPU, then a control-file transaction under the CF enqueue."""
        self.pieces += 1
        yield session.cpu(PIECE_INSTRUCTIONS)
        yield from session.control_file_transaction(CF_WRITES_PER_PIECE, CONTROL_FILE_WRITE, CONTROL_FILE_COPIES)

    def report(self, span: float) -> dict:
        # a job cut at run.max_time has compressors still at work: count them up to the cut
        area = self._sharing_area + (self.env.now - self._sharing_since) * min(self.compressing, self.strands)
        return {**super().report(span), "channels": self.params.channels, "channels_used": self.channels_used,
                "pieces": self.pieces,
                "work_items": len(self.items), "items_done": self.done_items,
                "largest_channel_mb": max(self.per_channel_mb, default=0.0),
                # compressors on strands at once, over the job (each has 1/k of its socket's LLC: _sharers)
                "compressors_mean": area / span if span > 0 else 0.0}
