"""Shape claims (sim/shapes.py): each kind by hand, every claim true of its published table, bad
claims refused with their key path, and the scoreboard's verdicts from simulated figures."""

from __future__ import annotations

import dataclasses

import pytest

from sim import experiments as ex
from sim.config import ConfigError, Source, build, read_yaml
from sim.result import Result
from sim.shapes import ClaimSpec, holds


@pytest.mark.parametrize("kind, series, tol, want", [
    ("rising", [[1, 2, 3]], 0, True),
    ("rising", [[1, 3, 3]], 0, False),                 # a step that does not rise
    ("falling", [[3, 2, 1]], 0, True),
    ("falling", [[6, 4, 3], [2, 2, 1]], 0, False),     # the ratio: 3, 2, 3
    ("falling", [[6, 4, 3], [2, 2, 2]], 0, True),      # the ratio: 3, 2, 1.5
    ("rising", [[2, 4, 9], [2, 2, 3]], 0, True),       # the ratio: 1, 2, 3
    ("flat", [[95, 100, 105]], 0.05, True),            # mean 100: each within 5%
    ("flat", [[90, 100, 110]], 0.05, False),
    ("close", [[103, 97], [100, 100]], 0.03, True),
    ("close", [[104, 100], [100, 100]], 0.03, False),
    ("above", [[5, 6], [4, 5], [1, 5.5]], 0, True),
    ("above", [[5, 6], [4, 6]], 0, False),             # a tie is not above
    ("falling", [[3, 3, 1]], 0, False),                # a flat step is not a fall
    ("falling", [[1.0, 1.5]], 0, False),               # nor is a rise smaller than 1
    ("rising", [[1.0, 1.5, 1.7]], 0, True),            # rises smaller than 1 are rises
    ("above", [[5], [4], [6]], 0, False),              # above the lowest other is not above all
    ("rising", [[1, None, 3]], 0, None),               # a missing figure (out of memory): no verdict
    ("close", [[1.0], [float("nan")]], 0.1, None),
    ("flat", [[90, 91, 120]], 0.2, True),              # mean 100.33: 120 is 19.6% above it (the median, 91: 32%)
    ("flat", [[110, 100, 100, 100]], 0.05, False),     # mean 102.5: the first point is 7.3% above it
    ("close", [[100, 120], [100, 100]], 0.05, False),  # within at the first point, 20% off at the second
    ("close", [[5.0], [0.0]], 0.05, None),             # a ratio to 0 (a row that completed nothing): no verdict
    ("rising", [[1.0, 2.0], [1.0, 0.0]], 0, None),
    ("flat", [[0.0, 0.0]], 0.05, None),                # within 5% of a mean of 0
])
def test_each_kind_by_hand(kind, series, tol, want):
    assert holds(kind, series, tol) is want


def test_tolerance_is_a_percentage_and_exact_at_its_edge():
    claim = ClaimSpec(claim="c", kind="close", series=("a {}", "b {}"), points=("1",), tolerance="12.5%")
    assert claim.fraction() == pytest.approx(0.125)
    assert holds("close", [[105.0], [100.0]], 0.05) is True      # |a/b - 1| = 5%: within 5%
    assert holds("close", [[100.0], [100.0]]) is True and holds("close", [[100.1], [100.0]]) is False  # default 0


def test_a_tolerance_below_zero_or_not_finite_is_refused():
    """-5% would hold for no series and inf% for every one: neither is a claim (nan% is refused as well)."""
    for bad in ("-5%", "inf%", "nan%", "5"):
        with pytest.raises(ValueError):
            ClaimSpec(claim="c", kind="close", series=("a", "b"), tolerance=bad).fraction()
    assert ClaimSpec(claim="c", kind="close", series=("a", "b"), tolerance="0%").fraction() == 0.0


def test_an_unknown_kind_is_an_error_not_a_missing_verdict():
    """None means a figure is missing; a kind holds() does not know is a mistake in the code, not an outcome."""
    with pytest.raises(ValueError, match="unknown claim kind 'steady'"):
        holds("steady", [[1.0, 2.0]])


def test_a_label_with_a_place_for_points_and_no_points_says_so():
    """Without points each series is one row label: "raw {}" is refused for its "{}", before its rows are looked
    up (the message that it is no row's label would not say why)."""
    with pytest.raises(ConfigError, match=r'claims\[0\]\.series: got \'raw \{\}\'; expected a row label \(no "\{\}"'):
        ClaimSpec(claim="c", kind="close", series=("raw {}", "quick_io {}")).check(Source("x.yaml", "claims[0]"))


