"""Hardware profiles: what a server is, as spec sheets describe it.

A profile knows nothing of Oracle or of workloads: cores, strands, pipelines, clock,
caches, memory (size, latency, bandwidth, NUMA), swap and storage devices. Values come from
`hardware_profiles/*.yaml`, each with its source in a comment there.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from sim.config import (REQUIRED, OltpsimError, Source, build, declared, get_path, param, read_yaml, suggest,
                        what_it_is)
from sim.units import format_quantity


@dataclass(frozen=True, kw_only=True)
class CpuSpec:
    model: str = param("processor model, as the vendor names it")
    isa: Literal["sparcv9", "x86_64", "ia64"] = param("instruction set: TPC-C's instructions per logical read depend on it "
                                                        "(workloads/tpcc.py PATH_LENGTH, fitted per kit); the "
                                                        "batch jobs and SLOB count the same on every one")
    # the upper bounds are far past any server built (64 sockets in a UE10000, 8 strands in a T2): a count
    # beyond them is a slip, and a run of 100,000 cores would build a strand per CPU before it could fail
    sockets: int = param("processor sockets populated", minimum=1, maximum=256)
    cores_per_socket: int = param("cores per socket", minimum=1, maximum=1024)
    strands_per_core: int = param("hardware threads per core (the OS sees each as a CPU)", minimum=1, maximum=64)
    pipelines_per_core: int = param("issue pipelines per core; strands are split evenly among them", minimum=1)
    clock: float = param("core clock (10 MHz to 10 GHz: the servers here run 250 MHz to 3.7 GHz; a clock "
                         "outside is a unit slip, '1.4 Hz' for '1.4 GHz')", kind="frequency", positive=True,
                         minimum=10e6, maximum=10e9)
    cpi_issue: float = param("cycles per instruction while a strand issues without a memory stall (0.1 to 100: "
                             "a ten-wide core to one an instruction takes 100 cycles on)", positive=True,
                             minimum=0.1, maximum=100.0)
    llc_size: float = param("last-level cache per socket", kind="size", positive=True)
    mlp: float = param("memory-level parallelism: misses whose stalls overlap (out-of-order cores; at most 64, "
                       "past any core's miss buffers)", default=1.0, minimum=1.0, maximum=64.0)

    def check(self, src: Source) -> None:
        if self.strands_per_core % self.pipelines_per_core:
            raise src.at("strands_per_core").bad(
                self.strands_per_core,
                f"a multiple of pipelines_per_core ({self.pipelines_per_core}), so that each pipeline serves "
                "the same number of strands")

    @property
    def cores(self) -> int:
        return self.sockets * self.cores_per_socket

    @property
    def strands(self) -> int:
        """cpu_count: every strand is a CPU to the OS and to Oracle."""
        return self.cores * self.strands_per_core

    @property
    def strands_per_pipeline(self) -> int:
        return self.strands_per_core // self.pipelines_per_core

    @property
    def peak_ips(self) -> float:
        """Instructions per second with every pipeline issuing every cycle it can."""
        return self.cores * self.pipelines_per_core * self.clock / self.cpi_issue


@dataclass(frozen=True, kw_only=True)
class MemorySpec:
    size: float = param("physical memory", kind="size", positive=True)
    # DRAM answers in 50-600 ns on the servers here; a latency outside 1 ns - 10 us is a unit slip ('130 us')
    latency: float = param("unloaded load-to-use latency of local memory (1 ns to 10 us)", kind="time",
                           positive=True, minimum=1e-9, maximum=10e-6)
    remote_latency: float | None = param("unloaded latency of another socket's memory (NUMA; 1 ns to 10 us)",
                                         kind="time", positive=True, default=None, minimum=1e-9, maximum=10e-6)
    bandwidth_per_socket: float = param("sustainable memory bandwidth per socket", kind="bandwidth", positive=True)
    swap: float = param("swap space", kind="size", default=0.0, minimum=0.0)
    kernel: float = param("memory the kernel keeps for itself", kind="size", default=0.0, minimum=0.0)
    kernel_64: float | None = param("the same with a 64-bit kernel, where the OS offers both (omit: as kernel)",
                                    kind="size", default=None, minimum=0.0)
    swap_device: str | None = param("storage device (disk group) holding the swap area (omit: the last one)",
                                    default=None)
    line_size: float = param("bytes moved per last-level cache miss (the LLC line)", kind="size", default="64 B",
                             positive=True)
    page_size: float = param("base page size of the MMU as the OS uses it (the unit of the OS page cache)",
                             kind="size", default="4 KB", positive=True)
    controllers: int | None = param("memory controllers or front-side buses the traffic queues at, each with an "
                                    "equal share of the total bandwidth (omit: one per socket)", default=None,
                                    minimum=1)

    def check(self, src: Source) -> None:
        for key in ("kernel", "kernel_64"):   # (it ran, and every run ended out of memory naming other settings)
            value = getattr(self, key)
            if value is not None and value >= self.size:   # (either may be the one changed: the message names both)
                raise src.at(key).bad(format_quantity(value, "size"), f"less than memory.size "
                                      f"({format_quantity(self.size, 'size')}): what the kernel keeps for itself "
                                      "(or a memory.size larger than it)")
        if self.remote_latency is not None and self.remote_latency < self.latency:
            raise src.at("remote_latency").bad(format_quantity(self.remote_latency, "time"), f"at least latency "
                                               f"({format_quantity(self.latency, 'time')}): another socket's memory "
                                               "is no nearer than the socket's own")
        pages = int(self.page_size)
        if pages != self.page_size or pages & (pages - 1):
            raise src.at("page_size").bad(format_quantity(self.page_size, "size"),
                                          "a power of two (4 KB, 8 KB, 2 MB, ...), as an MMU's pages are")
        if self.line_size > self.page_size:   # a 1 GB line made every strand's miss move a gigabyte
            raise src.at("line_size").bad(format_quantity(self.line_size, "size"), f"at most page_size "
                                          f"({format_quantity(self.page_size, 'size')}); a cache line is 32-128 B")

    def average_latency(self, sockets: int) -> float:
        """Latency seen by a strand when memory is interleaved evenly over the sockets."""
        if sockets == 1 or self.remote_latency is None:
            return self.latency
        return (self.latency + (sockets - 1) * self.remote_latency) / sockets


@dataclass(frozen=True, kw_only=True)
class DiskSpec:
    model: str = param("drive model")
    rpm: float = param("spindle speed", kind="rotation", positive=True)
    avg_seek: float = param("average seek time (random, one third of full stroke); with track_seek and full_seek "
                            "the curve sets every seek and avg_seek is the data sheet's figure beside it",
                            kind="time", minimum=0.0)
    media_rate: float = param("sustained media transfer rate", kind="bandwidth", positive=True)
    capacity: float = param("formatted capacity", kind="size", positive=True)
    write_cache: bool = param("write-back cache acknowledges writes before they reach the platter",
                              default=False)
    cache_segments: int = param("read-ahead cache segments: sequential read streams the drive can prefetch "
                                "for at once (0: no read-ahead modelled)", default=0, minimum=0)
    track_seek: float | None = param("single-track seek; with full_seek it gives the seek-distance curve "
                                     "(omit both: every random I/O pays avg_seek)", kind="time", default=None,
                                     minimum=0.0)
    full_seek: float | None = param("full-stroke seek", kind="time", default=None, positive=True)

    def check(self, src: Source) -> None:
        if (self.track_seek is None) != (self.full_seek is None):
            missing = "full_seek" if self.full_seek is None else "track_seek"
            raise src.at(missing).error("missing key: track_seek and full_seek go together (the seek curve)")
        if self.full_seek is None:
            return
        if self.full_seek <= self.track_seek:
            raise src.at("full_seek").bad(format_quantity(self.full_seek, "time"),
                                          f"more than track_seek ({format_quantity(self.track_seek, 'time')})")
        # the curve sets every seek: an average outside its range belongs to another drive (a what-if that
        # changed avg_seek alone would change nothing)
        if not self.track_seek < self.avg_seek < self.full_seek:
            raise src.at("avg_seek").bad(
                format_quantity(self.avg_seek, "time"),
                f"between track_seek ({format_quantity(self.track_seek, 'time')}) and full_seek "
                f"({format_quantity(self.full_seek, 'time')}), the seek curve that sets every seek: the three "
                "describe one drive, so for a slower or faster one change the curve (and avg_seek with it)")


@dataclass(frozen=True, kw_only=True)
class ControllerSpec:
    bandwidth: float = param("bandwidth cap of the controller / bus", kind="bandwidth", positive=True)
    overhead: float = param("fixed time per I/O in the controller", kind="time", default=0.0, minimum=0.0)


@dataclass(frozen=True, kw_only=True)
class DiskGroupSpec:
    count: int = param("number of identical drives", minimum=1)
    disk: DiskSpec = param("the drive")
    controllers: int = param("controllers the drives are spread over", default=1, minimum=1)
    controller: ControllerSpec | None = param("each controller", default=None)
    queue: Literal["fcfs", "elevator"] = param("order in which a drive serves its queue: arrival order, or "
                                               "the elevator (the driver's disksort / tagged queueing)",
                                               default="fcfs")
    layout: Literal["stripe", "mirror", "raid5", "normal"] = param(
        "how the volume manager lays the group out (normal: ASM normal redundancy, striped with every "
        "extent mirrored on a partner drive)", default="stripe")
    stripe_unit: float = param("stripe unit (ASM: allocation unit)", kind="size", default="1 MB", positive=True)
    volume_size: float | None = param("size of the volume built on the group (omit: all of it); a small volume "
                                      "keeps the heads on a band of each drive", kind="size", default=None,
                                      positive=True)
    write_cache_size: float | None = param("the array controller's battery-backed write-back cache: it acknowledges "
                                           "writes while it has room and destages them to the drives at their speed "
                                           "(omit: no controller cache; writes cost what the drives' write_cache "
                                           "says)", kind="size", default=None, positive=True)

    def check(self, src: Source) -> None:
        if self.layout == "raid5" and self.count < 2:
            # (the volume would otherwise fail at its first I/O: each row's parity needs a drive
            # besides the row's data)
            raise src.at("count").bad(self.count, "at least 2 drives: RAID5 keeps each stripe row's "
                                      "parity on a drive other than the row's data")
        if self.layout == "normal" and self.count < 2:
            raise src.at("count").bad(self.count, "at least 2 drives: ASM normal redundancy mirrors each "
                                      "extent on another failure group")
        if self.stripe_unit > self.disk.capacity:   # (one unit would not fit a drive)
            raise src.at("stripe_unit").bad(format_quantity(self.stripe_unit, "size"), f"at most a drive's capacity "
                                            f"({format_quantity(self.disk.capacity, 'size')})")
        if self.controllers > self.count:   # drive i is on controller i mod controllers: the rest would carry nothing
            raise src.at("controllers").bad(self.controllers, f"at most count ({self.count}): each drive is on one "
                                            "controller, so more would carry nothing")
        if self.volume_size is not None and self.volume_size > self.usable_capacity:
            # (the volume model would otherwise quietly shrink the volume to what the drives hold)
            raise src.at("volume_size").bad(
                format_quantity(self.volume_size, "size"),
                f"at most the group's usable capacity, {format_quantity(self.usable_capacity, 'size')} "
                f"({self.count} x {format_quantity(self.disk.capacity, 'size')} drives, layout {self.layout}: "
                f"{src.at('count').path}, {src.at('disk').at('capacity').path}, {src.at('layout').path})")

    @property
    def usable_capacity(self) -> float:
        """What the volume can hold: the drives' capacity less parity or mirror copies (data_disks)."""
        return data_disks(self.layout, self.count) * self.disk.capacity


