"""Batch jobs by hand: what each job reads, writes and computes, counted exactly against its own parameters
(RMAN channels and pieces, SQL*Loader buffers and commits, CTAS and CREATE INDEX bytes and instructions),
and the order it does its work in. Small runs on the T5220, a few simulated seconds each."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim import scenario
from sim.run import run
from sim.system import System
from workloads import rman

MB = 1024.0 * 1024.0


def _result(workload: str, params: dict, profile: str = "t5220"):
    r = run(scenario.load(None, {"run.max_time": "10000 s", **params}, profile=profile, workload=workload))
    assert r.status == "ok", r.message
    return r


def _instructions(r) -> float:
    return r.extra["instructions_per_s"] * r.elapsed


def _moved(r) -> dict[str, float]:
    return {name: d["mb_per_s"] * r.elapsed * MB for name, d in r.devices.items()}


class _Recorder:
    """Wraps a device's submit and keeps (kind, bytes, offset) of every request, in order."""

    def __init__(self, device):
        self.device, self.log = device, []
        self._submit = device.submit
        device.submit = self.submit

    def submit(self, kind, nbytes, offset=None, **kw):
        self.log.append((kind, nbytes, offset))
        return self._submit(kind, nbytes, offset, **kw)


def _traced(workload: str, params: dict, devices=("array", "internal"), profile: str = "t5220"):
    """Build the system and the workload by hand, record the named devices' requests, run the job to its end."""
    import workloads
    sc = scenario.load(None, {"run.max_time": "10000 s", **params}, profile=profile, workload=workload)
    system = System(sc)
    recs = {name: _Recorder(system.devices[name]) for name in devices}
    job = workloads.get(workload).Workload(system, sc.params)
    job.start()
    system.env.run(until=job.done)
    return job, recs


# --------------------------------------------------------------------------- RMAN


def test_rman_default_database_is_the_papers_17_datafiles_of_32_gb():
    """The paper's database: 17 datafiles of varying size, 32 GB in all; the largest bounds the backup."""
    assert len(rman.DATAFILES_MB) == 17
    assert sum(rman.DATAFILES_MB) == 32 * 1024.0
    assert max(rman.DATAFILES_MB) == rman.DATAFILES_MB[13] == 11270.0
    assert sorted(rman.DATAFILES_MB, reverse=True)[:4] == [11270.0, 10000.0, 5700.0, 4685.0]


def test_rman_compressors_sharing_the_llc_miss_by_the_square_root_rule_down_to_their_working_set():
    """Alone on a T2's 4 MB L2 the compressor misses MPKI; k of them have 4/k MB each and miss sqrt(k) times
    as often; a cache larger than k working sets leaves each its whole working set (no more misses as k
    grows until it is shared below that), and more compressors never miss less."""
    t2 = 4 * MB
    assert rman.compressor_misses_per_instruction(t2, 1) == pytest.approx(rman.MPKI / 1000.0, rel=1e-12)
    for k in (2, 4, 25):
        assert rman.compressor_misses_per_instruction(t2, k) == pytest.approx(rman.MPKI / 1000.0 * math.sqrt(k),
                                                                            rel=1e-12)
    big = 4 * rman.COMPRESSOR_WORKING_SET
    whole = rman.MPKI / 1000.0 * math.sqrt(t2 / rman.COMPRESSOR_WORKING_SET)
    assert [rman.compressor_misses_per_instruction(big, k) for k in (1, 2, 4)] == pytest.approx([whole] * 3)
    assert rman.compressor_misses_per_instruction(big, 8) == pytest.approx(whole * math.sqrt(2))
    rates = [rman.compressor_misses_per_instruction(t, k) for t in (t2, big) for k in range(1, 70)]
    assert all(a <= b for a, b in zip(rates[:68], rates[1:69])) and all(a <= b for a, b in zip(rates[69:], rates[70:]))


def test_rman_channels_waiting_for_a_strand_do_not_share_the_cache():
    """On the 2-way Opteron (two single-strand sockets) eight channels take turns on two strands: one compressor
    per socket at a time, so each misses as one alone does; the backup takes about four times one channel's."""
    base = {"datafile_device": "external", "backup_device": "external", "section_size": "10 MB"}
    one = _result("rman", {**base, "channels": 1, "datafiles_mb": [40.0]}, profile="opteron-2way")
    eight = _result("rman", {**base, "channels": 8, "datafiles_mb": [40.0] * 8}, profile="opteron-2way")
    assert eight.extra["cpi_data_stall"] == pytest.approx(one.extra["cpi_data_stall"], rel=0.02)
    assert eight.elapsed == pytest.approx(4 * one.elapsed, rel=0.05)
    # and the report's compressors on strands at once never counts those waiting: at most the two strands
    assert 1.5 < eight.extra["compressors_mean"] <= 2.0


def test_rman_cut_at_max_time_counts_the_compressors_still_at_work():
    """One channel compressing one 60 MB file (about 3.6 MB/s on a T5220 strand: some 17 s), cut at 5 s and at
    10 s: between the two cuts the channel compressed alone all the time, so the compressors' area (mean x
    span) grows by exactly 5 s. The mean used to count only up to the last piece that began or ended: 0 for a
    job cut inside its first piece, whose report said 'compressing at once (mean) 0.0' beside '1 strand full
    100%'."""
    def cut(t):
        r = run(scenario.load(None, {"run.max_time": f"{t} s", "channels": 1, "datafiles_mb": [60.0]},
                              profile="t5220", workload="rman"))
        assert r.status == "timeout" and r.extra["pieces"] == 1
        return r.extra["compressors_mean"] * t

    assert cut(10) - cut(5) == pytest.approx(5.0, rel=1e-6)


