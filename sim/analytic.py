"""Closed-form queueing and caching models (numpy/scipy only, no SimPy).

Why here: the CPU model needs the finite-source (machine-repairman) queue to turn
"n runnable strands" into per-strand speed, and both the Oracle buffer cache and
the OS page cache need an LRU hit ratio for a popularity distribution (Che's
approximation). These are evaluated at set-up time or when a parameter changes,
never per event, so they favour exactness and numerical robustness over speed
tricks. See DESIGN.md and modelling-sourcebook.md sections 1, 3 and 7.
"""

from __future__ import annotations

import math
import operator
from collections import OrderedDict

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammainc, lambertw

__all__ = [
    "repairman",
    "repairman_mva",
    "repairman_classes",
    "mm1_response",
    "mm1_ps_response",
    "erlang_c",
    "mmc_wait",
    "mg1_wait",
    "che_time",
    "che_hit_ratios",
    "che_hit_ratio",
    "che_two_level",
    "che_two_level_hits",
    "lru_simulate",
]


# --------------------------------------------------------------------------
# Finite-source queue (machine repairman, M/M/c//n)
# --------------------------------------------------------------------------

def _check_count(n, name: str = "n") -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {n!r}") from None
    if n < 0:
        raise ValueError(f"{name} must be >= 0, got {n}")
    return n


def _check_times(think: float, service: float) -> tuple[float, float]:
    think, service = float(think), float(service)
    if not (service > 0.0) or not math.isfinite(service):
        raise ValueError(f"service must be positive and finite, got {service}")
    if not (think >= 0.0) or not math.isfinite(think):
        raise ValueError(f"think must be non-negative and finite, got {think}")
    return think, service


def repairman(n: int, think: float, service: float, servers: int = 1) -> tuple[float, float]:
    """Exact M/M/c//n queue: (throughput X, mean number of busy servers).

    n sources alternate an exponential "think" (mean `think`) with a visit to a
    station of `servers` exponential servers (mean `service`). The number k of
    sources at the station is a birth-death chain with birth rate (n-k)/think
    and death rate min(k, c)/service; its stationary law is built in log space
    (cumulative sum of log ratios, then a max-shifted normalisation) so that
    n = 4096 with think/service anywhere in 1e-4..1e4 neither over- nor
    underflows. Busy servers = E[min(k, c)] and X = busy/service (U = X*S).
    """
    n = _check_count(n)
    try:
        servers = operator.index(servers)
    except TypeError:
        raise ValueError(f"servers must be an integer, got {servers!r}") from None
    if servers < 1:
        raise ValueError(f"servers must be >= 1, got {servers}")
    think, service = _check_times(think, service)
    if n == 0:
        return 0.0, 0.0
    if think == 0.0:
        # Nobody ever leaves the station: all n are there all the time.
        busy = float(min(n, servers))
        return busy / service, busy
    k = np.arange(1, n + 1, dtype=float)
    # log(p_k / p_{k-1}) = log((n-k+1)/think) - log(min(k, c)/service)
    log_ratio = (np.log(n - k + 1.0) + math.log(service) - math.log(think)
                 - np.log(np.minimum(k, servers)))
    log_p = np.concatenate(([0.0], np.cumsum(log_ratio)))
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    busy = min(float(np.dot(p, np.minimum(np.arange(n + 1), servers))), float(servers))
    return busy / service, busy


def repairman_mva(n: int, think: float, service: float) -> float:
    """Throughput of the single-server repairman by exact Mean Value Analysis.

    Independent of `repairman` (no stationary distribution): the arrival
    theorem gives R(m) = S (1 + Q(m-1)), X(m) = m / (R(m) + Z), Q(m) = X(m) R(m).
    """
    n = _check_count(n)
    think, service = _check_times(think, service)
    q = 0.0
    x = 0.0
    for m in range(1, n + 1):
        r = service * (1.0 + q)
        x = m / (r + think)
        q = x * r
    return x


def repairman_classes(counts, think, service) -> tuple[tuple[float, ...], float]:
    """Exact repairman with several classes of source: (each class's throughput, the server's utilisation).

    Class k has counts[k] sources that alternate a think of mean think[k] (a delay: no queue) with a visit of
    mean service[k] to one processor-sharing server. A network of a PS and a delay station has a product-form
    law whatever the classes' service times (BCMP), so exact multi-class Mean Value Analysis gives it: over every
    population m up to `counts`, R_k(m) = service[k] (1 + Q(m - e_k)), X_k(m) = m_k / (R_k(m) + think[k]),
    Q(m) = sum_k X_k(m) R_k(m). With one class it is `repairman_mva`; a PS server with equal service times is
    the FCFS one of `repairman` (same throughput).
    """
    counts = tuple(_check_count(n, "counts") for n in counts)
    if not (len(counts) == len(think) == len(service)):
        raise ValueError(f"one think and one service time per class: {len(counts)} counts, {len(think)} thinks, "
                         f"{len(service)} services")
    times = [_check_times(z, d) for z, d in zip(think, service)]
    k = len(counts)
    q: dict[tuple[int, ...], float] = {(0,) * k: 0.0}
    x = (0.0,) * k
    for m in np.ndindex(*(n + 1 for n in counts)):   # in lexicographic order: every m - e_k comes before m
        if not any(m):
            continue
        r = [d * (1.0 + q[m[:j] + (m[j] - 1,) + m[j + 1:]]) if m[j] else 0.0 for j, (_z, d) in enumerate(times)]
        x = tuple(m[j] / (r[j] + z) if m[j] else 0.0 for j, (z, _d) in enumerate(times))
        q[m] = sum(xj * rj for xj, rj in zip(x, r))
    return x, sum(xj * d for xj, (_z, d) in zip(x, times))


