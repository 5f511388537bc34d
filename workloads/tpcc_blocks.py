"""Where a TPC-C-like transaction's block touches land: the schema at W warehouses, rows packed
into blocks of the configured size, and the NURand skew of the keys (TPC-C 2.1.6).

Each transaction touches a few large, skewed objects (stock and customer rows and their index
leaves), old order data (uniform, but Delivery walks it in order), and small, hot objects
(warehouse, district, item, index branch blocks, the orders just inserted). The buffer cache
model (sim/db/buffer_cache.py) decides which touches miss; the popularity is not tuned to any result.

Constants (schema-derived estimates; none fitted):

- ROW_BYTES: TPC-C 1.3 row layouts (average lengths of the variable fields).
- BLOCK_OVERHEAD, PCTFREE: Oracle block header and ITLs (~90 bytes) and the default 10% free.
- INDEX_ENTRY_BYTES: key + rowid + entry header of a B-tree leaf entry.
- COLD_TOUCHES / UPDATES: block touches per transaction on the large objects, from the
  transaction profiles (TPC-C 2.4-2.8) at 10 order lines per New-Order: one table block and
  one index leaf per row looked up; Payment and Order-Status find the customer by last name
  60% of the time (TPC-C 2.5.1.2, 2.6.1.2; ~3 rows with that name, 2 blocks); Order-Status reads
  4 blocks of the customer's last order; Stock-Level joins the last 20 orders' ~200 lines with stock:
  the stock rows and index entries New-Order read for those orders (same warehouse, same items), so they
  are re-touches (RETOUCHED), each within the district's next 20 orders after New-Order's touch
  (20 x 10 W / 0.45 transactions: 88,889 at 200 warehouses), not independent draws: 1.78 a New-Order
  touch on average. A block a cache keeps that long is found again (sim/db/buffer_cache.py Retouch;
  at 200 warehouses and 2 KB blocks, reads a transaction (hot blocks' included) 25.5/15.0/10.9/7.1/6.0 as
  independent touches, 25.0/12.3/6.8/3.8/3.3 as re-touches, at 100 MB/500 MB/1 GB/2 GB/2.5 GB).
  Delivery touches, in each of 10 districts, the customer and the district's oldest undelivered
  order: its new-order entry, order row and order lines, all changed (walk_touches: these advance
  through the tables, so most touches find the block the district's previous Delivery left, and
  only WALK_BYTES / usable bytes of a block a touch enter a block not touched since the load).
  Everything else a transaction touches (LOGICAL_READS of tpcc.py minus these) is hot.
- Transactions pick their home warehouse uniformly; the NURand run-time constant C is taken
  as A/2 (any value in [0, A] is allowed). nurand_pmf is exact (checked against brute-force
  enumeration): item ids put 71% of draws on 10% of the keys.
- Key order (which rows share a block), after HammerDB's Oracle TPROC-C schema (src/oracle/oraoltp.tcl):
  heap tables are in load order (warehouse, then key); the stock index is keyed (item, warehouse)
  (STOCK_I1) and the customer index (warehouse, district, id) (CUSTOMER_I1).
- Hash clusters (`hash_clusters`, opt-in): stock and customer in single-table hash clusters
  (CREATE CLUSTER ... SINGLE TABLE HASHKEYS; Oracle8i Administrator's Guide ch. 18: a row is
  found by hashing its key, no index I/O), as Oracle's TPC-C schemas do; HammerDB's hash expressions
  order the rows key first: (s_i_id * W + s_w_id) puts one item's stock rows of all warehouses in
  adjacent blocks, (c_id * 10 W + c_w_id * 10 + c_d_id) one customer number's rows of all districts,
  so a block is as popular as its key (stock misses per transaction at 200 warehouses and a 2.5 GB
  cache of 2 KB blocks: 2.35 key first, 3.18 with the same clusters in load order). A lookup by id then touches the table
  block only; the by-last-name lookups (60% of Payment and Order-Status) still read a leaf of the
  name index, keyed (last name, district, warehouse) (CUSTOMER_I2; HASH_CLUSTER_INDEX_TOUCHES; its
  entries sized as the id index's).
  The gets stay in LOGICAL_READS: the CPU path length was fitted per transaction.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from sim.db.buffer_cache import Retouch, Segment

ROW_BYTES = {"warehouse": 89, "district": 95, "customer": 655, "history": 46, "new_order": 8, "orders": 24,
             "order_line": 54, "item": 82, "stock": 306}
BLOCK_OVERHEAD = 90.0
PCTFREE = 0.10
INDEX_ENTRY_BYTES = 20.0

ITEMS, CUSTOMERS_PER_DISTRICT, DISTRICTS, LAST_NAMES = 100_000, 3_000, 10, 1_000
INITIAL_ORDERS_PER_DISTRICT, INITIAL_NEW_ORDERS_PER_DISTRICT = 3_000, 900
LINES_PER_ORDER = 10

# block touches per transaction on the large objects (see the module docstring); Delivery's walk of each
# district's oldest order is split by block size between the blocks it enters and its frontier (walk_touches)
COLD_TOUCHES = {
    "stock":          {"new_order": 10.0},
    "stock_index":    {"new_order": 10.0},
    "stock_recent":   {"stock_level": 200.0},
    "stock_index_recent": {"stock_level": 200.0},
    "customer":       {"new_order": 1.0, "payment": 1.6, "order_status": 1.6, "delivery": 10.0},
    "customer_index": {"new_order": 1.0, "payment": 1.0, "order_status": 1.0, "delivery": 10.0},
    "old_orders":     {"order_status": 4.0},
}
UPDATES = {
    "stock":      {"new_order": 10.0},
    "customer":   {"payment": 1.0, "delivery": 10.0},
}
# index leaves still read with hash-clustered stock and customer: the last-name lookups
HASH_CLUSTER_INDEX_TOUCHES = {
    "stock_index":    {},
    "stock_index_recent": {},
    "customer_index": {"payment": 0.6, "order_status": 0.6},
}
# Delivery, in each district, takes the oldest new-order entry (an index-organised row), reads and updates
# its order row and reads and updates its 10 order lines: bytes of each object it moves past per district
WALK_BYTES = {"new_order": INDEX_ENTRY_BYTES, "orders": ROW_BYTES["orders"],
              "order_line": LINES_PER_ORDER * ROW_BYTES["order_line"]}
# Stock-Level reads the stock rows (and their index entries) of the items of its district's last RECENT_ORDERS
# orders (TPC-C 2.8.2.2), rows New-Order read for those orders: re-touches of stock and stock_index within
# the RECENT_ORDERS orders of the district that follow New-Order's touch (sim/db/buffer_cache.py Retouch)
RECENT_ORDERS = 20
RETOUCHED = {"stock": "stock_recent", "stock_index": "stock_index_recent"}
# touches of another segment's blocks (the walk's frontier is old order data; re-touches): no bytes, no
# files of their own
WITHIN = {"delivery_walk": "old_orders", **{again: seg for seg, again in RETOUCHED.items()}}
INSERTED_BYTES = {"new_order": ROW_BYTES["orders"] + ROW_BYTES["new_order"] + LINES_PER_ORDER * ROW_BYTES["order_line"],
                  "payment": ROW_BYTES["history"]}

# Undo (rollback) bytes per transaction (Oracle 8i, manual rollback segments), from which rows and columns
# each type changes (TPC-C 2.4-2.7) and Oracle's undo record sizes:
# - an updated row: the changed columns' before-images plus ~80 bytes of overhead (ITL, links, operation
#   header: J. Lewis, oracle-l, 24 Dec 2003, "Re: undo and insert"); a deleted row: the whole row + 80;
# - an inserted row: 64 bytes, plus 40 for the first change of a transaction (the ITL and the transaction
#   table's undo) (S. Adams, Ixora Q+A, 14 Mar 2001, "Undo record sizes");
# - an index entry inserted or deleted: the whole entry (INDEX_ENTRY_BYTES) + 80 (Lewis, ibid.).
# Changed column bytes are Oracle NUMBER/DATE lengths of the TPC-C columns (estimates: 2-7 bytes each).
# New-Order (10 lines): district D_NEXT_O_ID 80+4; 10 stock rows (S_QUANTITY, S_YTD, S_ORDER_CNT,
#   S_REMOTE_CNT, ~14 B) 10 x 94; orders, new_order, 10 order_line rows inserted 12 x 64, each with its
#   primary-key entry 12 x 100; + 40: 3,032 B.
# Payment: warehouse W_YTD 80+7, district D_YTD 80+7, customer (C_BALANCE, C_YTD_PAYMENT, C_PAYMENT_CNT
#   ~15 B) 95, plus C_DATA (500 B) for the 10% bad-credit customers (TPC-C 2.5.2.2) 50 on average; history
#   inserted (no index) 64; + 40: 423 B.
# Delivery (10 districts): each deletes a new_order row (80+8) and its key (100), sets O_CARRIER_ID (80+2)
#   and 10 OL_DELIVERY_D (10 x (80+1): the date was null), and updates C_BALANCE, C_DELIVERY_CNT (80+8):
#   10 x 1,168 + 40 = 11,720 B.
# Order-Status and Stock-Level change nothing.
UNDO_BYTES = {"new_order": 3032.0, "payment": 423.0, "delivery": 11720.0}


def undo_blocks_per_tx(mix: dict[str, float], block_size: float) -> float:
    """Undo blocks filled per transaction of the mix: an undo block has a block header but no PCTFREE
    (records are appended until it is full)."""
    total = sum(mix.values())
    return sum(mix.get(t, 0.0) / total * b for t, b in UNDO_BYTES.items()) / (block_size - BLOCK_OVERHEAD)


def undo_segment(mix: dict[str, float], block_size: float, rollback_size: float) -> Segment:
    """The rollback segments as a segment of the buffer cache: `rollback_size` bytes of undo blocks used in a
    circle, u undo blocks filled per transaction, so each block is filled once every rollback_size / block
    size / u transactions and not touched again until the circle comes back to it (reused as a new block:
    never read). Its filling counts as one touch (its records go in within a few transactions), and the touch
    changes it (update share 1): a block evicted before the circle returns is written once by DBWR; one still
    cached when it is refilled is written only by a checkpoint (the timeout), however often it is reused.
    The cache model is independent-reference (Che): the block's touches are a Poisson stream at its
    mean rate, not the strict circle (an estimate that smooths the step from 'all written' to 'all cached')."""
    blocks = max(1.0, float(np.ceil(rollback_size / block_size)))
    u = undo_blocks_per_tx(mix, block_size)
    return Segment("undo", np.array([u / blocks]), np.array([blocks]), 1.0 if u > 0.0 else 0.0, read_on_miss=False)


def usable(block_size: float) -> float:
    return (block_size - BLOCK_OVERHEAD) * (1.0 - PCTFREE)


def rows_per_block(row_bytes: float, block_size: float) -> int:
    return max(1, int(usable(block_size) // row_bytes))


@lru_cache(maxsize=8)
def nurand_pmf(a: int, lo: int, hi: int) -> np.ndarray:
    """Exact pmf of NURand(A, lo, hi) = (((rand(0,A) | rand(lo,hi)) + C) mod (hi-lo+1)) + lo,
    over lo..hi, with C = A // 2. A + 1 is a power of two; for a complete run of the low
    bits, each bit of x | a is set with probability 3/4, so only partial runs are counted."""
    bits = (a + 1).bit_length() - 1
    span = a + 1
    low = np.arange(span)
    pop = np.array([bin(v).count("1") for v in low])
    # A whole run of A + 1 x-values meets all A + 1 a-values: value v = x | a is hit by the pairs whose
    # bits are a subset of v's low bits, (3/4)^pop (1/4)^(bits - pop) of all span * span pairs.
    full = (0.75 ** pop) * (0.25 ** (bits - pop)) * span * span   # pair counts per value of the run
    counts = np.zeros(hi + span + 1, dtype=float)
    av = np.arange(span)
    for h in range(lo // span, hi // span + 1):
        first, last = max(lo, h * span), min(hi, h * span + a)
        if last - first + 1 == span:
            counts[h * span:h * span + span] += full
        else:
            for chunk in np.array_split(np.arange(first, last + 1), max(1, (last - first + 1) // 512)):
                vals = np.bitwise_or.outer(chunk, av).ravel()
                counts[:vals.max() + 1] += np.bincount(vals)
    n = hi - lo + 1
    c = a // 2
    pmf = np.zeros(n)
    v = np.nonzero(counts)[0]
    np.add.at(pmf, (v + c) % n if lo == 0 else (v + c) % n, counts[v])
    # NURand maps value v to ((v + C) mod n) + lo: index k of pmf is the key lo + k
    return pmf / pmf.sum()


def _packed(pmf: np.ndarray, per_block: int) -> np.ndarray:
    """Block probabilities when consecutive keys share a block."""
    pad = (-len(pmf)) % per_block
    return np.concatenate([pmf, np.zeros(pad)]).reshape(-1, per_block).sum(axis=1)


def _per_tx(touches: dict[str, float], mix: dict[str, float]) -> float:
    return sum(mix.get(t, 0.0) * n for t, n in touches.items())


def walk_touches(block_size: float) -> tuple[float, float]:
    """Delivery's touches of old order data per district, (entering, frontier): of the three blocks it
    touches there (new-order entry, order row, first block of the lines; the lines' update re-touches a
    block just read: a hot touch), a share enters blocks no one has touched since the load (WALK_BYTES
    over a block's usable bytes), and the rest re-touch the district's current block of each object, last
    touched by the district's previous Delivery (W / (0.04 X) seconds before: cached if the cache keeps
    blocks that long)."""
    entering = min(float(len(WALK_BYTES)), sum(b / usable(block_size) for b in WALK_BYTES.values()))
    return entering, len(WALK_BYTES) - entering


def touch_maps(block_size: float, hash_clusters: bool = False) -> tuple[dict, dict]:
    """(block touches, block changes) per transaction type on each large object."""
    entering, frontier = walk_touches(block_size)
    cold = {**COLD_TOUCHES, **HASH_CLUSTER_INDEX_TOUCHES} if hash_clusters else dict(COLD_TOUCHES)
    cold["old_orders"] = {**cold["old_orders"], "delivery": DISTRICTS * entering}
    walk = {"old_orders": {"delivery": DISTRICTS * entering}, "delivery_walk": {"delivery": DISTRICTS * frontier}}
    cold["delivery_walk"] = walk["delivery_walk"]
    return cold, {**UPDATES, **walk}


def _major(pmf: np.ndarray, per_block: int, copies: int) -> tuple[np.ndarray, float]:
    """Block probabilities and blocks per key when rows are ordered key first, then the `copies` rows
    of each key (one per warehouse or district): a block holds one key's rows (copies / per_block
    blocks a key), or, with more rows a block than a key has, per_block / copies keys' (a block's
    probability is the share of the row sequence it holds: keys may straddle blocks)."""
    if per_block <= copies:
        return pmf, copies / per_block
    keys = per_block / copies                        # keys a block, possibly fractional
    edges = np.arange(math.ceil(len(pmf) / keys) + 1) * keys
    edges[-1] = len(pmf)
    whole = np.minimum(np.floor(edges).astype(int), len(pmf))
    mass = np.concatenate([[0.0], np.cumsum(pmf)])
    # the pmf mass below a fractional key position x: whole keys, then the part of key floor(x)
    below = mass[whole] + np.where(whole < len(pmf), pmf[np.minimum(whole, len(pmf) - 1)], 0.0) * (edges - whole)
    return np.diff(below), 1.0


def segments(warehouses: int, block_size: float, mix: dict[str, float],
             logical_reads: dict[str, float], hash_clusters: bool = False) -> list[Segment]:
    """The TPC-C block popularity at this scale, per transaction of the given mix."""
    total = sum(mix.values())
    mix = {t: v / total for t, v in mix.items()}
    cold_map, updates = touch_maps(block_size, hash_clusters)
    out = []

    # a district's last RECENT_ORDERS orders came in over this many transactions
    window = RECENT_ORDERS * warehouses * DISTRICTS / mix["new_order"] if mix.get("new_order") else math.inf

    def add(name: str, block_pmf: np.ndarray, copies: float, adjacent: bool = False):
        touches = _per_tx(cold_map[name], mix)
        upd = _per_tx(updates.get(name, {}), mix)
        retouch = None
        if name in RETOUCHED:
            again = _per_tx(cold_map.get(RETOUCHED[name], {}), mix)
            if touches > 0.0:
                retouch = Retouch(RETOUCHED[name], again / touches, window)
            else:   # no New-Order: Stock-Level's rows are just rows it reads (their retouches miss as they do)
                touches, retouch = again, Retouch(RETOUCHED[name], 0.0, math.inf)
        out.append(Segment(name, block_pmf * touches / copies, np.full(len(block_pmf), float(copies)),
                           upd / touches if touches else 0.0, adjacent=adjacent, retouch=retouch))

    def keyed(name: str, pmf: np.ndarray, per_block: int, copies: int):
        """Rows ordered key first (_major): a key's blocks are adjacent, so a page holds one key's."""
        add(name, *_major(pmf, per_block, copies), adjacent=True)

    item = nurand_pmf(8191, 1, ITEMS)
    cust = nurand_pmf(1023, 1, CUSTOMERS_PER_DISTRICT)
    leaf = max(1, int(usable(block_size) // INDEX_ENTRY_BYTES))
    stock_rows, cust_rows = rows_per_block(ROW_BYTES["stock"], block_size), rows_per_block(ROW_BYTES["customer"], block_size)
    districts = warehouses * DISTRICTS
    names = nurand_pmf(255, 0, LAST_NAMES - 1)
    # heap tables in load order (warehouse, then key); HammerDB's hash expressions put one item's stock
    # rows of all warehouses together instead, and one customer number's rows of all districts
    if hash_clusters:
        keyed("stock", item, stock_rows, warehouses)
    else:
        add("stock", _packed(item, stock_rows), warehouses)
    # the stock index is keyed (item, warehouse) (HammerDB's STOCK_I1): a leaf holds one item's entries
    keyed("stock_index", item, leaf, warehouses)
    if hash_clusters:
        keyed("customer", cust, cust_rows, districts)
    else:
        add("customer", _packed(cust, cust_rows), districts)
    # customer index: keyed (warehouse, district, id); with hash clusters only the name index is read,
    # keyed (last name, district, warehouse) (HammerDB's CUSTOMER_I2)
    if hash_clusters:
        keyed("customer_index", names, leaf, districts * CUSTOMERS_PER_DISTRICT // LAST_NAMES)
    else:
        add("customer_index", _packed(cust, leaf), districts)
    old_bytes = districts * (INITIAL_ORDERS_PER_DISTRICT * (ROW_BYTES["orders"] + LINES_PER_ORDER * ROW_BYTES["order_line"])
                             + INITIAL_NEW_ORDERS_PER_DISTRICT * ROW_BYTES["new_order"])
    add("old_orders", np.array([1.0]), float(np.ceil(old_bytes / usable(block_size))))
    add("delivery_walk", np.array([1.0]), float(districts * len(WALK_BYTES)))
    # hot: item, warehouse, district, index branch blocks and the last 20 orders per district
    rpb = lambda table: rows_per_block(ROW_BYTES[table], block_size)  # noqa: E731
    leaves = warehouses * (ITEMS + DISTRICTS * CUSTOMERS_PER_DISTRICT) / leaf
    hot_blocks = (ITEMS / rpb("item") + warehouses / rpb("warehouse") + warehouses * DISTRICTS / rpb("district")
                  + leaves / leaf + warehouses * DISTRICTS * 20 * LINES_PER_ORDER / rpb("order_line"))
    hot_touches = sum(share * touches(kind, block_size, logical_reads, hash_clusters)["hot"] for kind, share in mix.items())
    out.append(Segment("hot", np.array([hot_touches / np.ceil(hot_blocks)]), np.array([np.ceil(hot_blocks)]), 0.0))
    return out


def cold_touches(kind: str, block_size: float, hash_clusters: bool = False) -> dict[str, float]:
    """Block touches of one transaction type on each large object."""
    cold, _ = touch_maps(block_size, hash_clusters)
    return {name: per.get(kind, 0.0) for name, per in cold.items() if per.get(kind, 0.0) > 0.0}


def touches(kind: str, block_size: float, logical_reads: dict[str, float], hash_clusters: bool = False) -> dict[str, float]:
    """Block touches of one transaction type by segment: its cold touches and the rest of its logical reads,
    on the hot blocks (item, district, index branches, the latest orders: they miss only in a small cache)."""
    cold = cold_touches(kind, block_size, hash_clusters)
    return {**cold, "hot": max(logical_reads.get(kind, 0.0) - sum(cold.values()), 0.0)}


def updates(block_size: float) -> dict[str, dict[str, float]]:
    """Block changes per transaction type on each large object (the segments DBWR writes)."""
    return touch_maps(block_size)[1]


def appended_blocks_per_tx(mix: dict[str, float], block_size: float) -> float:
    """New blocks filled by inserts per transaction: each is written once by DBWR."""
    total = sum(mix.values())
    return sum(mix.get(t, 0.0) / total * b for t, b in INSERTED_BYTES.items()) / usable(block_size)