def test_every_claim_holds_on_its_published_table():
    """A claim is what the published table shows: checked on the copied values (a claim naming a
    withheld row is the source's text about it: only the simulated side can be judged)."""
    n = withheld = 0
    for eid, path in ex.experiment_paths().items():
        exp = ex.load_experiment(path)
        published = {r.label: r.published for r in exp.rows}
        for claim, v in zip(exp.claims, ex.check_claims(exp, [])):
            n += 1
            if any(not published[lb] for s in claim.labels() for lb in s):
                withheld += 1
                assert v.published is None, (eid, v.claim)
            else:
                assert v.published is True, (eid, v.claim)
            assert v.simulated is None      # no simulated figure given
    assert n >= 21 and withheld >= 4


def _veritas_with(claim: dict):
    data = read_yaml(ex.experiment_paths()["veritas.io_config_by_sga"])
    data["claims"] = [claim]
    return build(ex.ExperimentSpec, data, Source("x.yaml"))


@pytest.mark.parametrize("claim, where", [
    ({"claim": "c", "kind": "close", "series": ["raw {}"], "points": ["100MB"], "tolerance": "5%"}, "claims[0].series"),
    ({"claim": "c", "kind": "flat", "series": ["raw {}"], "points": ["100MB"]}, "claims[0].points"),
    ({"claim": "c", "kind": "rising", "series": ["raw {}"], "points": ["100MB", "3GB"]}, "claims[0].series"),
    ({"claim": "c", "kind": "flat", "series": ["raw {}"], "points": ["100MB", "1GB"], "tolerance": "5"},
     "claims[0].tolerance"),
    ({"claim": "c", "kind": "steady", "series": ["raw {}"], "points": ["100MB", "1GB"]}, "claims[0].kind"),
    ({"claim": "c", "kind": "rising", "series": ["raw {}"], "points": ["100MB", "1GB"], "metric": "iops"},
     "claims[0].metric"),
    ({"claim": "c", "kind": "close", "series": ["raw 1GB", "raw {}"], "points": ["2GB"]}, "claims[0].series"),
    ({"claim": "c", "kind": "rising", "series": ["raw {}", "quick_io {}", "ufs_direct {}"], "points": ["100MB", "1GB"]},
     "claims[0].series"),
    ({"claim": "c", "kind": "flat", "series": ["raw {}", "quick_io {}"], "points": ["100MB", "1GB"]},
     "claims[0].series"),
    ({"claim": "c", "kind": "above", "series": ["raw {}"], "points": ["100MB"]}, "claims[0].series"),
    ({"claim": "c", "kind": "falling", "series": ["raw {}", "quick_io {}", "ufs_direct {}"], "points": ["100MB", "1GB"]},
     "claims[0].series"),
    ({"claim": "c", "kind": "flat", "series": [], "points": ["100MB", "1GB"]}, "claims[0].series"),
    ({"claim": "c", "kind": "close", "series": ["raw {}", "quick_io {}"], "points": ["1GB"], "tolerance": "50"},
     "claims[0].tolerance"),
    ({"claim": "c", "kind": "close", "series": ["raw {}", "quick_io {}"]}, "claims[0].series"),
])
def test_a_bad_claim_is_refused_naming_its_key(claim, where):
    with pytest.raises(ConfigError) as e:
        _veritas_with(claim)
    assert where in str(e.value)


def test_the_scoreboard_gives_each_claim_on_the_simulated_figures():
    exp = _veritas_with({"claim": "raw rises", "kind": "rising", "series": ["raw {}"],
                         "points": ["100MB", "500MB", "1GB"]})
    rows = [r for r in exp.rows if r.label in ("raw 100MB", "raw 500MB", "raw 1GB")]
    exp = dataclasses.replace(exp, rows=tuple(rows))

    def board(tpms):
        # (a run has the figures its experiment predicts: the scoring checks that they exist)
        results = {(exp.id, r.label): [Result(r.label, "p", "tpcc", {}, tpm=t, extra=dict.fromkeys(exp.predict, 0.0))]
                   for r, t in zip(rows, tpms)}
        figures = ex.score(exp, results)
        verdicts = ex.check_claims(exp, figures)
        return verdicts, ex.scoreboard(figures, verdicts)

    (v,), text = board([2000.0, 4000.0, 5000.0])
    assert (v.published, v.simulated) == (True, True)
    assert "Shape claims" in text and "1/1 shape claims hold" in text
    (v,), text = board([2000.0, 4000.0, 3000.0])
    assert v.simulated is False and "0/1 shape claims hold" in text


