"""Exact class capacity of the restricted relaxation of a matrix-product sub-DAG.

CP-SAT proves :func:`~spartition.partition.capacity.class_capacity` on a few
hundred nodes, but on the Q K^T products of an exact-attention DAG with
n = 8, d = 4 its bound stays at the LP value. This module solves the same
``restrict`` relaxation exactly by decomposition, for sub-DAGs with the shape
of a matrix product (:mod:`spartition.partition.product_shape`): after the
inputs are removed, the restricted DAG falls into components (one per output
entry: its products and its sum), each fed by one "row" group of inputs and
one "column" group, every (row, column) pair owning exactly one component
and all components alike.

The reasoning, each step exact for the relaxation (see :func:`product_capacity`
Notes): a set may leave out the inputs; a component's contribution depends
only on which of its entry nodes have all their input predecessors in the
dominator, i.e. on the row mask R (the row's inputs in D) and the column mask
C; so a solution is a choice of masks plus, per component, one Pareto point
(dominator nodes inside it, minimum-set nodes, weight) of a table computed by
brute force over the component. With the column masks fixed the rows are
independent, so the value is an n-fold max-plus power of one row table. The
column masks range over multisets, each first bounded by Lagrangian
relaxation of the two budgets and evaluated exactly only if its bound can
beat the best value so far.

The optimum is returned with its set, re-checked (P2 by max-flow, P3 with
the exits exempt, convexity) by :func:`~spartition.partition.sets.verify_set`.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from spartition.core.dag import compact, strip_isolated
from spartition.errors import SpartitionError
from spartition.partition.product_shape import ProductStructure, product_structure
from spartition.partition.sets import CapacityResult, restricted_dag, verify_set
from spartition.partition.weights import node_weights, weight_label
from spartition.status import Status

__all__ = [
    "column_multisets",
    "component_options",
    "covered_table",
    "lagrangian_bound",
    "lagrangian_bounds",
    "ProductProblem",
    "product_capacity",
    "product_problem",
]

_NEG = -(10**9)
MAX_COLUMN_MULTISETS = 3_000_000


def _mask_sizes(count: int) -> np.ndarray:
    """Number of ones of every mask 0 .. count - 1."""
    return np.array([bin(m).count("1") for m in range(count)], dtype=np.int64)


def component_options(ps: ProductStructure, X: int, convex: bool) -> dict:
    """Pareto options of one component for each covered set of entry nodes.

    Parameters
    ----------
    ps : ProductStructure
    X : int
    convex : bool

    Returns
    -------
    dict
        ``covered mask -> list of (dc, mc, w, T, Dp)``: with the entry nodes of
        ``covered`` (bit = component position) shielded from the inputs, a
        set T of the component with ``dc`` dominator nodes Dp inside the
        component, ``mc`` counted minimum-set nodes and weight ``w``; only
        the points not dominated in (dc, mc, -w), ``(0, 0, 0)`` included.
    """
    k = ps.size
    subsets = np.arange(1 << k, dtype=np.int64)
    bit = 1 << np.arange(k, dtype=np.int64)
    has = (subsets[:, None] & bit[None, :]) != 0  # has[T, v]
    weight = has @ np.array(ps.weight, dtype=np.int64)
    succ_mask = np.zeros(k, dtype=np.int64)
    anc_mask = np.zeros(k, dtype=np.int64)
    for v, preds in enumerate(ps.local_preds):
        for u in preds:
            succ_mask[u] |= 1 << v
            anc_mask[v] |= (1 << u) | anc_mask[u]
    desc_mask = np.zeros(k, dtype=np.int64)
    for v in range(k - 1, -1, -1):
        for t in range(v + 1, k):
            if succ_mask[v] >> t & 1:
                desc_mask[v] |= (1 << t) | desc_mask[t]
    counted = np.array([not e for e in ps.exempt], dtype=bool)
    is_min = has & ((subsets[:, None] & succ_mask[None, :]) == 0) & counted[None, :]
    mc = is_min.sum(axis=1)
    ok = np.ones(1 << k, dtype=bool)
    if convex:
        for v in range(k):
            hole = ~has[:, v] & ((subsets & anc_mask[v]) != 0) & ((subsets & desc_mask[v]) != 0)
            ok &= ~hole
    entries = [v for v in range(k) if ps.row_slots[v] or ps.col_slots[v]]
    entry_mask = sum(1 << v for v in entries)
    direct = [sum(1 << u for u in preds) for preds in ps.local_preds]
    dc_of = _mask_sizes(1 << k)
    out = {}
    for cov_bits in range(1 << len(entries)):
        covered = sum(1 << entries[b] for b in range(len(entries)) if cov_bits >> b & 1)
        exposed = entry_mask & ~covered  # entry nodes with an input predecessor outside D
        best: dict = {}
        for Dp in range(1 << k):
            if dc_of[Dp] > X:
                continue
            reached = 0
            for v in range(k):
                if not Dp >> v & 1 and (exposed >> v & 1 or reached & direct[v]):
                    reached |= 1 << v
            valid = ok & ((subsets & reached) == 0)
            for T in np.flatnonzero(valid & (mc <= X)):
                key = (int(dc_of[Dp]), int(mc[T]))
                if key not in best or weight[T] > best[key][0]:
                    best[key] = (int(weight[T]), int(T), Dp)
        out[covered] = _pareto(best)
    return out


def _pareto(best: dict) -> list:
    """Points (dc, mc) -> (w, T, Dp) that no point with dc' <= dc, mc' <= mc matches in weight."""
    points = []
    for (dc, mc), (wt, T, Dp) in sorted(best.items()):
        if any(d2 <= dc and m2 <= mc and w2 >= wt for d2, m2, w2, _, _ in points):
            continue
        points.append((dc, mc, wt, T, Dp))
    if not any(p[0] == 0 and p[1] == 0 for p in points):
        points.insert(0, (0, 0, 0, 0, 0))
    return points


def covered_table(ps: ProductStructure) -> np.ndarray:
    """``cov[R, C]``: the entry positions shielded when row mask R and column mask C are in D.

    Parameters
    ----------
    ps : ProductStructure

    Returns
    -------
    numpy.ndarray
        ``(2^rows, 2^cols)`` bitmasks of component positions.
    """
    dr, dcol = len(ps.rows[0]), len(ps.cols[0])
    cov = np.zeros((1 << dr, 1 << dcol), dtype=np.int64)
    entries = [v for v in range(ps.size) if ps.row_slots[v] or ps.col_slots[v]]
    for R in range(1 << dr):
        for C in range(1 << dcol):
            cov[R, C] = sum(1 << v for v in entries
                            if all(R >> s & 1 for s in ps.row_slots[v]) and all(C >> s & 1 for s in ps.col_slots[v]))
    return cov


def _conv(A: np.ndarray, pts, X: int, arg: np.ndarray | None = None) -> np.ndarray:
    """Max-plus product of table A (dominator x minimum set) with a list of points (dc, mc, w, ...)."""
    out = np.full((X + 1, X + 1), _NEG, dtype=np.int64)
    for p, point in enumerate(pts):
        a, b, v = point[0], point[1], point[2]
        if a > X or b > X:
            continue
        cand = A[:X + 1 - a, :X + 1 - b] + v
        view = out[a:, b:]
        better = cand > view
        view[better] = cand[better]
        if arg is not None:
            arg[a:, b:][better] = p
    return out


def _points(A: np.ndarray) -> list:
    """Pareto points (a, b, value) of a raw table: entries no smaller-budget entry matches."""
    mono = np.maximum.accumulate(np.maximum.accumulate(A, axis=0), axis=1)
    keep = A > _NEG // 2
    keep[1:, :] &= A[1:, :] > mono[:-1, :]
    keep[:, 1:] &= A[:, 1:] > mono[:, :-1]
    return [(int(a), int(b), int(A[a, b])) for a, b in zip(*np.nonzero(keep))]


def _unit(X: int) -> np.ndarray:
    t = np.full((X + 1, X + 1), _NEG, dtype=np.int64)
    t[0, 0] = 0
    return t


def column_multisets(num_masks: int, n_cols: int, max_size: int) -> np.ndarray:
    """Count vectors (one row per multiset of ``n_cols`` column masks of total size <= ``max_size``).

    Parameters
    ----------
    num_masks : int
        Column masks there are (``2^inputs per column``).
    n_cols : int
        Columns.
    max_size : int
        Bound on the number of column inputs in the dominator.

    Returns
    -------
    numpy.ndarray
        ``counts[m, C]``: how often mask C occurs in multiset m.

    Raises
    ------
    ValueError
        If there are too many multisets to enumerate.

    Examples
    --------
    >>> column_multisets(2, 2, 2).tolist()
    [[2, 0], [1, 1], [0, 2]]
    """
    every = math.comb(num_masks + n_cols - 1, n_cols)
    if every > 10 * MAX_COLUMN_MULTISETS:
        raise ValueError(f"{every} multisets of {n_cols} column masks out of {num_masks}: too many to enumerate")
    sizes = _mask_sizes(num_masks)
    flat = np.fromiter(itertools.chain.from_iterable(
        itertools.combinations_with_replacement(range(num_masks), n_cols)), dtype=np.int64, count=every * n_cols)
    arr = flat.reshape(every, n_cols)
    arr = arr[sizes[arr].sum(axis=1) <= max_size]
    counts = np.zeros((len(arr), num_masks), dtype=np.int64)
    for k in range(n_cols):
        np.add.at(counts, (np.arange(len(arr)), arr[:, k]), 1)
    return counts


def lagrangian_bound(Y: np.ndarray, cov: np.ndarray, options: dict, X: int, n_rows: int,
                     lam: float, mu: float) -> np.ndarray:
    """Upper bound on the value of each column multiset (rows of ``Y``) for one pair of multipliers.

    For multipliers ``lam`` (dominator budget) and ``mu`` (minimum-set
    budget), both >= 0, weak duality gives
    ``lam (X - |C|) + mu X + n_rows * max_R (sum_C Y_C phi(R, C) - lam |R|)``
    with ``phi(R, C) = max over the options of cov[R, C] of (w - lam dc - mu mc)``.

    Parameters
    ----------
    Y : numpy.ndarray
        Column multisets (:func:`column_multisets`).
    cov : numpy.ndarray
        :func:`covered_table`.
    options : dict
        :func:`component_options`, restricted to the covered sets in ``cov``.
    X : int
    n_rows : int
    lam, mu : float
        The multipliers, at least 0.

    Returns
    -------
    numpy.ndarray
        One upper bound per multiset.
    """
    nr, nc = cov.shape
    rsize = _mask_sizes(nr)
    csize = Y @ _mask_sizes(nc)
    phi_c = {c: max(p[2] - lam * p[0] - mu * p[1] for p in opts) for c, opts in options.items()}
    phi = np.array([[phi_c[int(cov[R, C])] for C in range(nc)] for R in range(nr)], dtype=float)
    row = Y @ phi.T - lam * rsize[None, :]
    return n_rows * row.max(axis=1) + lam * (X - csize) + mu * X


def lagrangian_bounds(Y: np.ndarray, cov: np.ndarray, options: dict, X: int, n_rows: int,
                      lambdas, mus) -> np.ndarray:
    """The minimum of :func:`lagrangian_bound` over a grid of multipliers.

    Parameters
    ----------
    Y, cov, options, X, n_rows
        As in :func:`lagrangian_bound`.
    lambdas, mus : sequence of float

    Returns
    -------
    numpy.ndarray
        One upper bound per multiset.
    """
    best = np.full(len(Y), np.inf)
    for lam in lambdas:
        for mu in mus:
            np.minimum(best, lagrangian_bound(Y, cov, options, X, n_rows, lam, mu), out=best)
    return best


def _search(Y: np.ndarray, cov: np.ndarray, options: dict, X: int, n_rows: int, ev, lambdas, mus) -> tuple:
    """(best value, its multiset, multisets evaluated): Lagrangian pruning, then exact values best bound first.

    A coarse grid bounds every multiset; the few with the largest bounds
    give a first best value; the fine grid is then applied to the survivors
    only, each multiplier pair dropping those it bounds by the best value.
    """
    coarse = lagrangian_bounds(Y, cov, options, X, n_rows, lambdas[::4], mus[::4])
    best, best_y, evaluated = -1, None, 0
    for idx in np.argsort(-coarse, kind="stable")[:16]:
        evaluated += 1
        val = ev.value(Y[idx])
        if val > best:
            best, best_y = val, Y[idx]
    alive = np.flatnonzero(np.floor(coarse + 1e-9) > best)
    bound = coarse[alive]
    for lam in lambdas:
        for mu in mus:
            if not len(alive):
                break
            np.minimum(bound, lagrangian_bound(Y[alive], cov, options, X, n_rows, lam, mu), out=bound)
            keep = np.floor(bound + 1e-9) > best
            alive, bound = alive[keep], bound[keep]
    for k in np.argsort(-bound, kind="stable"):
        if np.floor(bound[k] + 1e-9) <= best:
            break
        evaluated += 1
        val = ev.value(Y[alive[k]])
        if val > best:
            best, best_y = val, Y[alive[k]]
    return best, best_y, evaluated


class _Evaluator:
    """Exact value of a column multiset: rows are independent given the columns."""

    def __init__(self, cov, options, X, n_rows):
        self.cov, self.X, self.n_rows = cov, X, n_rows
        self.pts = {c: [p[:3] for p in opts] for c, opts in options.items()}
        self.rsize = _mask_sizes(cov.shape[0]).tolist()
        self.csize = _mask_sizes(cov.shape[1]).tolist()
        self.powers: dict = {}
        self.rows: dict = {}

    def power(self, c: int, k: int) -> list:
        key = (c, k)
        if key not in self.powers:
            if k == 1:
                self.powers[key] = self.pts[c]
            else:
                self.powers[key] = _points(_conv(self.table(c, k - 1), self.pts[c], self.X))
        return self.powers[key]

    def table(self, c: int, k: int) -> np.ndarray:
        return _conv(_unit(self.X), self.power(c, k), self.X)

    def row_table(self, R: int, y) -> np.ndarray:
        counts: dict = {}
        for C, k in enumerate(y):
            if k:
                c = int(self.cov[R, C])
                counts[c] = counts.get(c, 0) + int(k)
        key = tuple(sorted(counts.items()))
        if key not in self.rows:
            acc = _unit(self.X)
            for c, k in key:
                acc = _conv(acc, self.power(c, k), self.X)
            self.rows[key] = acc
        return self.rows[key]

    def row_choice(self, y) -> tuple:
        """(G, argR): the best row table over row masks, shifted by the row's own inputs."""
        X = self.X
        G = np.full((X + 1, X + 1), _NEG, dtype=np.int64)
        argR = np.full((X + 1, X + 1), -1, dtype=np.int64)
        for R, r in enumerate(self.rsize):
            if r > X:
                continue
            shifted = np.full_like(G, _NEG)
            shifted[r:, :] = self.row_table(R, y)[:X + 1 - r, :]
            better = shifted > G
            G[better] = shifted[better]
            argR[better] = R
        return G, argR

    def value(self, y) -> int:
        X = self.X
        budget = X - sum(self.csize[C] * int(k) for C, k in enumerate(y))
        G, _ = self.row_choice(y)
        gp = _points(G)
        total = G
        for _ in range(self.n_rows - 1):
            total = _conv(total, gp, X)
        return int(total[:budget + 1, :].max())