# --------------------------------------------------------------------------
# Open single- and multi-server queues
# --------------------------------------------------------------------------

def _check_rates(lam: float, mu: float) -> float:
    lam, mu = float(lam), float(mu)
    if not (mu > 0.0) or not math.isfinite(mu):
        raise ValueError(f"mu must be positive and finite, got {mu}")
    if not (lam >= 0.0):
        raise ValueError(f"lam must be non-negative, got {lam}")
    rho = lam / mu
    if rho >= 1.0:
        raise ValueError(f"unstable queue: rho = lam/mu = {rho} >= 1")
    return rho


def mm1_response(lam: float, mu: float) -> float:
    """M/M/1 mean response time 1/(mu - lam) (also the M/M/1-PS mean sojourn)."""
    _check_rates(lam, mu)
    return 1.0 / (float(mu) - float(lam))


def mm1_ps_response(lam: float, mu: float, work: float | None = None) -> float:
    """M/M/1 processor-sharing mean sojourn, optionally given the job's size.

    `work` is the job's service time at full speed (size / server rate). Under
    PS the expected sojourn is linear in it: E[T | x] = x / (1 - rho); averaged
    over exponential x with mean 1/mu this is 1/(mu - lam), the M/M/1 value.
    """
    rho = _check_rates(lam, mu)
    if work is None:
        return 1.0 / (float(mu) - float(lam))
    work = float(work)
    if not (work >= 0.0):
        raise ValueError(f"work must be non-negative, got {work}")
    return work / (1.0 - rho)


def erlang_c(servers: int, offered_load: float) -> float:
    """Erlang C: probability an arrival waits in M/M/c with load a = lam/mu.

    Uses the stable Erlang B recursion B_k = a B_{k-1} / (k + a B_{k-1}) (no
    factorials or powers) and C = c B / (c - a (1 - B)). For a >= c the queue
    is unstable and every arrival waits, so 1.0 is returned.
    """
    try:
        c = operator.index(servers)
    except TypeError:
        raise ValueError(f"servers must be an integer, got {servers!r}") from None
    if c < 1:
        raise ValueError(f"servers must be >= 1, got {c}")
    a = float(offered_load)
    if not (a >= 0.0):
        raise ValueError(f"offered_load must be non-negative, got {a}")
    if a == 0.0:
        return 0.0
    if a >= c:
        return 1.0
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return c * b / (c - a * (1.0 - b))


def mmc_wait(lam: float, mu: float, servers: int) -> float:
    """M/M/c mean wait in queue W_q = C(c, a) / (c mu - lam)."""
    lam, mu = float(lam), float(mu)
    if not (mu > 0.0) or not (lam >= 0.0):
        raise ValueError(f"need mu > 0 and lam >= 0, got lam={lam}, mu={mu}")
    c = operator.index(servers)
    if c < 1:
        raise ValueError(f"servers must be >= 1, got {c}")
    if lam >= c * mu:
        raise ValueError(f"unstable queue: rho = lam/(c mu) = {lam / (c * mu)} >= 1")
    return erlang_c(c, lam / mu) / (c * mu - lam)


def mg1_wait(lam: float, mean_service: float, second_moment: float) -> float:
    """Pollaczek-Khinchine M/G/1 mean wait in queue: lam E[S^2] / (2 (1 - rho))."""
    lam, es, es2 = float(lam), float(mean_service), float(second_moment)
    if not (es > 0.0) or not (lam >= 0.0):
        raise ValueError(f"need mean_service > 0 and lam >= 0, got {lam}, {es}")
    if es2 < es * es * (1.0 - 1e-12):
        raise ValueError(f"second_moment {es2} < mean_service^2 {es * es}")
    rho = lam * es
    if rho >= 1.0:
        raise ValueError(f"unstable queue: rho = {rho} >= 1")
    return lam * es2 / (2.0 * (1.0 - rho))


# --------------------------------------------------------------------------
# Che's approximation for LRU under the independent reference model
# --------------------------------------------------------------------------

def _che_arrays(rates, sizes, counts):
    r = np.asarray(rates, dtype=float).ravel()
    s = np.ones_like(r) if sizes is None else np.broadcast_to(
        np.asarray(sizes, dtype=float), r.shape).ravel()
    m = np.ones_like(r) if counts is None else np.broadcast_to(
        np.asarray(counts, dtype=float), r.shape).ravel()
    if r.size and (not np.all(np.isfinite(r)) or r.min() < 0.0):
        raise ValueError("rates must be finite and non-negative")
    if s.size and (not np.all(np.isfinite(s)) or s.min() <= 0.0):
        raise ValueError("sizes must be finite and positive")
    if m.size and (not np.all(np.isfinite(m)) or m.min() < 0.0):
        raise ValueError("counts must be finite and non-negative")
    return r, s, m


def _solve_log_time(g, t_lo: float, t_hi: float) -> float:
    """Root of an increasing residual g(log t), g <= 0 at t_lo, by Brent on log t.

    t_hi is a first guess for the upper end; it is clamped below exp(700) and,
    if g is still negative there, pushed up by doubling steps in log t.
    """
    if not t_lo > 0.0:     # capacity so small that it underflows: nothing is cached
        return 0.0
    lo = math.log(t_lo)
    if g(lo) >= 0.0:
        return t_lo
    hi = min(math.log(t_hi) if t_hi > t_lo and math.isfinite(t_hi) else lo + 1.0, 700.0)
    step = 1.0
    while g(hi) <= 0.0:
        if hi >= 700.0:
            return math.inf
        lo, hi, step = hi, min(hi + step, 700.0), 2.0 * step
    return math.exp(brentq(g, lo, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps, maxiter=300))


