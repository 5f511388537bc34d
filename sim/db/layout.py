"""Which datafiles hold which segment: tablespaces over equal-sized datafiles.

A file system's single-writer lock is per file, so how a workload's reads and writes spread
over the files decides how often a read finds its file locked by a write. By default every
block is equally likely to be in any file (one tablespace striped over all of them). With a
datafile size, each segment (table or index) has its own tablespace of consecutive files,
as many as its size needs (at least one), as OLTP kits lay out their schemas: a read or a
write of a segment lands on one of that segment's files, uniformly (its blocks fill them
evenly). A range is (first file, number of files); None means all files.
"""

from __future__ import annotations

import math


class DatafileLayout:
    """Segments (name -> bytes) laid out over `files` datafiles of `file_size` bytes each."""

    def __init__(self, files: int, file_size: float | None, segment_bytes: dict[str, float]):
        self.ranges: dict[str, tuple[int, int] | None] = {name: None for name in segment_bytes}
        if file_size is None or len(segment_bytes) > files:
            return   # (fewer files than segments: tablespaces share files, as good as uniform)
        need = self._files_needed(segment_bytes, file_size)
        while sum(need.values()) > files:   # more data than the files hold at that size: they grow
            file_size *= 1.05
            need = self._files_needed(segment_bytes, file_size)
        first = 0
        for name, n in need.items():
            self.ranges[name] = (first, n)
            first += n

    @staticmethod
    def _files_needed(segment_bytes: dict[str, float], file_size: float) -> dict[str, int]:
        return {name: max(1, math.ceil(size / file_size - 1e-9)) for name, size in segment_bytes.items()}

    @property
    def uniform(self) -> bool:
        return all(r is None for r in self.ranges.values())

    def of(self, segment: str) -> tuple[int, int] | None:
        return self.ranges[segment]
