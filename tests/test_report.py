"""The text report and the data (to_frame / JSON) say the same things."""

from __future__ import annotations

import json
import re

import pytest

from sim import report, scenario
from sim.run import run

SHORT = {"run.warmup": "0.5 s", "run.batch": "0.5 s", "run.min_batches": "4", "run.max_time": "3 s"}
UE10000_VXFS = {"users": 6, "think_time": "6 ms", "keying_time": "0 s", "warehouses": 200, "hash_clusters": True,
                "database.block_size": "2 KB", "database.data_device": "data", "database.redo_device": "redo",
                "database.db_cache": "1 GB", "os.filesystem": "vxfs_buffered", **SHORT}


@pytest.fixture(scope="module")
def ue10000():
    r = run(scenario.load(None, UE10000_VXFS, profile="ue10000", workload="tpcc"))
    return r, report.full(r), r.to_frame().iloc[0]


def test_every_device_line_of_the_text_is_a_column_of_the_frame(ue10000):
    r, text, row = ue10000
    for name in ("data", "redo"):
        line = re.search(rf"^{name}\s+([\d,]+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)$", text, re.M)
        assert line, text
        iops, mb, util, svc, resp = line.groups()
        assert iops == f"{row[f'device.{name}.iops']:,.0f}" and mb == f"{row[f'device.{name}.mb_per_s']:.1f}"
        assert util == f"{row[f'device.{name}.util_pct']:.0f}"
        assert svc == f"{row[f'device.{name}.avg_service_ms']:.2f}" and resp == f"{row[f'device.{name}.avg_response_ms']:.2f}"


def test_top_events_and_response_percentiles_are_columns(ue10000):
    r, text, row = ue10000
    for e in r.top_events[:5]:
        assert row[f"wait.{e['event']}.time_s"] == e["time_s"]
        assert row[f"wait.{e['event']}.pct_db_time"] == e["pct_db_time"]
        assert f"{e['time_s']:,.1f}" in text
    assert sum(row[f"wait.{e['event']}.pct_db_time"] for e in r.top_events) == pytest.approx(100.0)
    for t, v in r.response.items():
        assert row[f"rt.{t}.p90"] == v["p90"] and row[f"rt.{t}.count"] == v["count"]


def test_inputs_record_the_database_and_os_settings(ue10000):
    r, _text, row = ue10000
    assert row["in.database.db_cache"] == 2**30 and row["in.os.filesystem"] == "vxfs_buffered"
    assert row["in.params.mix.new_order"] == pytest.approx(0.45)
    assert json.loads(r.to_json())["inputs"]["database.block_size"] == 2048