def test_a_row_that_completed_nothing_leaves_its_claim_without_a_verdict():
    """raw at 100 MB simulated at 0 TPM (it thrashed, or its measured time held no commit, status ok): "Quick I/O
    tracks raw" divides by it. The claim has no simulated verdict; the scoreboard had stopped with a
    ZeroDivisionError after every run of the experiment."""
    exp = _veritas_with({"claim": "quick I/O tracks raw", "kind": "close", "series": ["quick_io {}", "raw {}"],
                         "points": ["100MB"], "tolerance": "5%"})
    tpm = {"quick_io 100MB": 2000.0, "raw 100MB": 0.0}
    exp = dataclasses.replace(exp, rows=tuple(r for r in exp.rows if r.label in tpm))
    results = {(exp.id, r.label): [Result(r.label, "p", "tpcc", {}, tpm=tpm[r.label],
                                          extra=dict.fromkeys(exp.predict, 0.0))] for r in exp.rows}
    (v,) = ex.check_claims(exp, ex.score(exp, results))
    assert (v.published, v.simulated) == (True, None)


def test_a_claim_over_rows_not_run_is_left_out():
    """--quick runs a few rows of the veritas table: its claims span rows that did not run."""
    (exp,) = ex.select(["veritas.io_config_by_sga"], quick=True)
    assert 0 < len(exp.rows) < 35 and exp.claims
    assert ex.check_claims(exp, []) == []
    figures = [ex.Figure(exp.id, exp.rows[0].label, "tpm", "TPM", 1.0, 1.0, 0.0, "relative", True)]
    assert "shape claims" not in ex.summary_line(figures, [])


def test_a_claim_without_points_compares_the_rows_it_names():
    """tseries.rman: 4 channels within 2% of 3 (the largest file bounds the backup)."""
    (exp,) = ex.select(["tseries.rman"])
    (claim,) = [c for c in exp.claims if not c.points]
    assert claim.labels() == [["4 channels"], ["3 channels"]]

    def close(four, three):
        elapsed = {"3 channels": three, "4 channels": four}
        results = {(exp.id, r.label): [Result(r.label, "p", "rman", {}, elapsed=elapsed.get(r.label, 5000.0),
                                              extra={"elapsed_s": elapsed.get(r.label, 5000.0)})] for r in exp.rows}
        (v,) = [v for v in ex.check_claims(exp, ex.score(exp, results)) if v.claim == claim.claim]
        return v.simulated
    assert close(3519.0, 3500.0) is True and close(3600.0, 3500.0) is False


def test_the_messages_say_how_many_series_a_kind_takes():
    with pytest.raises(ConfigError, match=r"expected 2 series for a 'close' claim"):
        _veritas_with({"claim": "c", "kind": "close", "series": ["raw {}"], "points": ["1GB"]})
    with pytest.raises(ConfigError, match=r"expected 1 or 2 series for a 'rising' claim"):
        _veritas_with({"claim": "c", "kind": "rising", "series": ["raw {}", "raw {}", "raw {}"], "points": ["1GB", "2GB"]})
    with pytest.raises(ConfigError, match=r"expected at least 2 series for a 'above' claim"):
        _veritas_with({"claim": "c", "kind": "above", "series": ["raw {}"], "points": ["1GB"]})


def test_a_claim_on_a_metric_its_row_does_not_publish_is_refused():
    """haswell.calibrate_io_small_array: the FOO row publishes only its change from the first row."""
    data = read_yaml(ex.experiment_paths()["haswell.calibrate_io_small_array"])
    data["claims"] = [{"claim": "c", "kind": "above", "metric": "iops",
                       "series": ["+ 1 TB tablespace FOO", "existing tablespaces"]}]
    with pytest.raises(ConfigError, match=r"claims\[0\]\.metric: got 'iops'; expected a metric published for row"):
        build(ex.ExperimentSpec, data, Source("x.yaml"))