def data_disks(layout: str, count: int) -> float:
    """Drives' worth of data a group of `count` drives holds in `layout`: all of them striped, one
    less for raid5's parity (one, at least), one for a mirror, half for ASM normal redundancy.
    The one rule for a group's capacity: DiskGroupSpec.usable_capacity and sim/hardware/storage.py's
    Volume both count with it."""
    return {"raid5": max(1, count - 1), "mirror": 1, "normal": count / 2}.get(layout, count)


@dataclass(frozen=True, kw_only=True)
class FlashArraySpec:
    bricks: int = param("building blocks (X-Bricks): each adds its own IOPS and bandwidth", minimum=1)
    iops_per_brick: float = param("8 KB random-read IOPS ceiling of one brick", kind="rate", positive=True)
    bandwidth_per_brick: float = param("bandwidth ceiling of one brick", kind="bandwidth", positive=True)
    service_time: float = param("mean array service time of a small read at light load", kind="time",
                                positive=True)
    service_floor: float = param("shortest service time: the fixed part of every I/O, the rest being an "
                                 "exponential spread (omit: 0, all exponential)", kind="time", default=0.0,
                                 minimum=0.0)
    fabric_latency: float = param("round trip over the network fabric (FC/iSCSI)", kind="time", minimum=0.0)
    fabric_bandwidth: float = param("host's fabric bandwidth (all ports)", kind="bandwidth", positive=True)
    capacity: float = param("usable capacity", kind="size", positive=True)

    def check(self, src: Source) -> None:
        if self.service_floor >= self.service_time:
            raise src.at("service_floor").bad(format_quantity(self.service_floor, "time"), "less than service_time "
                                              f"({format_quantity(self.service_time, 'time')}): the floor is the "
                                              "fixed part of a mean service time")