def che_time(rates: np.ndarray, capacity: float, sizes: np.ndarray | None = None,
             counts: np.ndarray | None = None) -> float:
    """Characteristic time T of an LRU cache: sum_i m_i s_i (1 - e^{-r_i T}) = C.

    `rates` are request rates (any scale: T is in the reciprocal unit),
    `sizes` item sizes in capacity units (default 1), `counts` how many
    identical items each entry stands for (buckets; default 1). The left side
    is increasing and concave in T, so the root is bracketed analytically
    (1 - e^{-x} <= x gives a lower bound; the least popular item gives an upper
    one) and found by Brent's method on log T. Returns 0 for capacity <= 0 and
    inf when the cache holds every item that is ever requested.
    """
    r, s, m = _che_arrays(rates, sizes, counts)
    capacity = float(capacity)
    if capacity <= 0.0:
        return 0.0
    live = (r > 0.0) & (m > 0.0)
    r, w = r[live], (s * m)[live]
    total = float(w.sum())
    if r.size == 0 or capacity >= total:
        return math.inf
    scale = float(r.max())          # solve with rates in (0, 1], rescale at the end
    r = r / scale
    frac = capacity / total

    def g(log_t: float) -> float:
        return float(np.dot(w, -np.expm1(-r * math.exp(log_t)))) / total - frac

    t_lo = capacity / float(np.dot(w, r))                    # g <= 0 there
    t_hi = -math.log1p(-frac) / float(r.min())               # g >= 0 there
    return _solve_log_time(g, t_lo, t_hi) / scale


def _retouch_tail(per_touch: float, window: float, t: float) -> float:
    """I(t) = integral over a > t of 1 - e^{-mu ov(a)}: how much a block's older touches' re-touches add to
    its chance of a touch in the last t (see retouch_rate). mu = per_touch / window; ov(a) is the overlap of
    the re-touch window [a - window, a] of a touch a ago with the last t: t for a <= window, then falling
    to 0 at a = window + t."""
    if per_touch <= 0.0 or window <= 0.0:
        return 0.0
    if math.isinf(window):   # re-touches spread without end: each adds as an independent touch
        return per_touch * t
    mu = per_touch / window
    if t < window:   # a in (t, window]: the whole last t; then the overlap falls from t to 0
        return (window - t) * -math.expm1(-mu * t) + t + math.expm1(-mu * t) / mu
    return window + math.expm1(-mu * window) / mu   # a in (t, t + window): the overlap falls from window to 0


def retouch_rate(rates: np.ndarray, per_touch: float, window: float, t: float) -> np.ndarray:
    """The Poisson rate with the same LRU occupancy at characteristic time t as a block touched
    `rates` times per unit of time (independent references) when each of those touches brings a
    Poisson(`per_touch`) number of re-touches at uniform times within the next `window` (TPC-C's
    Stock-Level re-reads the stock rows of its district's last 20 orders, which New-Order read).

    Che's cache as a TTL: the block is cached when it was touched in the last t. Touches start
    clusters at rate r; a cluster started a ago re-touches it in the last t with P 1 - e^{-mu ov(a)},
    so P(no touch in the last t) = exp(-r (t + I(t))) (_retouch_tail) and the equivalent rate is
    r (1 + I(t) / t). With window -> 0 re-touches fall within t of their touch: no more occupancy
    (the rate is r); with t << window they add as independent touches (r (1 + per_touch))."""
    r = np.asarray(rates, dtype=float)
    if t <= 0.0:
        return r * (1.0 + per_touch)
    if math.isinf(t):    # everything ever touched is cached: the rate no longer matters
        return r
    return r * (1.0 + _retouch_tail(per_touch, window, t) / t)


def retouch_miss(per_touch: float, window: float, t: float) -> float:
    """P(a re-touch misses | no other cluster touched the block in the last t) for retouch_rate's
    clusters: a re-touch s after its cluster's touch (s uniform in [0, window]) misses only if s > t
    and none of the cluster's other re-touches fell in the last t (e^{-mu t}): (1 - t / window)^+ e^{-mu t}.
    A re-touch's miss probability is this times the block's P(no touch in the last t), its touches' miss
    probability."""
    if window <= 0.0 or t >= window:
        return 0.0
    return (1.0 - t / window) * math.exp(-per_touch / window * t)


def _hit_probs(r: np.ndarray, t: float) -> np.ndarray:
    if math.isinf(t):
        return (r > 0.0).astype(float)
    return -np.expm1(-r * t)


def che_hit_ratios(rates: np.ndarray, capacity: float, sizes: np.ndarray | None = None,
                   counts: np.ndarray | None = None) -> np.ndarray:
    """Per-item (per-bucket) LRU hit probabilities h_i = 1 - e^{-r_i T}."""
    t = che_time(rates, capacity, sizes, counts)
    r = np.asarray(rates, dtype=float)
    return _hit_probs(r, t)


def che_hit_ratio(rates: np.ndarray, capacity: float, sizes: np.ndarray | None = None,
                  counts: np.ndarray | None = None) -> float:
    """Request-weighted LRU hit ratio sum m_i r_i h_i / sum m_i r_i (0 if no requests)."""
    r, _, m = _che_arrays(rates, sizes, counts)
    demand = m * r
    tot = float(demand.sum())
    if tot <= 0.0:
        return 0.0
    t = che_time(r, capacity, sizes, m)
    if math.isinf(t):
        return 1.0
    h = _hit_probs(r, t)
    return min(1.0, float(np.dot(demand, h)) / tot)


