"""Build one simulated server: hardware, OS and database instance, ready for a workload."""

from __future__ import annotations

import numpy as np

from sim.db.instance import Instance, data_device, redo_device
from sim.engine import Environment
from sim.hardware.cpu import Cpu
from sim.hardware.flash import FlashArray
from sim.hardware.memory import MemorySystem
from sim.hardware.storage import Controller, Disk, Volume
from sim.os.dispatcher import Dispatcher
from sim.os.filesystem import PATHS, FileSystem, LogFile
from sim.os.vm import VirtualMemory
from sim.randomness import rng_stream
from sim.scenario import Scenario


class System:
    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        self.profile = profile = scenario.profile
        self.seed = scenario.spec.run.seed
        self.env = env = Environment()
        # hardware
        # a batch job beside the workload runs its own code on the same strands: the cores tell the two apart
        self.cpu = Cpu(env, profile.cpu, codes=2 if scenario.background is not None else 1)
        self.memory = MemorySystem(env, profile.memory, profile.cpu, self.cpu)
        self.devices: dict[str, object] = {}
        for name, group in profile.storage.disk_groups.items():
            overhead = group.controller.overhead if group.controller else 0.0
            disks = [Disk(env, f"{name}/{i}", group.disk, self.rng(f"disk:{name}/{i}"), overhead, group.queue)
                     for i in range(group.count)]
            ctrls = ([Controller(env, f"{name}/c{i}", group.controller.bandwidth) for i in range(group.controllers)]
                     if group.controller else [])
            # A disk group is one volume over all its drives (by default striped in 1 MB units, as ASM).
            self.devices[name] = Volume(env, name, disks, self.rng(f"volume:{name}"), group.layout,
                                        group.stripe_unit, ctrls, group.volume_size)
            if group.write_cache_size is not None:
                self.devices[name].attach_cache(group.write_cache_size)
        for name, array in profile.storage.flash_arrays.items():
            self.devices[name] = FlashArray(env, name, array, self.rng(f"flash:{name}"))
        # operating system
        self.dispatcher = Dispatcher(env, self.cpu, scenario.spec.os.quantum)
        swap = profile.memory.swap_device or next(reversed(profile.storage.disk_groups), None)
        self.vm = VirtualMemory(env, profile.memory, self.dispatcher, self.devices.get(swap), scenario.spec.os.bits,
                                locks_shared_memory=profile.os == "solaris",
                                page_replacement=scenario.spec.os.page_replacement)
        db, os_spec = scenario.spec.database, scenario.spec.os
        self.datafiles = None
        if db.db_cache is not None:   # the data does not all fit: datafiles through a file system
            volume = self.devices[data_device(db, list(self.devices))]
            self.datafiles = FileSystem(env, self.dispatcher, volume, PATHS[os_spec.filesystem], db.datafiles,
                                        db.block_size, db.disk_asynch_io, self.rng("datafiles"),
                                        page_size=profile.memory.page_size)
        # the redo logs as files: LGWR appends through that path to the redo device, in a circle
        # over the log groups (or the whole device when their size is not given)
        devices = self.devices
        if os_spec.redo_filesystem != "raw":
            redo = redo_device(db, list(self.devices))
            logs = db.redo_log_size * db.redo_log_groups if db.redo_log_size is not None else None
            devices = {**self.devices, redo: LogFile(env, self.dispatcher, self.devices[redo],
                                                     PATHS[os_spec.redo_filesystem], profile.memory.page_size, logs)}
        # database
        self.instance = Instance(env, self.dispatcher, devices, db, self.datafiles, self.vm)

    def admit(self) -> tuple[str, str] | None:
        """The run's outcome as a real system would fail it: out of memory (the SGA and the processes so far
        beyond RAM and swap, VirtualMemory.exhausted), else None."""
        if self.vm.exhausted.triggered:
            return "out_of_memory", self.vm.shortfall_message()
        return None

    def rng(self, name: str, index: int | None = None) -> np.random.Generator:
        """The run's stream `name` (with `index`: that member's own, sim/randomness.py)."""
        return rng_stream(self.seed, name, index)

    def memory_latency(self) -> float:
        """Average memory latency (seconds) a strand sees now (unloaded plus queueing)."""
        return self.memory.latency

    def set_memory_behaviour(self, misses_per_instruction: float, tenant: str | None = None) -> None:
        """Tell the memory system how the running code misses the last-level cache; it owns the
        stall time the cores see and updates it as bandwidth utilisation changes. `tenant`: whose code
        (omit: the workload the instance serves now, Instance.serve). Where a background job runs beside
        a workload, each one's sessions run their own code at its own miss rate on the shared strands
        (sim/hardware/cpu.py MixedPipelineGroup), and the memory sees the misses of both."""
        tenant = self.instance.tenant if tenant is None else tenant
        self.memory.set_misses_per_instruction(misses_per_instruction, self.instance.code(tenant))

    def single_strand_rate(self) -> float:
        """Instructions per second of one strand running alone on its core (set the memory
        behaviour first): what spinning on a latch burns per second."""
        return self.cpu.groups[0].rates[1]


    def reset_stats(self) -> None:
        self.memory.reset_stats()
        self.vm.reset_stats()
        self.dispatcher.reset_stats()
        self.instance.reset_stats()
        for d in self.devices.values():
            d.reset_stats()
