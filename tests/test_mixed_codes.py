"""Several codes on one core (a batch job beside a workload): each runs at its own miss rate.

A fine-grained multithreaded pipeline issues from its ready strands in turn, so strands whose code misses less
are ready more often and get more of the pipeline: a multi-class repairman (a processor-sharing pipeline and a
delay for the stalls), exact by MVA. Checked against an independent continuous-time Markov chain, against the
one-class repairman, and through the event machinery by hand-computed virtual time.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.analytic import repairman, repairman_classes

# the T5220's OLTP code and RMAN's compressors, misses per instruction (workloads/tpcc.py, workloads/rman.py)
OLTP, COMPRESS, STALL = 0.0102, 0.0028, 150.0


def _ctmc(counts, think, service) -> tuple[list[float], float]:
    """The same network as a Markov chain, solved numerically: state = how many of each class are at the PS
    server; with j of them there, each is served at rate 1/(j service_k); each thinking source arrives at
    1/think_k."""
    states = list(itertools.product(*(range(n + 1) for n in counts)))
    index = {s: i for i, s in enumerate(states)}
    q = np.zeros((len(states), len(states)))
    for s in states:
        j = sum(s)
        for k, n in enumerate(counts):
            if s[k] < n:
                up = s[:k] + (s[k] + 1,) + s[k + 1:]
                q[index[s], index[up]] += (n - s[k]) / think[k]
            if s[k] > 0:
                down = s[:k] + (s[k] - 1,) + s[k + 1:]
                q[index[s], index[down]] += s[k] / (j * service[k])
    q -= np.diag(q.sum(axis=1))
    a = np.vstack([q.T, np.ones(len(states))])
    b = np.zeros(len(states) + 1)
    b[-1] = 1.0
    p = np.linalg.lstsq(a, b, rcond=None)[0]
    x = [sum(p[index[s]] * s[k] / (sum(s) * service[k]) for s in states if s[k]) for k in range(len(counts))]
    busy = sum(p[index[s]] for s in states if sum(s))
    return x, busy


@settings(max_examples=40, deadline=None)
@given(counts=st.lists(st.integers(0, 3), min_size=1, max_size=3),
       data=st.data())
def test_the_multiclass_repairman_is_the_markov_chains(counts, data):
    """Exact MVA and the chain's stationary law agree to solver precision (rel 1e-9) on every class's throughput
    and the server's utilisation, however many classes and sources (the product form holds for PS)."""
    think = data.draw(st.lists(st.floats(0.01, 50.0), min_size=len(counts), max_size=len(counts)))
    service = data.draw(st.lists(st.floats(0.05, 10.0), min_size=len(counts), max_size=len(counts)))
    x, util = repairman_classes(counts, think, service)
    xc, busy = _ctmc(counts, think, service)
    assert util <= 1.0 + 1e-12
    assert util == pytest.approx(busy, rel=1e-9, abs=1e-12)
    for got, want in zip(x, xc):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 8])
def test_one_class_is_the_repairman_and_two_equal_classes_add_up_to_it(n):
    """One class: M/M/1//n's throughput (PS or FCFS, one service time). Two classes with the same times, split
    any way: their throughputs add up to it, each in proportion to its sources (rel 1e-12: float rounding)."""
    x, busy = repairman(n, STALL, 100.0)
    assert repairman_classes((n,), (STALL,), (100.0,))[0][0] == pytest.approx(x, rel=1e-12)
    for a in range(n + 1):
        xs, util = repairman_classes((a, n - a), (STALL, STALL), (100.0, 100.0))
        assert sum(xs) == pytest.approx(x, rel=1e-12) and util == pytest.approx(busy, rel=1e-12)
        assert xs[0] == pytest.approx(x * a / n, rel=1e-12)


def test_refuses_a_class_without_its_times():
    with pytest.raises(ValueError, match="one think and one service time per class"):
        repairman_classes((1, 2), (1.0,), (1.0, 1.0))
    with pytest.raises(ValueError, match="service must be positive"):
        repairman_classes((1,), (1.0,), (0.0,))