def _miss_gaps(r: np.ndarray, t1):
    """Level 1's misses of each item as a renewal process (see _renewal_level2): returns
    (t1 as an array, r2 = r e^{-r t1} the miss rate, keep = 1 - r t1 e^{-r t1}, a = r2 / keep),
    a gap between misses being t1 + Exp(a)."""
    t1 = np.broadcast_to(np.asarray(t1, dtype=float), r.shape)
    x = r * t1
    ex = np.exp(-x)
    r2 = r * ex
    keep = 1.0 - x * ex                 # in [1 - 1/e, 1]: no cancellation
    return t1, r2, keep, r2 / keep


def _renewal_level2(r: np.ndarray, w: np.ndarray, t1, c2: float, with_time: bool = False):
    """Level-2 hit probabilities when level 2 is fed by a TTL-like level 1.

    With level 1 holding item i for t1 after each request (Che), the misses of
    i form a renewal process: gaps are >= t1, with mean 1/r2 = e^{r t1}/r. We
    approximate a gap by t1 + Exp(a), a = r2 / (1 - r t1 e^{-r t1}) (exact in
    both limits r t1 -> 0 and -> inf), and apply the renewal form of Che
    (Martina, Garetto & Leonardi 2014): hit = P(gap <= T2), occupancy =
    P(age < T2) = r2 * integral_0^T2 P(gap > u) du. Consequence: level 2 gets
    no hits while T2 <= t1, close to an exact LRU cascade, where a level 2
    smaller than level 1 mostly holds blocks that level 1 still has.
    `t1` may be an array: a per-item dead time (a level-2 item grouping level-1
    items, see che_two_level_grouped). `with_time`: return (hits, T2), T2 the level-2
    characteristic time (an item stays T2 after its last level-2 request).
    """
    t1, r2, keep, a = _miss_gaps(r, t1)
    live = (r2 > 0.0) & (w > 0.0)
    total = float(w[live].sum())
    if total == 0.0 or c2 <= 0.0:
        return (np.zeros_like(r), 0.0) if with_time else np.zeros_like(r)
    if c2 >= total:
        return (live.astype(float), math.inf) if with_time else live.astype(float)
    rl, al, wl, kl, tl = r2[live], a[live], w[live], keep[live], t1[live]
    frac = c2 / total

    def occupancy(t2: float) -> np.ndarray:
        d = np.maximum(t2 - tl, 0.0)
        return rl * np.minimum(t2, tl) + kl * -np.expm1(-al * d)

    def g(log_t: float) -> float:
        return float(np.dot(wl, occupancy(math.exp(log_t)))) / total - frac

    # occupancy is concave with slope <= r2 at 0, so c2 / sum(w r2) is a lower bound.
    t_lo = c2 / float(np.dot(wl, rl))
    t_hi = 2.0 * max(float(tl.max()), t_lo)
    t2 = _solve_log_time(g, t_lo, t_hi)
    hits = -np.expm1(-a * np.maximum(t2 - t1, 0.0))
    return (hits, t2) if with_time else hits


_FIFO_K_MAX = 64   # terms of the renewal sum M(T) before its asymptote (at T > 32 mean gaps): numerical


def _renewal_fifo_level2(r: np.ndarray, w: np.ndarray, t1, c2: float, with_time: bool = False):
    """Level-2 hit probabilities when level 2 is a FIFO cache fed by a TTL-like level 1.

    The level-2 input of an item is the renewal process of _renewal_level2 (gaps t1 + Exp(a)).
    In a large FIFO cache an item inserted at a miss stays a nearly fixed time T2 (the time
    C2 insertions take) whatever its hits (Che-like approximation of FIFO, Martina, Garetto &
    Leonardi 2014). With M = M(T2) the renewal function (requests in (0, T2] after the one that
    inserted it): hit = M / (M + 1), and by Wald's identity a cycle (insertion to the next
    insertion) lasts mu (M + 1), mu = t1 + 1/a the mean gap, so occupancy = T2 / (mu (M + 1)).
    M(T) = sum_k P(k t1 + Gamma(k, a) <= T); past K_MAX terms, the renewal theorem's
    M ~ T/mu + (sigma^2/mu^2 - 1)/2 (sigma = 1/a). Poisson input (t1 = 0) gives the
    textbook FIFO/RANDOM form hit = r T / (1 + r T). `with_time`: return (hits, T2).
    """
    t1, r2, _keep, a = _miss_gaps(r, t1)
    live = (r2 > 0.0) & (w > 0.0)
    total = float(w[live].sum())
    if total == 0.0 or c2 <= 0.0:
        return (np.zeros_like(r), 0.0) if with_time else np.zeros_like(r)
    if c2 >= total:
        return (live.astype(float), math.inf) if with_time else live.astype(float)
    al, wl, tl = a[live], w[live], t1[live]
    mu = tl + 1.0 / al
    k = np.arange(1, _FIFO_K_MAX + 1, dtype=float)[:, None]

    def renewals(t2: float) -> np.ndarray:
        n = t2 / mu
        far = n > _FIFO_K_MAX / 2.0
        m = np.empty_like(mu)
        m[far] = n[far] + ((1.0 / (al[far] * mu[far])) ** 2 - 1.0) / 2.0
        near = ~far
        if near.any():
            room = t2 - k * tl[near]
            m[near] = np.where(room > 0.0, gammainc(k, al[near] * np.maximum(room, 0.0)), 0.0).sum(axis=0)
        return np.maximum(m, 0.0)

    def g(log_t: float) -> float:
        t2 = math.exp(log_t)
        occ = np.minimum(1.0, t2 / (mu * (renewals(t2) + 1.0)))
        return float(np.dot(wl, occ)) / total - c2 / total

    t_lo = c2 / float(np.dot(wl, 1.0 / mu)) / 4.0
    t2 = _solve_log_time(g, t_lo, 4.0 * max(float(mu.max()), t_lo))
    out = np.zeros_like(r)
    if math.isinf(t2):
        out[live] = 1.0
    else:
        m = renewals(t2)
        out[live] = m / (m + 1.0)
    return (out, t2) if with_time else out