def _symmetric(cov: np.ndarray, options: dict) -> bool:
    if cov.shape[0] != cov.shape[1]:
        return False
    key = {c: [p[:3] for p in opts] for c, opts in options.items()}
    return all(key[int(cov[R, C])] == key[int(cov[C, R])] for R in range(cov.shape[0]) for C in range(cov.shape[1]))


def _witness(ev: _Evaluator, y, options: dict) -> tuple:
    """Row masks and, per (row, column), the option index of an optimal solution for columns ``y``."""
    X = ev.X
    columns = [C for C, k in enumerate(y) for _ in range(int(k))]
    budget = X - sum(ev.csize[C] for C in columns)
    G, argR = ev.row_choice(y)
    gp = _points(G)
    total, args = G, []
    for _ in range(ev.n_rows - 1):
        arg = np.full((X + 1, X + 1), -1, dtype=np.int64)
        total = _conv(total, gp, X, arg)
        args.append(arg)
    sub = total[:budget + 1, :]
    a, b = (int(t) for t in np.unravel_index(int(np.argmax(sub)), sub.shape))
    cells = []
    for arg in reversed(args):
        p = int(arg[a, b])
        cells.append(gp[p][:2])
        a, b = a - gp[p][0], b - gp[p][1]
    cells.append((a, b))
    rows = []
    for a, b in cells:
        R = int(argR[a, b])
        a -= ev.rsize[R]
        # redo this row's product column by column, keeping the choices
        tables = [_unit(X)]
        choice_args = []
        for C in columns:
            arg = np.full((X + 1, X + 1), -1, dtype=np.int64)
            tables.append(_conv(tables[-1], ev.pts[int(ev.cov[R, C])], X, arg))
            choice_args.append(arg)
        picks = []
        for j in range(len(columns) - 1, -1, -1):
            p = int(choice_args[j][a, b])
            opt = ev.pts[int(ev.cov[R, columns[j]])][p]
            picks.append(p)
            a, b = a - opt[0], b - opt[1]
        rows.append((R, picks[::-1]))
    return columns, rows


