"""Notebooks are tests: each executes top to bottom (a failing cell fails CI).

They run two at a time (each in its own kernel process), longest first, so that the suite uses
the two cores CI has: run one by one they took about half of its time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def _execute(path: Path, folder: Path) -> list:
    """Run one notebook in `folder` (so that nothing it writes lands in the repository); its error outputs."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    order = sorted(NOTEBOOKS, key=lambda p: -p.stat().st_size)   # the big ones (the long ones) first
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {p: pool.submit(_execute, p, tmp_path_factory.mktemp(p.stem)) for p in order}
        # an exception (a cell that raised, a time-out) is kept and raised by that notebook's test
        return {p: f.exception() or f.result() for p, f in futures.items()}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, executed):
    outcome = executed[path]
    if isinstance(outcome, BaseException):
        raise outcome
    assert not outcome