@dataclass(frozen=True, kw_only=True)
class StorageSpec:
    disk_groups: dict[str, DiskGroupSpec] = param("named groups of identical drives; the first device listed "
                                                  "(disk groups, then flash arrays) is the one a database uses "
                                                  "when a scenario names none: list the server's database "
                                                  "storage first", default={})
    flash_arrays: dict[str, FlashArraySpec] = param("named all-flash arrays", default={})

    def check(self, src: Source) -> None:
        if not self.disk_groups and not self.flash_arrays:
            # reported at storage itself: the two keys together are what is missing, not one of them
            raise src.error("no disk group and no flash array; expected at least one disk group (disk_groups) or "
                            "flash array (flash_arrays): a database needs storage")

    def device_names(self) -> list[str]:
        return [*self.disk_groups, *self.flash_arrays]

    def capacity(self, name: str) -> float:
        """What device `name` holds: a flash array's usable capacity; a disk group's volume_size,
        else all its drives hold (DiskGroupSpec.usable_capacity), as the simulated Volume gets."""
        if name in self.flash_arrays:
            return self.flash_arrays[name].capacity
        group = self.disk_groups[name]
        return group.volume_size or group.usable_capacity

    def capacity_keys(self, name: str) -> str:
        """The profile keys that set capacity(name), for messages (as --set hardware.* names them)."""
        if name in self.flash_arrays:
            return f"hardware.storage.flash_arrays.{name}.capacity"
        group = f"hardware.storage.disk_groups.{name}"
        if self.disk_groups[name].volume_size:
            return f"{group}.volume_size"
        return f"{group}.count, {group}.disk.capacity, {group}.layout"