@dataclass(frozen=True)
class ProductProblem:
    """The part of :func:`product_capacity` that does not depend on X: the restricted DAG and its structure.

    Built by :func:`product_problem`; pass it as ``dag`` to solve several X on one DAG without
    rebuilding it (the copy, compaction and restriction cost more than a small X's search).
    """

    full: object
    weight: object
    total_weight: int
    cdag: object
    wsub: np.ndarray
    exempt: np.ndarray
    ps: ProductStructure
    cov: np.ndarray


def product_problem(dag, weight=None, restrict=None) -> ProductProblem:
    """The X-independent part of :func:`product_capacity` on ``dag`` (see there for ``weight``, ``restrict``).

    Examples
    --------
    >>> from spartition.core.registry import build
    >>> G = build("attention-forward", n=2, d=2)
    >>> pb = product_problem(G, "op=mul,tensor=QK", [v for v in G if v.startswith("S_")])
    >>> [product_capacity(pb, X).upper_bound for X in (5, 8)] == [product_capacity(G, X, "op=mul,tensor=QK",
    ...     [v for v in G if v.startswith("S_")]).upper_bound for X in (5, 8)]
    True
    """
    G = strip_isolated(dag)
    if restrict is None:
        restrict = [v for v in G if G.out_degree(v) == 0]
    full = compact(G)
    wmap = node_weights(G, weight)
    w = np.array([wmap[v] for v in full.names], dtype=np.int64)
    cdag, wsub, exempt = restricted_dag(full, w, [str(v) for v in restrict])
    ps = product_structure(cdag, wsub, exempt)
    return ProductProblem(full, weight, int(w.sum()), cdag, wsub, exempt, ps, covered_table(ps))


