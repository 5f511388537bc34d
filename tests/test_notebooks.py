"""Notebooks are tests: each executes top to bottom in its own kernel (a failing cell fails CI).

They are the longest tests (one takes ~2 minutes): tests/conftest.py starts them first, longest
first, so that under xdist (`-n auto --dist worksteal`, pyproject's default) the other tests fill
the cores around them instead of waiting for them at the end."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"),
                   key=lambda p: -p.stat().st_size)   # the big ones (the long ones) first


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(path, as_version=4)
    # run in tmp_path, so that nothing it writes lands in the repository; the cell timeout guards against a hang,
    # not a speed limit (benchmarks/ measure speed): 120 s failed two notebooks' longest cells beside four other jobs
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