@dataclass(frozen=True, kw_only=True)
class HardwareProfile:
    name: str = param("short name, as used on the command line")
    description: str = param("one line: the machine, as its vendor names it")
    os: Literal["solaris", "linux", "hpux"] = param("operating system family")
    cpu: CpuSpec = param("processors")
    memory: MemorySpec = param("memory")
    storage: StorageSpec = param("storage devices")

    def check(self, src: Source) -> None:
        devices = self.storage.device_names()
        if self.memory.swap_device is not None and self.memory.swap_device not in devices:
            raise src.at("memory").at("swap_device").bad(self.memory.swap_device,
                                                         "one of the storage devices: " + ", ".join(devices))

    @property
    def cpu_count(self) -> int:
        return self.cpu.strands

    def derived(self) -> dict[str, float]:
        """Figures that follow from the spec, as `oltpsim profile show` prints them."""
        lat = self.memory.average_latency(self.cpu.sockets)
        return {
            "cpu_count": self.cpu.strands,
            "cores": self.cpu.cores,
            "pipelines": self.cpu.cores * self.cpu.pipelines_per_core,
            "strands_per_pipeline": self.cpu.strands_per_pipeline,
            "peak_instruction_rate": self.cpu.peak_ips,
            "memory_latency_cycles": lat * self.cpu.clock,
            "memory_bandwidth": self.memory.bandwidth_per_socket * self.cpu.sockets,
        }


# ---------------------------------------------------------------- finding profiles by name

def _builtin_dir() -> Path:
    return Path(str(resources.files("hardware_profiles")))


def profile_names() -> list[str]:
    return sorted(p.stem for p in _builtin_dir().glob("*.yaml"))