def product_capacity(dag, X: int, weight=None, restrict=None, convex: bool = True,
                     lambdas=None, mus=None):
    """The exact maximum of the ``restrict`` relaxation of U(X) on a matrix-product sub-DAG.

    Parameters
    ----------
    dag : networkx.DiGraph or ProductProblem
        The CDAG (isolated nodes are removed first), or its X-independent
        part from :func:`product_problem` (then ``weight`` and ``restrict``
        are those it was built with and must not be given).
    X : int
        The bound on the dominator and on the counted minimum set.
    weight : None, str, dict or callable
        See :func:`~spartition.partition.weights.node_weights`.
    restrict : iterable of node ids, optional
        The kept nodes: the relaxation is the sub-DAG of them and their
        ancestors, with its exits exempt from P3 (as in
        :func:`~spartition.partition.capacity.class_capacity`). For the
        products of S = Q K^T of an attention DAG: the ``S_i_j`` nodes.
        Default: the outputs, i.e. the whole DAG, which must then itself be
        a matrix product (no relaxation: the result is U, status ``OPTIMAL``).
    convex : bool
        Require convexity (as every class of a partition is convex).
    lambdas, mus : sequence of float, optional
        Multiplier grids of the Lagrangian pruning (they change the running
        time only, never the value).

    Returns
    -------
    CapacityResult
        Status ``RELAXED``: ``upper_bound`` is the relaxation's maximum,
        an upper bound on U; ``capacity`` 0 and no nodes (no set of the full
        DAG is claimed). Status ``OPTIMAL`` when the restriction is the whole
        DAG: ``capacity`` = ``upper_bound`` = U with its set and dominator. ``parameters`` holds the relaxed set and dominator
        (verified), the counts of column multisets bounded and evaluated,
        and the rows' and columns' masks of the optimum.

    Raises
    ------
    ValueError
        If the restricted DAG is not a complete matrix-product shape (the
        message says which part breaks it), or the enumeration is too large.

    Notes
    -----
    Exactness, for the relaxation (R = the restricted DAG, exits exempt):

    1. Inputs can be left out of the set: they weigh 0, no node has them as
       successors (so the counted minimum set only shrinks), and no path
       passes through them (convexity is kept).
    2. With inputs out of the set, every path inside R from an input enters
       one component through an entry node and stays there, so P2, P3 and
       convexity split over components; the dominator is the inputs in D
       (a row mask R_i and a column mask C_j per group) plus nodes inside
       components, and a component only sees which entry nodes have all
       their input predecessors in D.
    3. A component's possibilities are the non-dominated (dc, mc, w) of a
       brute force over its subsets (:func:`component_options`); the budgets
       are ``sum |R_i| + sum |C_j| + sum dc <= X`` and ``sum mc <= X``.
    4. Columns are interchangeable (identical components), so only the
       multiset of column masks matters; given it, rows choose independently,
       and the best total is the n-fold max-plus power of the best row table
       (budgets as a 2-D table). If swapping rows and columns maps the
       problem to itself, column multisets with more than X / 2 inputs are
       skipped (one of the two sides has at most X / 2).
    5. Lagrangian relaxation of both budgets bounds each multiset
       (:func:`lagrangian_bound`): a coarse multiplier grid on all of them,
       exact values of the 16 best for a first incumbent, the fine grid on
       the survivors; the rest are evaluated best bound first until no bound
       can beat the best value. A multiset is dropped only when a valid
       bound is at most a value already achieved.

    Examples
    --------
    >>> from spartition.core.registry import build
    >>> G = build("attention-forward", n=2, d=2)
    >>> keep = [v for v in G if v.startswith("S_")]
    >>> product_capacity(G, 5, weight="op=mul,tensor=QK", restrict=keep).upper_bound
    5

    References
    ----------
    Hong & Kung (1981); the per-class lemmas for attention bound this
    quantity (Saha & Ye, ICML 2024).
    """
    t0 = time.perf_counter()
    if X < 1:
        raise ValueError(f"X = {X}: a class needs X >= 1")
    if isinstance(dag, ProductProblem):
        if weight is not None or restrict is not None:
            raise ValueError("a ProductProblem carries its weight and restriction: give neither")
        pb = dag
    else:
        pb = product_problem(dag, weight, restrict)
    weight, full, total_weight, cdag, wsub, exempt, ps, cov = (pb.weight, pb.full, pb.total_weight, pb.cdag,
                                                               pb.wsub, pb.exempt, pb.ps, pb.cov)
    options = component_options(ps, X, convex)
    options = {int(c): options[int(c)] for c in np.unique(cov)}
    n_rows, n_cols = len(ps.rows), len(ps.cols)
    symmetric = _symmetric(cov, options) and n_rows == n_cols
    Y = column_multisets(cov.shape[1], n_cols, X // 2 if symmetric else X)
    if len(Y) > MAX_COLUMN_MULTISETS:
        raise ValueError(f"{len(Y)} column multisets: too many to enumerate")
    lambdas = np.arange(0, 3.01, 0.25) if lambdas is None else lambdas
    mus = np.arange(0, 4.01, 0.25) if mus is None else mus
    ev = _Evaluator(cov, options, X, n_rows)
    best, best_y, evaluated = _search(Y, cov, options, X, n_rows, ev, np.asarray(lambdas), np.asarray(mus))
    columns, rows = _witness(ev, best_y, options)
    members, dom = [], []
    for j, C in enumerate(columns):
        dom += [v for s, v in enumerate(ps.cols[j]) if C >> s & 1]
    for i, (R, picks) in enumerate(rows):
        dom += [v for s, v in enumerate(ps.rows[i]) if R >> s & 1]
        for j, p in enumerate(picks):
            _, _, _, T, Dp = options[int(cov[R, columns[j]])][p]
            comp = ps.components[(i, j)]
            members += [comp[v] for v in range(ps.size) if T >> v & 1]
            dom += [comp[v] for v in range(ps.size) if Dp >> v & 1]
    value = int(wsub[members].sum()) if members else 0
    if value != best or len(dom) > X:  # pragma: no cover - the decomposition is exact
        raise SpartitionError(f"decomposed capacity witness has weight {value} (expected {best}), dominator {len(dom)}")
    verify_set(cdag, sorted(members), X, convex, exempt)
    params = {
        "method": "product-dp",
        "restricted_nodes": cdag.n,
        "exits": int(exempt.sum()),
        "rows": n_rows,
        "cols": n_cols,
        "component_nodes": ps.size,
        "transpose_symmetry": symmetric,
        "column_multisets": int(len(Y)),
        "evaluated": evaluated,
        "relaxed_capacity": best,
        "relaxed_set": [cdag.names[v] for v in sorted(members)],
        "relaxed_dominator": sorted(cdag.names[v] for v in dom),
        "row_masks": [R for R, _ in rows],
        "column_masks": columns,
    }
    wdesc = weight_label(weight)
    seconds = time.perf_counter() - t0
    if cdag.n == full.n and not exempt.any():
        # the restriction is the whole DAG: the relaxation is U itself and the set is a real class
        nodes = tuple(params.pop("relaxed_set"))
        dominator = tuple(params.pop("relaxed_dominator"))
        return CapacityResult(X, Status.OPTIMAL, best, best, nodes, dominator, total_weight, wdesc, convex, seconds,
                              solver_version="exact decomposition", parameters=params)
    return CapacityResult(X, Status.RELAXED, 0, best, (), (), total_weight, wdesc, convex, seconds,
                          solver_version="exact decomposition", parameters=params)