LEVEL2_POLICIES = ("lru", "fifo")   # che_two_level_grouped's level 2: _renewal_level2, _renewal_fifo_level2


def che_two_level(rates: np.ndarray, c1: float, c2: float, sizes: np.ndarray | None = None,
                  counts: np.ndarray | None = None, *,
                  method: str = "renewal") -> tuple[float, float]:
    """Two LRU caches in series (e.g. Oracle buffer cache over the OS page cache).

    Level 1 is solved by Che. Level 2 sees only the level-1 miss stream, rate
    r_i (1 - h1_i); copies may sit in both levels (no exclusion), as when a
    buffered read fills both caches. method="irm" treats that miss stream as
    Poisson and applies Che again (the textbook form); it over-states level-2
    hits by up to ~0.1 when c2 is not much larger than c1 (an exact LRU
    cascade gets almost none when c2 < c1: level 2 then mostly holds blocks
    that level 1 still has). method="renewal" (default) keeps the miss
    stream's dead time, see _renewal_level2; it tracks an exact cascade within
    ~0.015 on Zipf loads. Returns (level-1 hit ratio, level-2 hit ratio), both
    as fractions of ALL requests.
    """
    if method not in ("renewal", "irm"):
        raise ValueError(f"method must be 'renewal' or 'irm', got {method!r}")
    r, s, m = _che_arrays(rates, sizes, counts)
    demand = m * r
    tot = float(demand.sum())
    if tot <= 0.0:
        return 0.0, 0.0
    t1 = che_time(r, c1, s, m)
    h1 = _hit_probs(r, t1)
    hit1 = min(1.0, float(np.dot(demand, h1)) / tot)
    if math.isinf(t1):
        return hit1, 0.0
    r2 = r * (1.0 - h1)
    if method == "irm":
        h2 = _hit_probs(r2, che_time(r2, c2, s, m))
    else:
        h2 = _renewal_level2(r, s * m, t1, float(c2))
    return hit1, min(1.0 - hit1, max(0.0, float(np.dot(demand * (1.0 - h1), h2)) / tot))