def load_profile(name_or_path: str | Path, changes: dict | None = None,
                 src: Source | None = None) -> HardwareProfile:
    """Load a built-in profile by name, or any profile YAML by path.

    `changes` is a what-if over the profile's own keys, as a scenario's `hardware:` section
    gives it (``{"memory": {"size": "10 GB"}}``: the 4 GB board added); a bad value in it is
    reported at `src`, the scenario's key path, not in the profile file.
    """
    path = _profile_path(name_or_path)
    stat = path.stat()
    if not changes:
        # a copy: the parse is shared, and a notebook that edits a profile's storage mapping in place would
        # otherwise change every later load of it in the process
        return copy.deepcopy(_load(str(path), stat.st_mtime_ns, stat.st_size))
    src = src or Source("<hardware changes>")
    base = read_yaml(path)
    _refuse_unknown_devices(base, changes, src)
    merged = _merge(base, changes, src)
    return build(HardwareProfile, merged, src)


_DEVICES = {"disk_groups": (DiskGroupSpec, "disk group"), "flash_arrays": (FlashArraySpec, "flash array")}


def _refuse_unknown_devices(base: dict, changes: Any, src: Source) -> None:
    """A what-if may add a storage device, given whole; a name the profile lacks given in part is
    refused as unknown (a misspelt group was otherwise refused at a key of its drive nobody gave)."""
    storage = changes.get("storage") if isinstance(changes, dict) else None
    if not isinstance(storage, dict):
        return
    have = base.get("storage") if isinstance(base.get("storage"), dict) else {}
    for section, (spec, what) in _DEVICES.items():
        if not isinstance(storage.get(section), dict):
            continue   # (_merge and build() refuse what is not a mapping)
        known = [str(k) for k in have.get(section) or {}]
        for name, value in storage[section].items():
            if str(name) in known:
                continue
            missing = [key for key, default, _m in declared(spec) if default is REQUIRED and not get_path(value, key)[0]]
            if not missing:
                continue
            hint = suggest(str(name), known) if known else " (the profile has none)"
            listed = f"one of the profile's {what}s: {', '.join(known)}, or " if known else ""
            raise src.at("storage").at(section).at(str(name)).error(
                f"unknown {what} {str(name)!r}{hint}; expected {listed}a new {what} given whole (this one "
                f"lacks {', '.join(missing)})")


def _merge(base: dict, changes: Any, src: Source, top: bool = True) -> dict:
    """The profile mapping with `changes` laid over it key by key (build() then refuses unknown keys)."""
    if not isinstance(changes, dict):
        raise src.bad(changes, "a mapping of profile keys to new values, e.g. {memory: {size: 10 GB}}")
    if not changes and not top:   # (the whole `hardware:` section empty is simply no what-if)
        raise src.bad(changes, "a mapping of some of its keys to new values: a what-if lays values over the "
                      "profile's and cannot remove any, so an empty mapping would change nothing (its keys: "
                      + ", ".join(map(str, base)) + ")")
    out = dict(base)
    for key, value in changes.items():
        inner = base.get(key)
        out[key] = _merge(inner, value, src.at(str(key)), top=False) if isinstance(inner, dict) else value
    return out


def profile_file(name_or_path: str | Path) -> Path:
    """The YAML file a built-in profile name or a path names (an unknown name is refused)."""
    return _profile_path(name_or_path)


def _profile_path(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if path.suffix.lower() not in (".yaml", ".yml"):
        path = _builtin_dir() / f"{name_or_path}.yaml"
        if not path.exists():
            known = profile_names()
            raise OltpsimError(f"unknown hardware profile {str(name_or_path)!r}{suggest(str(name_or_path), known)};"
                               f" known profiles: {', '.join(known)}")
    return path


@functools.lru_cache(maxsize=64)
def _load(path: str, _mtime_ns: int, _size: int) -> HardwareProfile:
    # Profiles are frozen, so a sweep of thousands of points may share one parse; the file's
    # mtime and size in the key make an edited profile load afresh.
    data = read_yaml(Path(path))
    if not isinstance(data, dict):   # (build() reads an empty section as all defaults: not a whole profile file)
        raise OltpsimError(f"{path}: got {what_it_is(data)}; expected a hardware profile: a mapping with name, "
                           "description, os, cpu, memory, storage, as the built-in ones in hardware_profiles/ are")
    return build(HardwareProfile, data, Source(path))
