"""Batch jobs by hand: what each job reads, writes and computes, counted exactly against its own parameters
(RMAN channels and pieces, SQL*Loader buffers and commits, CTAS and CREATE INDEX bytes and instructions),
and the order it does its work in. Small runs on the T5220, a few simulated seconds each."""

from __future__ import annotations

import math

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

    def submit(self, kind, nbytes, offset=None):
        self.log.append((kind, nbytes, offset))
        return self._submit(kind, nbytes, offset)


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
    assert max(rman.DATAFILES_MB) == rman.DATAFILES_MB[13] == 13175.0
    assert sorted(rman.DATAFILES_MB, reverse=True)[:4] == [13175.0, 7000.0, 6300.0, 5180.0]


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


@pytest.mark.parametrize("section", [None, "3 MB"])
def test_rman_reads_every_datafile_byte_once_where_the_files_lie_one_after_another(section):
    """The datafiles lie one after another on their device; the channels read each byte of each file once,
    in READ_SIZE buffers from the file's (or section's) start, and write every buffer to the backup device."""
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
    assert len(reads) == sum(math.ceil(s * MB / rman.READ_SIZE) for s in sizes) if section is None else True
    assert job.file_start == [0.0, 4.0, 6.5]
    backup = [n for kind, n, off in recs["internal"].log if kind == "write" and n != rman.CONTROL_FILE_WRITE]
    assert sum(backup) == pytest.approx(sum(sizes) * MB * rman.COMPRESSION_RATIO)
    assert len(backup) == len(reads)
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
    job, recs = _traced("rman", {**base, "channels": 1, "datafiles_mb": [2.0, 6.0, 3.0]})
    starts = [off for kind, n, off in recs["array"].log if kind == "read" and off in (0.0, 2 * MB, 8 * MB)]
    assert starts == [2 * MB, 8 * MB, 0.0]     # file 2 (6 MB), file 3 (3 MB), file 1 (2 MB)
    assert rman.work_items((2.0, 6.0, 3.0, 6.0), None) == [(1, 0.0, 6.0), (3, 0.0, 6.0), (2, 0.0, 3.0),
                                                             (0, 0.0, 2.0)]
    assert rman.work_items((2.5, 1.0), 1.0) == [(0, 0.0, 1.0), (0, 1.0, 1.0), (0, 2.0, 0.5), (1, 0.0, 1.0)]


def test_rman_pieces_queue_on_the_cf_enqueue_one_channel_at_a_time():
    """Each piece is one CF enqueue get and CF_WRITES_PER_PIECE synchronous writes to CONTROL_FILE_COPIES
    copies of CONTROL_FILE_WRITE bytes: the control-file device gets exactly that."""
    params = {"channels": 4, "datafiles_mb": [1.0] * 4, "section_size": "0.5 MB", "compressed": False,
              "datafile_device": "array", "backup_device": "array", "database.control_file_device": "internal"}
    job, recs = _traced("rman", params)
    assert job.pieces == 8
    cf = [n for kind, n, off in recs["internal"].log]
    assert cf == [rman.CONTROL_FILE_WRITE] * (8 * rman.CF_WRITES_PER_PIECE * rman.CONTROL_FILE_COPIES)
    waits = job.instance.waits.events
    assert waits["enq: CF - contention"].waits == 8
    assert waits["control file parallel write"].waits == 8 * rman.CF_WRITES_PER_PIECE
    assert waits["enq: CF - contention"].time > 0     # four channels start at once: three wait their turn