@pytest.mark.parametrize("compressed", [True, False])
def test_rman_channels_compressing_together_stall_longer_per_instruction(compressed):
    """Four channels compressing at once on four cores of the T5220 (no pipeline shared) run at the CPI of
    a strand missing sqrt(4) times as often (between 3 and 4 compressors' closed form: the channels start
    and end a piece a control-file transaction apart); one channel at one compressor's. Without
    compression the channels' miss rate does not depend on how many run."""
    from sim.hardware.profile import load_profile
    spec = load_profile("t5220").cpu

    def closed_form(k, r):
        mpi = rman.compressor_misses_per_instruction(spec.llc_size, k) if compressed else rman.MPKI / 1000.0
        return spec.cpi_issue + mpi * r.extra["memory_latency_cycles"] / spec.mlp

    base = {"datafile_device": "array", "backup_device": "internal", "compressed": compressed}
    one = _result("rman", {**base, "channels": 1, "datafiles_mb": [60.0]})
    four = _result("rman", {**base, "channels": 4, "datafiles_mb": [60.0] * 4})
    assert one.extra["cpi"] == pytest.approx(closed_form(1, one), rel=0.01)
    if compressed:
        assert closed_form(3, four) < four.extra["cpi"] < closed_form(4, four) * 1.01
        # how many compressed at once, over the job: one at most 1 (a piece's start is not compressing), four
        # between 3 and 4; the report says it
        assert 0.9 < one.extra["compressors_mean"] <= 1.0 and 3.0 < four.extra["compressors_mean"] < 4.0
        from sim.report import full
        assert f"compressing at once (mean) {four.extra['compressors_mean']:.1f}" in full(four)
    else:
        assert four.extra["cpi"] == pytest.approx(one.extra["cpi"], rel=0.01)
        assert four.extra["compressors_mean"] == 0.0


@pytest.mark.parametrize("compressed", [True, False])
def test_rman_cpu_is_compression_per_mb_plus_a_piece_each_and_the_backup_gets_the_compressed_bytes(compressed):
    """Instructions retired = MB backed up x COMPRESS_INSTRUCTIONS_PER_MB (0 uncompressed) + pieces x
    PIECE_INSTRUCTIONS, exactly (nothing else runs); the backup device gets MB x COMPRESSION_RATIO (1
    uncompressed); sections make a piece each."""
    sizes = (5.0, 3.5, 2.0)
    for section, pieces in ((None, 3), ("2 MB", 3 + 2 + 1)):
        params = {"channels": 2, "datafiles_mb": list(sizes), "datafile_device": "array", "backup_device": "internal"}
        if not compressed:        # compressed is the default
            params["compressed"] = False
        if section:
            params["section_size"] = section
        r = _result("rman", params)
        assert r.extra["pieces"] == r.extra["work_items"] == r.extra["items_done"] == pieces
        per_mb = rman.COMPRESS_INSTRUCTIONS_PER_MB if compressed else 0.0
        assert _instructions(r) == pytest.approx(sum(sizes) * per_mb + pieces * rman.PIECE_INSTRUCTIONS, rel=1e-9)
        ratio = rman.COMPRESSION_RATIO if compressed else 1.0
        assert _moved(r)["internal"] == pytest.approx(sum(sizes) * MB * ratio, rel=1e-9)


def test_rman_compression_is_cpu_time_on_one_strand_per_channel():
    """One channel, one file: compressing is one strand's work, overlapped with the reads, so the compressed
    backup takes at least its instructions at one strand's rate and longer than the uncompressed one."""
    params = {"channels": 1, "datafiles_mb": [20.0], "datafile_device": "array", "backup_device": "internal"}
    plain = _result("rman", {**params, "compressed": False})
    packed = _result("rman", {**params, "compressed": True})
    system = System(scenario.load(None, params, profile="t5220", workload="rman"))
    system.set_memory_behaviour(rman.MPKI / 1000.0)
    strand = system.cpu.groups[0].rates[1]
    assert packed.elapsed >= (20.0 * rman.COMPRESS_INSTRUCTIONS_PER_MB + rman.PIECE_INSTRUCTIONS) / strand
    assert packed.elapsed > 2 * plain.elapsed


def test_rman_refuses_empty_or_non_positive_datafiles_and_a_database_larger_than_its_device():
    from sim.config import ConfigError
    for bad in ([], [0.0], [5.0, -1.0]):
        with pytest.raises(ConfigError, match="each > 0"):
            scenario.load(None, {"channels": 1, "datafiles_mb": bad}, profile="t5220", workload="rman")
    capacity_mb = 448512.0        # the T5220's array
    ok = scenario.load(None, {"channels": 1, "datafiles_mb": [capacity_mb / 2] * 2}, profile="t5220", workload="rman")
    assert sum(ok.params.datafiles_mb) == capacity_mb
    with pytest.raises(ConfigError, match="capacity of device 'array'"):
        scenario.load(None, {"channels": 1, "datafiles_mb": [capacity_mb / 2, capacity_mb / 2 + 1]},
                      profile="t5220", workload="rman")
    scenario.load(None, {"channels": 1, "datafiles_mb": [0.001]}, profile="t5220", workload="rman")
    with pytest.raises(ConfigError, match="section_size"):    # a section of nothing would never end a file
        scenario.load(None, {"channels": 1, "section_size": "0 MB"}, profile="t5220", workload="rman")
    # a section as large as the largest file makes every file one section: whole files, but in file# order (it
    # had moved a 4-channel backup of the paper's files by 1.3%, from 3,479 to 3,524 s)
    with pytest.raises(ConfigError, match=r"params.section_size: got '1 TB'; expected less than the largest datafile"):
        scenario.load(None, {"channels": 4, "section_size": "1 TB"}, profile="t5220", workload="rman")
    scenario.load(None, {"channels": 4, "section_size": "11 GB"}, profile="t5220", workload="rman")   # 11,270 MB


@pytest.mark.parametrize("section_mb", [2.0, 1.0, 1e-6])
def test_rman_makes_at_most_256_sections_of_a_file_covering_it_exactly(section_mb):
    """RMAN enlarges a section size that would cut a file into more than 256 (11g/12c BACKUP reference): the
    paper's 2 MB sections make 1,582 pieces, not 16,386, and a 1-byte section size still ends."""
    sizes = rman.DATAFILES_MB
    items = rman.work_items(sizes, section_mb)
    assert len(items) == sum(min(256, math.ceil(s / section_mb - 1e-9)) for s in sizes)
    for f, size in enumerate(sizes):
        mine = [(off, mb) for g, off, mb in items if g == f]
        assert len(mine) <= 256 and sum(mb for _, mb in mine) == pytest.approx(size, rel=1e-12)
        assert all(a[0] + a[1] == pytest.approx(b[0], rel=1e-12) for a, b in zip(mine, mine[1:]))  # no gap, no overlap
    if section_mb == 2.0:
        assert len(items) == 1582