def che_two_level_hits(rates: np.ndarray, c1: float, c2: float, sizes: np.ndarray | None = None,
                       counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per-item (per-bucket) form of che_two_level (renewal method): (h1_i, h2_i), with h2_i
    the level-2 hit probability of a level-1 miss of item i. Their demand-weighted sums are
    exactly che_two_level's (hit1, hit2)."""
    r, s, m = _che_arrays(rates, sizes, counts)
    t1 = che_time(r, c1, s, m)
    h1 = _hit_probs(r, t1)
    if math.isinf(t1) or c2 <= 0.0:
        return h1, np.zeros_like(r)
    return h1, _renewal_level2(r, s * m, t1, float(c2))


def che_two_level_grouped(rates: np.ndarray, c1: float, c2: float, group: np.ndarray,
                          counts: np.ndarray | None = None,
                          group_counts: np.ndarray | None = None,
                          policy: str = "lru", with_times: bool = False, miss_scale: np.ndarray | None = None):
    """Two cache levels whose units differ: level 1 (LRU) caches items, level 2 (LRU or FIFO,
    `policy`) caches groups of them (the OS page cache holds 8 KB pages, each several 2 KB
    database blocks).

    `group[i]` is the level-2 unit of item i; `counts[i]` copies of item i (default 1) and
    `group_counts[g]` copies of unit g (default 1), so a bucket of m identical blocks packed
    P to a page is one item with count m and one group with count m / P. Level 1 is Che over
    items (characteristic time t1); a unit sees the superposed miss streams of its items,
    rate R2_g = sum r_i e^{-r_i t1} out of R_g = sum r_i. It is treated like one item of rate
    R_g with the dead time that gives the same miss stream, t1_g = ln(R_g / R2_g) / R_g (exact
    for a unit of one item), in the renewal form of `policy` with capacity c2 in units.
    Returns (h1_i, h2_i): item i's level-1 hit probability and the level-2 hit probability of
    its level-1 misses (its unit's). `policy` is level 2's replacement: "lru"
    (_renewal_level2) or "fifo" (_renewal_fifo_level2). `with_times`: also t1, level 2's
    time T2 (FIFO: a unit's stay from its insertion; LRU: from its last request) and, per item,
    its unit's level-1 miss rate R2_g (per copy), as (h1, h2, t1, t2, unit_miss): what
    level2_hit_at_eviction needs. `miss_scale` (per item, default 1): item i's level-1 misses are
    miss_scale_i r_i e^{-r_i t1}, where `rates` are stand-ins of the right occupancy but not the right
    misses (re-touched blocks: sim/db/buffer_cache.py)."""
    if policy not in LEVEL2_POLICIES:
        raise ValueError(f"policy must be one of {LEVEL2_POLICIES}, got {policy!r}")
    r = np.asarray(rates, dtype=float)
    m = np.ones_like(r) if counts is None else np.asarray(counts, dtype=float)
    g = np.asarray(group, dtype=np.intp)
    t1 = che_time(r, c1, None, m)
    h1 = _hit_probs(r, t1)
    if math.isinf(t1) or c2 <= 0.0:
        if with_times:   # level 1 holds everything: no read misses push a unit out of level 2
            return h1, np.zeros_like(r), t1, (math.inf if c2 > 0.0 else 0.0), np.zeros_like(r)
        return h1, np.zeros_like(r)
    n = int(g.max()) + 1
    big = np.bincount(g, weights=r, minlength=n)           # R_g, per copy of the unit
    miss = np.bincount(g, weights=r * (1.0 - h1), minlength=n)
    gm = np.ones(n) if group_counts is None else np.asarray(group_counts, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        dead = np.where(big > 0.0, np.log(big / np.maximum(miss, 1e-300)) / np.maximum(big, 1e-300), 0.0)
    if miss_scale is not None:
        # the same dead time (level 1's hold), fewer misses: a rate R' with R' e^{-R' dead} = the scaled misses,
        # R' dead = -W0(-misses x dead) (level 2 sees R' only through R' e^{-R' dead}: either root would do)
        scale = np.asarray(miss_scale, dtype=float)
        if scale.size and not (scale.min() >= 0.0 and scale.max() <= 1.0):
            raise ValueError(f"miss_scale must lie in [0, 1] (fewer misses than the rates give), got "
                             f"{scale.min()}..{scale.max()}")
        scaled = np.bincount(g, weights=(scale != 1.0).astype(float), minlength=n) > 0.0
        miss = np.bincount(g, weights=r * (1.0 - h1) * scale, minlength=n)
        x = np.minimum(miss * dead, np.nextafter(math.exp(-1.0), 0.0))   # W0 is nan at exactly -1/e
        with np.errstate(divide="ignore", invalid="ignore"):
            root = np.where(dead > 0.0, -np.real(lambertw(-x, 0)) / np.where(dead > 0.0, dead, 1.0), miss)
        big = np.where(scaled, root, big)
    level2 = _renewal_fifo_level2 if policy == "fifo" else _renewal_level2
    h2, t2 = level2(big, gm, dead, float(c2), with_time=True)
    if with_times:
        return h1, h2[g], t1, t2, miss[g]
    return h1, h2[g]


def level2_hit_at_eviction(rates: np.ndarray, t1: float, t2: float, h2: np.ndarray, other: np.ndarray,
                           update_share, policy: str = "lru") -> np.ndarray:
    """P(an item's level-2 unit is in level 2 when level 1 evicts the item dirty) (a database block
    DBWR writes at its eviction from the buffer cache, over an OS page cache of pages that hold
    several blocks), per item: a time-specific presence, not the time-average h2 of a read.

    Level 1 is Che's TTL (`t1`): item i (rate r, miss P p = e^{-r t1}, a touch changes it with P
    u = `update_share`) is read in at a miss (a level-2 request of its unit) and evicted E = t1 + X
    later, X the K touch gaps shorter than t1 (K geometric, P(K = k) = p (1 - p)^k) taken as
    exponential of their mean g = 1/r - t1 p / (1 - p) (as episode_writes). Only dirty residencies
    are written, P(dirty | K) = 1 - (1 - u)^{K+1}, which favours long ones: P(E > t1 + x | dirty) =
    [q_A e^{-x p/g} - w_B q_B e^{-x (1 - q_B)/g}] / (1 - w_B), q_A = 1 - p, q_B = (1 - p)(1 - u),
    w_B = p (1 - u) / (1 - q_B) = P(clean). While the item is cached its unit's other items miss
    as a Poisson stream of rate rho = `other` (the unit's level-1 misses less the item's own).
    - FIFO (`t2` the fixed stay from an insertion): the read found the unit (P `h2`, its remaining
      stay then taken uniform on (0, T2), as Poisson requests fall on an insertion's stay) or
      inserted it (stay T2). Once it has left, the other items' next miss reinserts it: present s
      after leaving with P G(s) = 1 - e^{-rho min(s, T2)} (exact for s <= T2; past T2 the alternating
      stays and absences are approximated by their first cycle).
    - LRU (`t2` the stay after the last request): the item's read refreshes the unit, so it is
      there at E < T2, and later if another item missed within T2 before: 1 - e^{-rho T2} P(E >= T2).
    Limits: t1 << T2 (a small level 1 under a big level 2) -> 1; t1 >> T2 -> 1 - e^{-rho T2} (only
    the other items' misses keep the unit), 0 for a unit of one item. The expectation over E is
    closed-form (f(E) piecewise exponential, constant past 2 T2), by E[f(E)] = f(t1) + integral of
    f'(e) P(E > e) de."""
    if policy not in LEVEL2_POLICIES:
        raise ValueError(f"policy must be one of {LEVEL2_POLICIES}, got {policy!r}")
    r = np.asarray(rates, dtype=float)
    shape = r.shape
    r, rho, h2, u = r.ravel(), _per_item(other, shape), _per_item(h2, shape, 1.0), _per_item(update_share, shape, 1.0)
    if not t2 > 0.0:
        return np.zeros(shape)
    if math.isinf(t2):
        return np.ones(shape)
    if math.isinf(t1):                   # never evicted: as if after a very long stay
        return (-np.expm1(-rho * t2)).reshape(shape)
    t1 = max(float(t1), 0.0)
    p, g = _ttl_gaps(r, t1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        qa, qb = 1.0 - p, (1.0 - p) * (1.0 - u)
        wb = np.where(qb < 1.0, p * (1.0 - u) / (1.0 - qb), 1.0)
        dirty = np.maximum(1.0 - wb, 1e-300)
        # S(e) = P(E > e | dirty) for e >= t1: sum over components c of coef_c e^{-lam_c (e - t1)}
        gg = np.where(g > 0.0, g, 1.0)
        lam = (np.where(g > 0.0, p / gg, np.inf), np.where(g > 0.0, (1.0 - qb) / gg, np.inf))
        coef = (qa / dirty, -wb * qb / dirty)

    fresh, hit = _presence_after(t1, lam, coef, t2, rho, policy)
    return np.clip((1.0 - h2) * fresh + h2 * hit, 0.0, 1.0).reshape(shape)


def level2_hit_at_checkpoint(rates: np.ndarray, update_share, delay: float, t1: float, t2: float,
                             other: np.ndarray, policy: str = "lru", h2=0.0, first=0.0) -> np.ndarray:
    """P(an item's level-2 unit is in level 2 when a checkpoint writes the item while it stays in level
    1) (a cached block the checkpoint timeout writes `delay` after the change that dirtied it), per item.

    A write that misses the page reads it (a partial-page write) and so leaves it in level 2 as a read
    miss would: fresh, a stay T2 (FIFO) from then; one that finds it leaves it as it was. So a write
    finds the unit with (1 - h) F_fresh(Delta) + h F_hit(Delta): Delta the time since the item's own
    previous access to the unit (its read, or its previous write), h the chance that access found the
    unit, F_fresh / F_hit the chances the unit is there Delta after an access that inserted / found it
    (level2_hit_at_eviction's f: the other items missing at `other` a unit of time, a found unit's
    remaining stay uniform on (0, T2); LRU: the access refreshes it, 1 - e^{-rho T2} P(Delta >= T2)).
    Delta = delay + W, W the wait for the change, counted in the item's touches within its stay in level
    1 (Che's TTL `t1`: each next touch comes, after a gap of mean g = 1/r - t1 p / (1 - p), with P 1 - p,
    and changes it with P u): the change comes after j more touches with P ~ q^j, q = (1 - u)(1 - p),
    so W is exponential of mean g / (1 - q) (1/c, c = r u, for an item always in level 1).
    - The first write of a stay (a share `first` of the writes) follows the read, whose hit is `h2`;
      the reading touch is the change with P 1 - q (given a change in the stay), else W as above.
    - A later one follows the previous write; its h is the writes' own, taken as the fixed point
      h = (1 - h) F_fresh + h F_hit, h = F_fresh / (1 + F_fresh - F_hit).
    Approximations: the stay's end is not weighed against delay + W; level 2's time T2 counts read
    misses only (the fills' own insertions do not shorten it)."""
    if policy not in LEVEL2_POLICIES:
        raise ValueError(f"policy must be one of {LEVEL2_POLICIES}, got {policy!r}")
    r = np.asarray(rates, dtype=float)
    shape = r.shape
    r, u, rho = r.ravel(), _per_item(update_share, shape, 1.0), _per_item(other, shape)
    h2, first = _per_item(h2, shape, 1.0), _per_item(first, shape, 1.0)
    if not t2 > 0.0:
        return np.zeros(shape)
    if math.isinf(t2):
        return np.ones(shape)
    delay = max(float(delay), 0.0)
    p, g = _ttl_gaps(r, t1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = (1.0 - u) * (1.0 - p)
        rate = np.where((g > 0.0) & np.isfinite(g) & (q < 1.0), (1.0 - q) / np.where(g > 0.0, g, 1.0), np.inf)
    lam = (rate,)
    fresh, hit = _presence_after(delay, lam, (np.ones_like(r),), t2, rho, policy)
    later = fresh if policy == "lru" else fresh / (1.0 + fresh - hit)
    fresh1, hit1 = _presence_after(delay, lam, (q,), t2, rho, policy)
    once = (1.0 - h2) * fresh1 + h2 * hit1
    return np.clip(first * once + (1.0 - first) * later, 0.0, 1.0).reshape(shape)


def level2_hit_after(h2, other: np.ndarray, t2: float, lo: float, hi: float, policy: str = "lru",
                     points: int = 8) -> np.ndarray:
    """P(an item's level-2 unit is in level 2 a delay after the item's last access to it, the delay
    uniform on (lo, hi)), per item: a re-touch that misses level 1 (Che's TTL lo) comes within the
    re-touch window hi of the touch it follows, so its unit's presence is the one that touch left, not
    the time average h2 of a read. The access found the unit with P `h2`; level2_hit_at_eviction's
    F_fresh / F_hit (the other items missing at `other` a unit of time) at the exact delay, averaged
    over it by Gauss-Legendre (`points` nodes). hi <= lo: at the delay lo."""
    if policy not in LEVEL2_POLICIES:
        raise ValueError(f"policy must be one of {LEVEL2_POLICIES}, got {policy!r}")
    rho = np.asarray(other, dtype=float)
    h2 = _per_item(h2, rho.shape, 1.0).reshape(rho.shape)
    if not t2 > 0.0:
        return np.zeros_like(rho)
    if math.isinf(t2):
        return np.ones_like(rho)
    nodes, weights = np.polynomial.legendre.leggauss(points) if hi > lo else (np.zeros(1), np.full(1, 2.0))
    exact = (np.full_like(rho, np.inf),)     # no part beyond the delay: the delay itself
    out = np.zeros_like(rho)
    for x, w in zip(nodes, weights):
        delay = lo + (max(hi, lo) - lo) * (x + 1.0) / 2.0
        fresh, hit = _presence_after(delay, exact, (np.ones_like(rho),), t2, rho, policy)
        out += w / 2.0 * ((1.0 - h2) * fresh + h2 * hit)
    return np.clip(out, 0.0, 1.0)


def _per_item(value, shape, high: float | None = None) -> np.ndarray:
    """A per-item argument (scalar or array) as a flat array of `shape`'s size, clipped to [0, high]."""
    a = np.asarray(value, dtype=float)
    return np.broadcast_to(np.maximum(a, 0.0) if high is None else np.clip(a, 0.0, high), shape).ravel()


def _ttl_gaps(r: np.ndarray, t1: float) -> tuple[np.ndarray, np.ndarray]:
    """(p, g) under Che's TTL `t1` for items touched at rates r: p = e^{-r t1} the chance a gap
    outlasts t1, and g the mean of a gap shorter than t1, t1 (1/x - 1/(e^x - 1)) with x = r t1 (its
    series where x is small); t1 infinite: p = 0, g = 1/r."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if math.isinf(t1):
            return np.zeros_like(r), np.where(r > 0.0, 1.0 / np.where(r > 0.0, r, 1.0), np.inf)
        x = r * t1
        g = np.where(x > 1e-6, t1 * (1.0 / np.where(x > 0.0, x, 1.0) - 1.0 / np.expm1(np.maximum(x, 1e-300))),
                     t1 * (0.5 - x / 12.0))
        return np.exp(-x), g


def _presence_after(t1: float, lam, coef, t2: float, rho: np.ndarray, policy: str):
    """(E f_fresh(E), E f_hit(E)) for E >= t1 with P(E > e) = S(e) = sum_c coef_c e^{-lam_c (e - t1)}
    (e >= t1; lam_c = inf: no part beyond t1): the chance a level-2 unit is there E after an access
    that inserted it (FIFO: f_fresh = 1 before T2, then G(e - T2)) or found it (remaining stay uniform:
    f_hit(e) = (max(T2 - e, 0) + int_{max(0, e - T2)}^{e} G) / T2), G(s) = 1 - e^{-rho min(s, T2)} the
    other items' misses bringing it back; LRU: both 1 before T2, G(T2) after. By E f(E) = f(t1) +
    integral_{t1}^{2 T2} f'(e) S(e) de (f is constant past 2 T2), in closed form."""
    zero = np.zeros_like(rho)

    def surv(e):                          # S(e), e >= t1
        out = zero.copy()
        for lm, cf in zip(lam, coef):
            out += np.where(np.isfinite(lm), cf * np.exp(-np.where(np.isfinite(lm), lm, 0.0) * (e - t1)), 0.0)
        return np.clip(out, 0.0, 1.0)

    def expint(k, w):                     # integral_0^w e^{-k y} dy, w >= 0
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(k * w > 1e-12, -np.expm1(-k * w) / np.where(k > 0.0, k, 1.0), w)

    def against(a, b, shift):
        """integral over [a, b] (a >= t1, a >= shift) of e^{-rho (e - shift)} S(e) de."""
        w = max(b - a, 0.0)
        out = zero.copy()
        if w <= 0.0:
            return out
        for lm, cf in zip(lam, coef):
            fin = np.isfinite(lm)
            lmf = np.where(fin, lm, 0.0)
            out += np.where(fin, cf * np.exp(-rho * (a - shift) - lmf * (a - t1)) * expint(rho + lmf, w), 0.0)
        return out

    stay = -np.expm1(-rho * t2)          # G(T2): present long after, kept by the other items' misses
    if policy == "lru":
        beyond = surv(t2) if t2 > t1 else np.ones_like(rho)
        out = 1.0 - (1.0 - stay) * beyond
        return out, out

    def ig(s):                            # integral_0^s G
        s1 = min(s, t2)
        with np.errstate(divide="ignore", invalid="ignore"):
            part = np.where(rho * s1 > 1e-8, s1 - (-np.expm1(-rho * s1)) / np.where(rho > 0.0, rho, 1.0),
                            rho * s1 * s1 / 2.0)
        return part + max(s - t2, 0.0) * stay

    fresh = np.ones_like(rho) if t1 < t2 else -np.expm1(-rho * min(t1 - t2, t2))
    hit = (max(t2 - t1, 0.0) + ig(t1) - ig(max(0.0, t1 - t2))) / t2
    if t1 < t2:
        fresh = fresh - surv(t2)                                 # the fresh stay ends at T2
        hit = hit - against(t1, t2, 0.0) / t2                    # f_hit' = -e^{-rho e} / T2
    lo = max(t1, t2)
    if lo < 2.0 * t2:
        # f_fresh' = rho e^{-rho (e - T2)}, f_hit' = (e^{-rho (e - T2)} - e^{-rho T2}) / T2
        part = against(lo, 2.0 * t2, t2)
        fresh = fresh + rho * part
        const = zero.copy()             # integral of S over [lo, 2 T2]
        for lm, cf in zip(lam, coef):
            fin = np.isfinite(lm)
            lmf = np.where(fin, lm, 0.0)
            const += np.where(fin, cf * np.exp(-lmf * (lo - t1)) * expint(lmf, 2.0 * t2 - lo), 0.0)
        hit = hit + (part - np.exp(-rho * t2) * const) / t2
    return fresh, hit


def lru_simulate(probabilities: np.ndarray, capacity: int, requests: int,
                 rng: np.random.Generator) -> float:
    """Exact LRU simulation under IRM; hit ratio after a warm-up (tests only).

    Warm-up is min(10 * capacity, requests // 5) requests, so a cold cache does
    not bias the estimate.
    """
    p = np.asarray(probabilities, dtype=float).ravel()
    if p.size == 0 or p.min() < 0.0 or not p.sum() > 0.0:
        raise ValueError("probabilities must be non-negative with a positive sum")
    capacity = operator.index(capacity)
    requests = operator.index(requests)
    if requests < 1:
        raise ValueError("requests must be >= 1")
    if capacity <= 0:
        return 0.0
    warm = min(10 * capacity, requests // 5)
    seq = rng.choice(p.size, size=requests, p=p / p.sum()).tolist()
    cache: OrderedDict[int, None] = OrderedDict()
    for x in seq[:warm]:
        if x in cache:
            cache.move_to_end(x)
        else:
            cache[x] = None
            if len(cache) > capacity:
                cache.popitem(last=False)
    hits = 0
    for x in seq[warm:]:
        if x in cache:
            cache.move_to_end(x)
            hits += 1
        else:
            cache[x] = None
            if len(cache) > capacity:
                cache.popitem(last=False)
    return hits / (requests - warm)