@pytest.mark.parametrize("section", [None, "3 MB", "2.5 MB"])
def test_rman_reads_every_datafile_byte_once_where_the_files_lie_one_after_another(section):
    """The datafiles lie one after another on their device; the channels read each byte of each file once,
    in READ_SIZE buffers from the file's (or section's) start, and write every byte, compressed, to the backup device.
    (2.5 MB sections do not fall on the 1 MB buffers of the file: 16 reads, not the whole files' 14.)"""
    sizes = (4.0, 2.5, 7.0)
    params = {"channels": 2, "datafiles_mb": list(sizes), "compressed": True, "datafile_device": "array",
              "backup_device": "internal", "database.control_file_device": "internal"}
    if section:
        params["section_size"] = section
    job, recs = _traced("rman", params)
    reads = sorted((off, n) for kind, n, off in recs["array"].log if kind == "read")
    assert all(n <= rman.READ_SIZE for _off, n in reads)
    pos = 0.0
    for off, n in reads:          # contiguous from 0, no gap, no overlap
        assert off == pytest.approx(pos, abs=1e-6)
        pos += n
    assert pos == pytest.approx(sum(sizes) * MB)
    # every read, by hand: each piece (a whole file, or a section) from its own start in READ_SIZE buffers,
    # the last one short; the files at 0, 4 and 6.5 MB
    section_mb = {None: None, "3 MB": 3.0, "2.5 MB": 2.5}[section]
    expected = []
    for f, off_mb, mb in rman.work_items(sizes, section_mb):
        start, left = ((0.0, 4.0, 6.5)[f] + off_mb) * MB, mb * MB
        while left > 0:
            expected.append((start, min(rman.READ_SIZE, left)))
            start, left = start + rman.READ_SIZE, left - rman.READ_SIZE
    assert len(reads) == len(expected) == {None: 14, "3 MB": 14, "2.5 MB": 16}[section]
    assert [x for r in reads for x in r] == pytest.approx([x for r in sorted(expected) for x in r], abs=1e-6)
    assert job.file_start == [0.0, 4.0, 6.5]
    backup = [n for kind, n, off in recs["internal"].log if kind == "write" and n != rman.CONTROL_FILE_WRITE]
    assert sum(backup) == pytest.approx(sum(sizes) * MB * rman.COMPRESSION_RATIO)
    # a piece's compressed bytes go out in full OUTPUT_BUFFERs, and its last, part-filled one at the piece's end
    expected_writes = []
    for _f, _off, mb in rman.work_items(sizes, section_mb):
        out = mb * MB * rman.COMPRESSION_RATIO
        full = int(out // rman.OUTPUT_BUFFER)
        expected_writes += [rman.OUTPUT_BUFFER] * full + ([out - full * rman.OUTPUT_BUFFER] if out % rman.OUTPUT_BUFFER else [])
    assert sorted(backup) == pytest.approx(sorted(expected_writes))
    assert job.done_bytes == pytest.approx(sum(sizes) * MB) and job.progress() == 1.0


def test_rman_channels_take_the_largest_file_first_and_never_more_channels_than_work():
    """Whole files: a free channel takes the largest file not yet started. Two channels over 24, 8, 6, 4 MB:
    one backs up 24 MB, the other 8 then 6 then 4 (18 MB, done first), so the largest channel holds 24 MB;
    one channel does all 42; eight channels are four (a file each)."""
    files = [24.0, 8.0, 6.0, 4.0]
    base = {"datafiles_mb": files, "datafile_device": "array", "backup_device": "internal"}
    one, two, eight = (_result("rman", {**base, "channels": c}) for c in (1, 2, 8))
    assert one.extra["largest_channel_mb"] == pytest.approx(42.0) and one.extra["channels_used"] == 1
    assert two.extra["largest_channel_mb"] == pytest.approx(24.0) and two.extra["channels_used"] == 2
    assert eight.extra["largest_channel_mb"] == pytest.approx(24.0) and eight.extra["channels_used"] == 4
    from sim.report import full
    # (not "4", as if asked)
    assert "RMAN channels 4 of 8 (a channel backs up one file or section at a time: 4 in all)" in full(eight)
    assert "RMAN channels 2 " in full(two) and "of 2" not in full(two)
    job, recs = _traced("rman", {**base, "channels": 1, "datafiles_mb": [2.0, 6.0, 3.0]})
    starts = [off for kind, n, off in recs["array"].log if kind == "read" and off in (0.0, 2 * MB, 8 * MB)]
    assert starts == [2 * MB, 8 * MB, 0.0]     # file 2 (6 MB), file 3 (3 MB), file 1 (2 MB)
    assert rman.work_items((2.0, 6.0, 3.0, 6.0), None) == [(1, 0.0, 6.0), (3, 0.0, 6.0), (2, 0.0, 3.0),
                                                             (0, 0.0, 2.0)]
    assert rman.work_items((2.5, 1.0), 1.0) == [(0, 0.0, 1.0), (0, 1.0, 1.0), (0, 2.0, 0.5), (1, 0.0, 1.0)]


def test_rman_pieces_queue_on_the_cf_enqueue_one_channel_at_a_time():
    """Each piece is one CF enqueue get and CF_WRITES_PER_PIECE synchronous writes to CONTROL_FILE_COPIES
    copies of CONTROL_FILE_WRITE bytes: the control-file device gets exactly that. A get is a wait only when
    another channel holds the enqueue: the first never is, the three channels starting beside it are."""
    params = {"channels": 4, "datafiles_mb": [1.0] * 4, "section_size": "0.5 MB", "compressed": False,
              "datafile_device": "array", "backup_device": "array", "database.control_file_device": "internal"}
    job, recs = _traced("rman", params)
    assert job.pieces == 8
    cf = [n for kind, n, off in recs["internal"].log]
    assert cf == [rman.CONTROL_FILE_WRITE] * (8 * rman.CF_WRITES_PER_PIECE * rman.CONTROL_FILE_COPIES)
    waits = job.instance.waits.events
    assert 3 <= waits["enq: CF - contention"].waits <= 7
    assert waits["control file parallel write"].waits == 8 * rman.CF_WRITES_PER_PIECE
    assert waits["enq: CF - contention"].time > 0     # four channels start at once: three wait their turn


def test_rman_a_full_output_buffer_goes_out_at_once_not_with_the_next_input():
    """A channel writes an output buffer the moment it is full: uncompressed, a 3 MB file is three 1 MB reads
    and three 1 MB backup writes, the first handed over when the first read is in (as the second read is
    issued), each at its own instant. (Writing only once a buffer overflowed had held each back one input
    buffer and sent the last two together at the piece's end: same bytes, later.)"""
    sc = scenario.load(None, {"run.max_time": "10000 s", "channels": 1, "datafiles_mb": [3.0], "compressed": False,
                              "datafile_device": "array", "backup_device": "internal",
                              "database.control_file_device": "array"}, profile="t5220", workload="rman")
    system = System(sc)
    log = {name: [] for name in ("array", "internal")}
    for name, entries in log.items():
        dev = system.devices[name]

        def submit(kind, nbytes, offset=None, _orig=dev.submit, _log=entries, **kw):
            _log.append((kind, nbytes, system.env.now))
            return _orig(kind, nbytes, offset, **kw)
        dev.submit = submit
    job = rman.Workload(system, sc.params)
    job.start()
    system.env.run(until=job.done)
    reads = [t for kind, n, t in log["array"] if kind == "read"]
    writes = [(n, t) for kind, n, t in log["internal"] if kind == "write"]
    assert len(reads) == 3 and [n for n, _ in writes] == [rman.OUTPUT_BUFFER] * 3
    assert writes[0][1] == reads[1] and writes[1][1] == reads[2]
    assert len({t for _, t in writes}) == 3


def test_rman_datafiles_must_fit_the_datafile_device_not_the_backup_device():
    """The database (the datafiles' sum) is checked against the device that holds the datafiles: on the T5220
    500 GB of datafiles fit the 1,168 GB internal drives but not the 438 GB array, whichever holds the backup."""
    from sim.config import ConfigError
    files = [256000.0, 256000.0]     # MB: 500 GB
    with pytest.raises(ConfigError, match="capacity of device 'array'"):
        scenario.load(None, {"channels": 1, "datafiles_mb": files, "datafile_device": "array",
                             "backup_device": "internal"}, profile="t5220", workload="rman")
    scenario.load(None, {"channels": 1, "datafiles_mb": files, "datafile_device": "internal",
                         "backup_device": "array"}, profile="t5220", workload="rman")


def test_rman_a_section_as_large_as_the_largest_file_is_refused_one_byte_less_runs():
    """section_size equal to the largest datafile (11,270 MB) makes every file one section: refused like a larger
    one (the boundary itself); 11,269 MB makes two sections of the largest file and is taken."""
    from sim.config import ConfigError
    with pytest.raises(ConfigError, match="less than the largest datafile"):
        scenario.load(None, {"channels": 4, "section_size": "11270 MB"}, profile="t5220", workload="rman")
    scenario.load(None, {"channels": 4, "section_size": "11269 MB"}, profile="t5220", workload="rman")


def test_rman_an_uncompressed_backup_misses_at_mpki_whatever_the_llc():
    """Without compression no compressor's working set is in the cache: the job's miss rate is MPKI, also on the
    Opteron's 1 MB L2, where one bzip2 compressor alone (a quarter of the T2's 4 MB) misses sqrt(4) = 2 x MPKI."""
    for compressed, mpki in ((False, rman.MPKI), (True, 2 * rman.MPKI)):
        sc = scenario.load(None, {"channels": 1, "compressed": compressed, "datafiles_mb": [4.0]},
                           profile="opteron-2way", workload="rman")
        system = System(sc)
        rman.Workload(system, sc.params)
        assert system.memory.mpi == pytest.approx(mpki / 1000.0, rel=1e-12)


# --------------------------------------------------------------------------- SQL*Loader


def _instructions_of(job) -> float:
    return job.system.cpu.instructions_retired()


@pytest.mark.parametrize("direct", [False, True])
def test_sqlldr_instructions_redo_and_table_bytes_by_hand(direct):
    """Conventional: input MB x CONVENTIONAL_INSTRUCTIONS_PER_MB, a commit of REDO_PER_BYTE x the buffer per
    16 MB buffer, LGWR's instructions per log write; direct: input MB x DIRECT_INSTRUCTIONS_PER_MB and no redo.
    The table's device gets every input byte; the input is read from the other device in BUFFER pieces."""
    from workloads import sqlldr
    size = 40.0                  # MB: two whole buffers and a half one
    job, recs = _traced("sqlldr", {"data_size": f"{size:g} MB", "direct": direct,
                                   "database.redo_device": "internal"})
    lgwr = job.instance.lgwr
    buffers = math.ceil(size * MB / sqlldr.BUFFER)
    assert buffers == 3
    per_mb = sqlldr.DIRECT_INSTRUCTIONS_PER_MB if direct else sqlldr.CONVENTIONAL_INSTRUCTIONS_PER_MB
    lgwr_ipw = job.instance.spec.lgwr_instructions_per_write
    assert _instructions_of(job) == pytest.approx(size * per_mb + lgwr.writes * lgwr_ipw, rel=1e-9)
    assert lgwr.commits == (0 if direct else buffers)
    redo = 0.0 if direct else size * MB * sqlldr.REDO_PER_BYTE      # LGWR writes whole 512-byte redo blocks
    assert redo <= lgwr.bytes <= redo + 511 * lgwr.writes
    if not direct:   # written as the rows go in, in writes no larger than the 1 MB log buffer (it had been one
        #              17.6 MB write a round, whatever log_buffer said): a round's commit waits for its tail alone
        log = [n for kind, n, off in recs["internal"].log if kind == "write"]
        assert len(log) == lgwr.writes and max(log) <= job.instance.spec.log_buffer == MB
        assert lgwr.writes >= redo / (2 * lgwr.flush_at)
        sync = job.instance.waits.events["log file sync"]
        # a round's redo (17.6 MB) would take ~200 ms at the drive's 90 MB/s; the tail takes a small part of that
        assert sync.waits == buffers and sync.time / sync.waits < 0.1 * sqlldr.BUFFER * sqlldr.REDO_PER_BYTE / (90 * MB)
    # default placement: the table on the database storage (array), the input file beside it on 'internal'
    reads = [(off, n) for kind, n, off in recs["internal"].log if kind == "read"]
    assert reads == [(0.0, sqlldr.BUFFER), (sqlldr.BUFFER, sqlldr.BUFFER), (2 * sqlldr.BUFFER, 8 * MB)]
    table = [n for kind, n, off in recs["array"].log if kind == "write"]
    assert table == [sqlldr.BUFFER, sqlldr.BUFFER, 8 * MB]
    busy, sys = job.system.cpu.strand_time()
    if direct:                   # only the load runs: its kernel share is SYS_SHARE
        assert sys / busy == pytest.approx(sqlldr.SYS_SHARE, rel=1e-6)
    assert job.done_bytes == size * MB and job.progress() == 1.0


@pytest.mark.parametrize("log_buffer", ["1 MB", "64 MB"])
def test_sqlldr_redo_goes_out_as_rows_go_in_whatever_the_log_buffer(log_buffer):
    """LGWR's trigger is a third of the buffer or 1 MB, whichever is less: a 64 MB buffer writes the conventional
    load's redo in 1 MB writes as a 1 MB buffer does in a third of it, and the load is no slower for the larger
    buffer (with steps sized from the buffer, 64 MB had put a round's 17.6 MB at once, one write: +7%; review)."""
    size = 48.0
    job, recs = _traced("sqlldr", {"data_size": f"{size:g} MB", "database.redo_device": "internal",
                                   "database.log_buffer": log_buffer})
    log = [n for kind, n, off in recs["internal"].log if kind == "write"]
    lgwr = job.instance.lgwr
    assert max(log) <= 2 * lgwr.flush_at and lgwr.flush_at == min(MB, job.instance.spec.log_buffer / 3)
    assert len(log) >= size * MB * 1.1 / (2 * lgwr.flush_at)
    assert lgwr.commits == 3
    small, _ = _traced("sqlldr", {"data_size": f"{size:g} MB", "database.redo_device": "internal"})
    assert job.system.env.now <= small.system.env.now * 1.01


def test_sqlldr_parallel_direct_sessions_each_read_their_own_slice():
    """Three parallel direct sessions over 60 MB: each reads its 20 MB slice from the slice's start (16 MB then
    4 MB), so the input is read once, whole, and three sessions run at once; the load ends with the last of them."""
    from workloads import sqlldr
    job, recs = _traced("sqlldr", {"data_size": "60 MB", "direct": True, "parallel": True, "sessions": 3})
    reads = sorted((off, n) for kind, n, off in recs["internal"].log if kind == "read")
    share = 20 * MB
    assert reads == sorted([(i * share, sqlldr.BUFFER) for i in range(3)] +
                           [(i * share + sqlldr.BUFFER, 4 * MB) for i in range(3)])
    assert len(job.instance.sessions) == 3
    # done once every session has loaded its slice (not when the first ends: its reads queue first on the drive)
    assert job.done_bytes == pytest.approx(60 * MB) and job.progress() == 1.0
    assert job.system.env.now < 0.6 * _traced("sqlldr", {"data_size": "60 MB", "direct": True})[0].system.env.now


def test_sqlldr_places_its_input_off_the_table_device_and_both_must_fit():
    from sim.config import ConfigError
    from workloads import sqlldr
    p = sqlldr.Params
    names = ["array", "internal"]
    assert sqlldr.devices(p(), names) == ("internal", "array")
    assert sqlldr.devices(p(table_device="internal"), names) == ("array", "internal")
    assert sqlldr.devices(p(input_device="array"), names) == ("array", "array")
    assert sqlldr.devices(p(), ["array"]) == ("array", "array")
    assert sqlldr.idle(p(direct=True)) and "redo" in sqlldr.idle(p(direct=True)) and sqlldr.idle(p()) == {}
    cap = 448512.0               # MB, the T5220's array: the table there, the input on 'internal'
    scenario.load(None, {"data_size": f"{cap:g} MB"}, profile="t5220", workload="sqlldr")
    with pytest.raises(ConfigError, match="both the input file and the table"):   # 2 x size on one device
        scenario.load(None, {"data_size": f"{cap / 2 + 1:g} MB", "input_device": "array"}, profile="t5220",
                      workload="sqlldr")
    scenario.load(None, {"data_size": f"{cap / 2:g} MB", "input_device": "array"}, profile="t5220",
                  workload="sqlldr")
    with pytest.raises(ConfigError, match="holds the table") as given:
        scenario.load(None, {"data_size": f"{cap + 1:g} MB"}, profile="t5220", workload="sqlldr")
    assert "the default" not in str(given.value)
    with pytest.raises(ConfigError, match=r"\(the default: give a smaller data_size\)"):   # 725 GB
        scenario.load(None, {}, profile="t5220", workload="sqlldr")
    with pytest.raises(ConfigError, match="params.parallel"):
        scenario.load(None, {"parallel": True}, profile="t5220", workload="sqlldr")
    with pytest.raises(ConfigError, match="params.sessions"):
        scenario.load(None, {"sessions": 2, "direct": True}, profile="t5220", workload="sqlldr")
    one = scenario.load(None, {"sessions": 1, "data_size": "1 GB"}, profile="t5220", workload="sqlldr")
    assert one.params.sessions == 1
    with pytest.raises(ConfigError, match="params.data_size"):     # nothing to load: no progress to measure
        scenario.load(None, {"data_size": "0 MB"}, profile="t5220", workload="sqlldr")


def test_sqlldr_conventional_redo_steps_are_whole_triggers_a_round(monkeypatch):
    """A conventional round's redo goes in floor(redo / LGWR's trigger) equal steps, each at least the trigger
    (log_buffer 1 MB: a third of it, 349,525 B): 40 MB is rounds of 16, 16 and 8 MB, redo 17.6, 17.6 and 8.8 MB,
    so 52 + 52 + 26 = 130 steps (rounding up had made 133, each under the trigger)."""
    from sim.db.session import Session
    steps = []
    original = Session.redo

    def redo(self, redo_bytes):
        if redo_bytes > 0:
            steps.append(redo_bytes)
        return original(self, redo_bytes)
    monkeypatch.setattr(Session, "redo", redo)
    job, _ = _traced("sqlldr", {"data_size": "40 MB", "database.redo_device": "internal"})
    flush_at = job.instance.lgwr.flush_at
    assert flush_at == pytest.approx(MB / 3)
    assert len(steps) == 130 and min(steps) >= flush_at
    assert sum(steps) == pytest.approx(40 * MB * 1.1)


@pytest.mark.parametrize("direct", [False, True])
def test_sqlldr_sessions_write_the_table_with_write_slots_behind(monkeypatch, direct):
    """Each session keeps WRITE_SLOTS (2) table writes in flight at most, waited for as 'direct path write'
    (direct) or 'free buffer waits' (conventional, DBWR behind)."""
    from workloads import sqlldr
    made = []
    real = sqlldr.WriteBehind

    def spy(session, device, slots, event):
        made.append((slots, event))
        return real(session, device, slots, event)
    monkeypatch.setattr(sqlldr, "WriteBehind", spy)
    _traced("sqlldr", {"data_size": "20 MB", "direct": direct})
    assert made == [(2, "direct path write" if direct else "free buffer waits")]


# --------------------------------------------------------------------------- CTAS


@pytest.mark.parametrize("in_memory", [False, True])
def test_ctas_instructions_reads_and_writes_by_hand(in_memory):
    """Instructions = table MB x INSTRUCTIONS_PER_MB (+ CACHED_READ_INSTRUCTIONS_PER_MB from the cache) + a
    spawn per PX server; the source is read once from its device (nothing from a cached table), the new table
    written once to the target by direct path."""
    from sim.db import px
    from workloads import ctas
    size = 32.0
    job, recs = _traced("ctas", {"table_size": f"{size:g} MB", "dop": 4, "in_memory": in_memory,
                                 "source_device": "array", "target_device": "internal"})
    assert job.in_memory is in_memory and job.dop_used == 4 and job.instance.px.params["default_dop"] == 128
    started = job.instance.px.report()["px_servers_started"]
    assert started == 8          # two sets of 4
    per_mb = ctas.INSTRUCTIONS_PER_MB + (ctas.CACHED_READ_INSTRUCTIONS_PER_MB if in_memory else 0.0)
    assert _instructions_of(job) == pytest.approx(size * per_mb + started * px.SPAWN_INSTRUCTIONS, rel=1e-9)
    reads = sorted((off, n) for kind, n, off in recs["array"].log if kind == "read")
    if in_memory:                # the cache: no reads, no time waiting for one
        assert reads == [] and "direct path read" not in job.instance.waits.events
    else:                        # the table from the device's start, reads of at most 1 MB, each byte once
        assert [off for off, _n in reads] == list(np.cumsum([0.0] + [n for _o, n in reads[:-1]]))
        assert sum(n for _o, n in reads) == size * MB and max(n for _o, n in reads) <= MB   # granules: 630 KB
    written = [n for kind, n, off in recs["internal"].log if kind == "write"]
    assert sum(written) == pytest.approx(size * MB)
    assert job.instance.waits.events["direct path write"].waits == len(written)
    assert job.done_bytes == pytest.approx(size * MB) and job.progress() == 1.0
    assert job.report(1.0)["in_memory"] is in_memory and job.report(1.0)["dop"] == 4



def test_ctas_reads_its_read_size_and_hands_on_a_message_per_mb_or_granule():
    """read_size 64 KB: every read of the source is at most 64 KB, all 8 MB once. A producer hands its consumer
    what it has read once that reaches a message (1 MB) or its granule ends: here granules under 1 MB, so a
    granule per message, and the new table is written in fewer, larger pieces than the reads (not 64 KB ones)."""
    job, recs = _traced("ctas", {"table_size": "8 MB", "dop": 2, "read_size": "64 KB", "in_memory": False,
                                 "source_device": "array", "target_device": "internal"})
    reads = [n for kind, n, _off in recs["array"].log if kind == "read"]
    writes = [n for kind, n, _off in recs["internal"].log if kind == "write"]
    assert max(reads) == 64 * 1024 and sum(reads) == 8 * MB
    assert sum(writes) == pytest.approx(8 * MB) and 64 * 1024 < min(writes) and max(writes) <= MB
    assert len(writes) < len(reads) / 4



def test_ctas_producers_and_consumers_both_run_with_its_kernel_share():
    """SYS_SHARE (10%) of the scan's and of the writes' CPU is kernel time, SPAWN_SYS_SHARE (80%) of the PX
    servers' spawns: the strands' sys share is the instruction-weighted mean of the two (a producer without
    its kernel share would leave 2/3 of the 10%)."""
    from sim.db import px
    from workloads import ctas
    job, _ = _traced("ctas", {"table_size": "16 MB", "dop": 2, "in_memory": False})
    busy, sys = job.system.cpu.strand_time()
    work = 16 * ctas.INSTRUCTIONS_PER_MB
    spawns = job.instance.px.report()["px_servers_started"] * px.SPAWN_INSTRUCTIONS
    assert sys / busy == pytest.approx((ctas.SYS_SHARE * work + px.SPAWN_SYS_SHARE * spawns) / (work + spawns),
                                       rel=1e-6)


def test_a_mirrored_groups_controller_carries_every_write_twice():
    """CTAS from and to the T5440's array, an ASM normal-redundancy group behind one 400 MB/s HBA: the table is
    read once and written twice through the controller, so it moves 1.5x the host's MB/s, and at DOP 64 it is the
    bottleneck: busier than the drives, and the report says the I/Os queue there."""
    from sim.report import full
    r = _result("ctas", {"dop": 64}, profile="t5440")
    array = r.devices["array"]
    assert array["controller_util_pct"] == pytest.approx(100.0 * 1.5 * array["mb_per_s"] / 400.0, rel=0.01)
    assert array["util_pct"] < array["controller_util_pct"] <= 100.0
    assert "array: its busiest controller is 95% busy, more than the drives" in full(r)
    assert r.devices["internal"]["controller_util_pct"] == 0.0     # nothing crossed it


def test_ctas_refuses_an_empty_table_and_empty_reads():
    from sim.config import ConfigError
    for key in ("table_size", "read_size"):     # a read of 0 bytes would never finish a granule
        with pytest.raises(ConfigError, match=f"params.{key}"):
            scenario.load(None, {key: "0 MB"}, profile="t5220", workload="ctas")



def test_ctas_source_table_must_fit_the_source_device_not_the_target():
    """table_size is checked against the device it is read from: 500 GB fits the T5220's 'internal' (1,168 GB)
    and is refused on 'array' (438 GB), whichever device the new table goes to."""
    from sim.config import ConfigError
    scenario.load(None, {"table_size": "500 GB", "source_device": "internal", "target_device": "array"},
                  profile="t5220", workload="ctas")
    with pytest.raises(ConfigError, match=r"params\.table_size: .* capacity of device 'array'"):
        scenario.load(None, {"table_size": "500 GB", "source_device": "array", "target_device": "internal"},
                      profile="t5220", workload="ctas")


def test_ctas_reads_from_the_cache_under_auto_dop_only_when_the_table_fits():
    from workloads import ctas
    def in_memory(**sets):
        sc = scenario.load(None, {"table_size": "64 MB", **sets}, profile="t5220", workload="ctas")
        return ctas.Workload(System(sc), sc.params).in_memory
    auto = {"database.parallel.parallel_degree_policy": "auto"}
    assert in_memory(**auto) is True                                      # no db_cache: all cached
    assert in_memory(**auto, **{"database.db_cache": "64 MB"}) is True    # fits exactly
    assert in_memory(**auto, **{"database.db_cache": "63 MB"}) is False
    assert in_memory() is False                                           # manual DOP: no In-Memory PX
    assert in_memory(**{"database.parallel.parallel_degree_policy": "limited"}) is False
    assert in_memory(in_memory=True) is True and in_memory(**auto, in_memory=False) is False



def test_ctas_leaves_the_buffer_cache_idle_when_in_memory_is_given_either_way():
    """Only when in_memory is omitted does the buffer cache size decide the scan (auto DOP and a table that fits):
    given true or false, the setting is idle, and says the value given."""
    from workloads import ctas
    assert ctas.idle(ctas.Params()) == {}
    for given in (True, False):
        assert ctas.idle(ctas.Params(in_memory=given))["buffer_cache"].startswith(f"in_memory: {str(given).lower()}")


def test_a_table_scanned_in_memory_takes_its_memory():
    """In-Memory PX reads the table from the buffer cache, which holds it: without db_cache all of it. 300 GB on
    the T5220's 64 GB is out of memory (it had run, reading 300 GB from nowhere); the direct-path scan of the same
    table maps no buffer cache and runs."""
    from sim.run import run
    sets = {"table_size": "300 GB", "run.max_time": "1 s"}
    auto = {"database.parallel.parallel_degree_policy": "auto"}
    cached = run(scenario.load(None, {**sets, **auto}, profile="t5220", workload="ctas"))
    assert cached.status == "out_of_memory" and "exceed physical memory" in cached.message
    scanned = run(scenario.load(None, sets, profile="t5220", workload="ctas"))
    assert scanned.status == "timeout" and scanned.extra["in_memory"] is False


def test_auto_dop_is_the_serial_estimate_over_the_threshold():
    """Auto DOP: the optimizer's serial estimate (scan bytes at 200 MB/s + instructions at one strand's rate)
    over parallel_min_time_threshold, rounded up; serial below the threshold."""
    from workloads import batch, ctas
    size = 256.0
    def dop(threshold):
        job, _ = _traced("ctas", {"table_size": f"{size:g} MB", "in_memory": False,
                                  "database.parallel.parallel_degree_policy": "auto",
                                  "database.parallel.parallel_min_time_threshold": threshold})
        return job, job.dop_used
    job, d = dop("0.5 s")
    serial = size * MB / batch.CALIBRATED_IO_RATE + size * ctas.INSTRUCTIONS_PER_MB / job.strand_rate()
    assert batch.CALIBRATED_IO_RATE == 200 * MB and serial > 1.28
    assert d == math.ceil(serial / 0.5) and d > 2
    assert dop(f"{serial * 1.01} s")[1] == 1
    # the strand rate is what one process alone on the machine gets: measured with a burst on a fresh system
    # (on a T2 core a second strand has a pipeline of its own; on a Xeon it shares the core's)
    for profile in ("t5220", "xeon-e5-2643v3-2s"):
        sc = scenario.load(None, {"table_size": "8 MB"}, profile=profile, workload="ctas")
        system = System(sc)
        statement = ctas.Workload(system, sc.params)
        system.env.run(until=system.instance.new_session().cpu(1e9))
        assert statement.strand_rate() == pytest.approx(1e9 / system.env.now, rel=1e-9)
    # within what parallel_servers_target lets one statement's two sets hold
    capped, _ = _traced("ctas", {"table_size": f"{size:g} MB", "in_memory": False,
                                 "database.parallel.parallel_degree_policy": "auto",
                                 "database.parallel.parallel_min_time_threshold": "0.05 s",
                                 "database.parallel.parallel_servers_target": 10})
    assert capped.dop_used == 5 and capped.instance.px.report()["px_peak_busy"] == 10
    assert capped.instance.px.busy == 0          # both sets released at the end


def test_create_index_auto_dop_counts_the_rows_cpu_in_its_serial_estimate():
    from workloads import batch, create_index as ci
    size = 16.0
    job, _ = _traced("create_index", {"table_size": f"{size:g} MB", "database.parallel.parallel_degree_policy": "auto",
                                      "database.parallel.parallel_min_time_threshold": "0.5 s"})
    serial = size * MB / batch.CALIBRATED_IO_RATE + size * MB / ci.ROW_BYTES * ci.INSTRUCTIONS_PER_ROW / job.strand_rate()
    assert serial > 10 and job.dop_used == math.ceil(serial / 0.5)


def test_a_statement_at_dop_1_runs_serially_with_no_servers():
    for workload in ("ctas", "create_index"):
        job, _ = _traced(workload, {"table_size": "8 MB", "dop": 1})
        r = job.report(1.0)
        assert job.dop_used == r["dop"] == 1
        assert r["px_servers_started"] == 0 and r["px_statements"] == 1 and job.instance.px.busy == 0
        assert len(job.instance.sessions) == 1     # one process doing both halves
        assert job.done_bytes == 8 * MB


@pytest.mark.parametrize("workload", ["ctas", "create_index"])
def test_a_serial_statement_does_its_halves_in_turn(workload):
    """At DOP 1 one process reads and then processes what it read, so its DB time (CPU + waits) is at most the
    elapsed time: a producer and a consumer overlapping the scan with the writes made 14.2 s of DB time in a
    CTAS of 8.9 s."""
    r = _result(workload, {"table_size": "32 MB", "dop": 1})
    db_time = sum(ev["time_s"] for ev in r.top_events)
    assert r.extra["dop"] == 1 and len(r.top_events) < 5     # every event counted
    assert db_time <= r.elapsed * (1 + 1e-9)


# --------------------------------------------------------------------------- CREATE INDEX


def test_create_index_instructions_reads_and_index_writes_by_hand():
    """Rows = table / ROW_BYTES; instructions = rows x INSTRUCTIONS_PER_ROW + a spawn per server; the table is
    read in read_size blocks, once; the index (rows x KEY_BYTES) is written in write_size pieces by the
    consumers, each finishing its own share."""
    from sim.db import px
    from workloads import create_index as ci
    size = 14.0
    job, recs = _traced("create_index", {"table_size": f"{size:g} MB", "dop": 2, "read_size": "8 KB",
                                         "write_size": "64 KB", "table_device": "array",
                                         "index_device": "internal"})
    rows = size * MB / ci.ROW_BYTES
    assert job.rows == pytest.approx(rows)
    started = job.instance.px.report()["px_servers_started"]
    assert started == 4 and job.dop_used == 2
    assert _instructions_of(job) == pytest.approx(rows * ci.INSTRUCTIONS_PER_ROW + started * px.SPAWN_INSTRUCTIONS,
                                                  rel=1e-9)
    reads = sorted((off, n) for kind, n, off in recs["array"].log if kind == "read")
    assert reads == [(i * 8192.0, 8192.0) for i in range(int(size * MB / 8192))]   # from the start, each once
    writes = [n for kind, n, off in recs["internal"].log if kind == "write"]
    assert sum(writes) == pytest.approx(rows * ci.KEY_BYTES)
    assert max(writes) == 64 * 1024.0 and len(writes) >= math.ceil(rows * ci.KEY_BYTES / (64 * 1024))
    assert len(writes) <= math.ceil(rows * ci.KEY_BYTES / (64 * 1024)) + 1      # one partial piece a consumer
    assert job.instance.waits.events["direct path write"].waits == len(writes)
    busy, sys = job.system.cpu.strand_time()
    spawn = started * px.SPAWN_INSTRUCTIONS / (rows * ci.INSTRUCTIONS_PER_ROW + started * px.SPAWN_INSTRUCTIONS)
    assert sys / busy > ci.SYS_SHARE * 0.9 and sys / busy < ci.SYS_SHARE + spawn
    assert job.done_bytes == pytest.approx(size * MB) and job.progress() == 1.0


def test_create_index_table_must_fit_the_table_device_not_the_index_device():
    """table_size is checked against the table's tablespace device: on the 2-way Opteron a 100 GB table fits
    'external' (238 GB) with the index on 'local' (34 GB), and is refused on 'local'."""
    from sim.config import ConfigError
    scenario.load(None, {"table_size": "100 GB", "table_device": "external", "index_device": "local"},
                  profile="opteron-2way", workload="create_index")
    with pytest.raises(ConfigError, match="capacity of device 'local'"):
        scenario.load(None, {"table_size": "100 GB", "table_device": "local", "index_device": "external"},
                      profile="opteron-2way", workload="create_index")


# --------------------------------------------------------------------------- what every batch job shares


def test_create_index_refuses_an_empty_table_and_empty_index_writes():
    from sim.config import ConfigError
    for key in ("table_size", "write_size"):    # a write of 0 bytes would never finish the index
        with pytest.raises(ConfigError, match=f"params.{key}"):
            scenario.load(None, {key: "0 MB"}, profile="t5220", workload="create_index")


def test_whole_block_sizes_are_refused_with_the_nearest_whole_size():
    from sim.config import ConfigError
    for workload, key, value, hint in (("create_index", "write_size", "1001 KB", "e.g. 1000 KB"),
                                       ("create_index", "write_size", "4 KB", "e.g. 8 KB"),
                                       ("ctas", "read_size", "20 KB", "e.g. 16 KB"),
                                       ("ctas", "read_size", "28 KB", "e.g. 32 KB")):
        with pytest.raises(ConfigError, match=hint):
            scenario.load(None, {key: value}, profile="t5220", workload=workload)
    scenario.load(None, {"read_size": "16 KB"}, profile="t5220", workload="ctas")


def test_a_batch_jobs_devices_default_to_the_profiles_first_and_a_named_one_must_exist():
    from sim.config import ConfigError
    from workloads import batch, rman
    names = ["array", "internal"]
    assert batch.device_of(rman.Params(channels=1), "backup_device", names) == "array"
    assert batch.device_of(rman.Params(channels=1, backup_device="internal"), "backup_device", names) == "internal"
    with pytest.raises(ConfigError, match="one of the profile's devices: array, internal"):
        scenario.load(None, {"channels": 1, "backup_device": "tape"}, profile="t5220", workload="rman")


def test_batch_progress_is_the_share_done_capped_at_one():
    sc = scenario.load(None, {"channels": 1, "datafiles_mb": [4.0]}, profile="t5220", workload="rman")
    job = rman.Workload(System(sc), sc.params)
    assert job.total_bytes == 4 * MB and job.progress() == 0.0
    job.done_bytes = MB
    assert job.progress() == 0.25
    job.done_bytes = 5 * MB
    assert job.progress() == 1.0


def test_a_batch_job_reports_its_memory_account_and_the_account_adds_up_to_ram():
    """The memory account is the system's, reported for every workload (it was tpcc's alone): an In-Memory PX
    scan of a 2 GB table maps all of it as the buffer cache, a direct-path scan nothing of it; either way the kernel, the
    segments and the processes are what is committed, and committed + free reserve + page cache is RAM."""
    sets = {"table_size": "2 GB", "run.max_time": "0.5 s"}
    cached = run(scenario.load(None, {**sets, "in_memory": True}, profile="t5220", workload="ctas"))
    scanned = run(scenario.load(None, {**sets, "in_memory": False}, profile="t5220", workload="ctas"))
    for r in (cached, scanned):
        m = r.extra["memory"]
        parts = m["kernel_mb"] + sum(v for k, v in m.items() if k.startswith(("sga_", "oracle_")))
        assert m["committed_mb"] == pytest.approx(parts)
        assert m["committed_mb"] + m["free_reserve_mb"] + m["page_cache_mb"] == pytest.approx(m["ram_mb"])
    assert cached.extra["memory"]["sga_buffer_cache_mb"] == pytest.approx(2048.0)
    assert scanned.extra["memory"]["sga_buffer_cache_mb"] == 0.0
    assert cached.extra["memory"]["page_cache_mb"] == pytest.approx(scanned.extra["memory"]["page_cache_mb"] - 2048.0)
