"""The class capacity U(X): the largest weight of one node set meeting P2 and P3 for X.

If every class of an X-partition weighs at most U, then
``P(X) >= ceil(w(V) / U)`` (docs/definitions.md section 3): a proven upper
bound on U is a proven lower bound on P(X) and so on the I/O. Two methods
(:data:`CAPACITY_METHODS`): CP-SAT on the one-set encoding of
:mod:`spartition.partition.encoding` (:func:`capacity_model`), and the exact
matrix-product decomposition of :mod:`spartition.partition.product`. Either
may solve the ``restrict`` relaxation instead of the full DAG
(:func:`~spartition.partition.sets.restricted_dag`), and every set found is
re-checked by :func:`~spartition.partition.sets.verify_set`.

Symmetry blocks are the family's knowledge, not the engine's: a named
``symmetry`` is looked up in the entry-point group ``spartition.symmetry``
by the DAG's ``family`` (:func:`named_symmetry_blocks`).
"""

from __future__ import annotations

import time

import numpy as np
from ortools.sat.python import cp_model

from spartition.core.dag import CompactDAG, to_networkx
from spartition.core.registry import SYMMETRY
from spartition.errors import SpartitionError
from spartition.cpsat import budget_refusal, proven_bound, recorded_solver, solve_interruptibly, status_name
from spartition.partition.cuts import add_product_layer_cuts, add_set_symmetry
from spartition.partition.encoding import (
    add_capacity_cap, add_capacity_objective, add_convexity, add_set, add_set_dominator, add_set_min_set, decode_set,
)
from spartition.partition.product import product_capacity
from spartition.partition.sets import CapacityResult, restricted_dag, verify_set
from spartition.partition.weights import node_weights, partitioned_dag, weight_label
from spartition.settings import DEFAULT_SEED, DEFAULT_WORKERS, check_solver_settings
from spartition.status import Status

__all__ = ["CAPACITY_METHODS", "capacity_model", "class_capacity", "estimate_capacity_model",
           "named_symmetry_blocks"]

#: How :func:`class_capacity` can solve: by CP-SAT, or by the exact matrix-product decomposition.
CAPACITY_METHODS = ("cp-sat", "product")



def class_capacity(
    dag,
    X: int,
    weight=None,
    convex: bool = False,
    time_limit: float = 60.0,
    workers: int = DEFAULT_WORKERS,
    seed: int = DEFAULT_SEED,
    symmetry=None,
    layer_cuts: bool = False,
    restrict=None,
    method: str = "cp-sat",
    relaxation=None,
) -> CapacityResult:
    """The maximum weight of one node set satisfying P2 and P3 for X (and convexity if asked).

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
        The CDAG; isolated nodes are removed first (docs/definitions.md section 3). A
        selector weight needs the networkx form (it reads ``op`` and ``entry``).
    X : int
        The bound on the dominator and the minimum set (at least 1).
    weight : None, str, dict or callable
        See :func:`~spartition.partition.weights.node_weights`; e.g. ``"op=mul,tensor=QK"`` counts the
        products of ``S = Q K^T`` in an attention DAG.
    convex : bool
        Also require convexity (every class of a valid partition is convex:
        a path leaving and re-entering a class would break P4), which can
        only lower U and so strengthens the bound.
    time_limit, workers, seed
        CP-SAT settings; ``time_limit`` bounds the whole call (the model's
        build included).
    symmetry : None, str or list of lists of node ids
        Symmetry breaking (:func:`~spartition.partition.cuts.add_set_symmetry`).
        A string names block families joined by ``+`` (``"rows"``,
        ``"cols"``, ``"rows+cols"``), which the DAG's family (graph
        attribute ``family``) provides through the entry-point group
        ``spartition.symmetry`` (:func:`named_symmetry_blocks`; for
        ``attention-forward`` the query rows and the key columns); a list
        gives aligned blocks explicitly. Checked to be automorphisms; it
        never changes U, only the search.
    layer_cuts : bool
        Add the redundant product-layer cuts of
        :func:`~spartition.partition.cuts.add_product_layer_cuts` (valid;
        they never change U).
    restrict : None or iterable of node ids
        Solve a RELAXATION instead: the sub-DAG R of these nodes and all
        their ancestors (it must hold every weighted node), where nodes of R
        with a successor outside R are not counted in P3. Its maximum is an
        upper bound on U (see Notes), so the result has status ``RELAXED``
        (``upper_bound`` proven, ``capacity`` 0: no set of the DAG is
        claimed) or ``RELAXED_FEASIBLE`` (time limit; ``upper_bound`` is the
        relaxation's proven bound).
    method : "cp-sat" or "product"
        How the ``restrict`` relaxation is solved: by CP-SAT, or exactly by
        :func:`~spartition.partition.product.product_capacity` when the
        restricted DAG is a matrix product (all (row, column) components
        alike, e.g. the S = Q K^T part of unmasked attention, or a whole
        matrix product without ``restrict``); the CP-SAT settings are then
        unused.
    relaxation : None or iterable of node ids
        Solve the full DAG, capped by a proven bound: the ``restrict``
        relaxation of these nodes is first solved exactly by the
        matrix-product decomposition, and its maximum (an upper bound on U)
        is added as a constraint on the objective (it removes no set), so
        the search stops as soon as a set reaches it. Recorded in
        ``parameters`` (``relaxation_bound``, ``relaxation_wall_s``).

    Returns
    -------
    CapacityResult
        The best set and its weight, the status, and the proven upper bound
        on U (equal to the capacity when OPTIMAL).

    Notes
    -----
    If every class of an X-partition has weight at most U, then
    ``P(X) >= ceil(w(V) / U)`` (docs/definitions.md section 3). The model
    (:func:`capacity_model`) is one set of the
    :func:`~spartition.partition.minimum.min_partition` encoding: ``x``, a
    dominator ``d`` restricted to ancestors of the set, forced reachability ``r``, and a minimum-set
    count; about ``5 |V| + |E|`` Booleans.

    Why ``restrict`` gives an upper bound: R is closed under predecessors,
    so for a set V' of the DAG meeting P2 and P3 (dominator D) the part
    V' cap R has the same weight (R holds every weighted node); every path
    from an input to it lies in R, so D cap R dominates it; a node of it
    with no successor in V' cap R and all successors inside R has no
    successor in V' at all, so the counted nodes are part of the minimum set
    of V'; and a path of R between two of its nodes is a path of the DAG, so
    convexity is kept. Hence the relaxation admits V' cap R, and its maximum
    is at least U.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft, chain
    >>> class_capacity(fft(1), 1, time_limit=10, workers=1).upper_bound
    1
    >>> res = class_capacity(chain(5), 1, time_limit=10, workers=1)
    >>> res.status, res.capacity, res.upper_bound
    ('OPTIMAL', 5, 5)

    References
    ----------
    Hong & Kung (1981); the per-class lemmas of Saha & Ye (ICML 2024) and
    Papp, Sobczyk & Zouzias bound exactly this quantity.
    """
    if method not in CAPACITY_METHODS:
        raise ValueError(f"unknown capacity method {method!r}; expected 'cp-sat' or 'product'")
    check_solver_settings(time_limit=time_limit, workers=workers, seed=seed)
    if method == "product":
        if relaxation is not None:
            raise ValueError("relaxation= caps the CP-SAT search of the full DAG: use it with method='cp-sat'")
        G = to_networkx(dag) if isinstance(dag, CompactDAG) else dag
        return product_capacity(G, X, weight=weight, restrict=restrict, convex=convex)
    t0 = time.perf_counter()
    cdag, G, wmap = _weighted_dag(dag, weight)
    w = np.array([wmap[v] for v in cdag.names], dtype=np.int64)
    total = int(w.sum())
    if X < 1:
        raise ValueError(f"X = {X}: a class needs X >= 1")
    cap_bound = None
    if relaxation is not None:
        if restrict is not None:
            raise ValueError("give restrict (solve the relaxation) or relaxation (bound the full DAG), not both")
        rel = product_capacity(G if G is not None else to_networkx(cdag), X, weight=wmap, restrict=relaxation,
                               convex=convex)
        cap_bound = (rel.upper_bound, rel.wall_s)
    exempt = None
    if restrict is not None:
        cdag, w, exempt = restricted_dag(cdag, w, [str(v) for v in restrict])
    size = estimate_capacity_model(cdag, convex)
    refusal = budget_refusal(size, time_limit - (time.perf_counter() - t0))
    if refusal:
        # an unbuilt model proves nothing: U is bounded by the total weight only
        return CapacityResult(X, Status.UNKNOWN, 0, total, (), (), total, weight_label(weight), convex,
                              time.perf_counter() - t0, parameters={"skipped": refusal, "model_estimate": size})
    blocks = None if symmetry is None else named_symmetry_blocks(G, cdag.names, symmetry)
    model, sv, counts = capacity_model(cdag, X, w, convex=convex, exempt=exempt, blocks=blocks,
                                       layer_cuts=layer_cuts, cap=None if cap_bound is None else cap_bound[0])
    # the time limit is the call's: reading the DAG and building the model came out of it
    solver, params = recorded_solver(max(0.1, time_limit - (time.perf_counter() - t0)), workers, seed, lp=True)
    params = dict(params, **counts)
    code = solve_interruptibly(solver, model)
    status = status_name(code)
    seconds = time.perf_counter() - t0
    nodes, dom, cap = _found_set(solver, code, cdag, sv, w, X, convex, exempt)
    # UNKNOWN proves nothing: U is then bounded only by the total weight (or the relaxation)
    solved = proven_bound(solver, code, "max", cap)
    ub = total if solved is None else min(solved, total)
    if cap_bound is not None:
        if cap_bound[0] < cap:
            raise SpartitionError(
                f"the relaxation's bound {cap_bound[0]} is below a verified set of weight {cap} (relaxation bug)"
            )
        ub = min(ub, cap_bound[0])
        params = dict(params, relaxation_bound=cap_bound[0], relaxation_wall_s=round(cap_bound[1], 3))
    # the proven bound decides, not the status name
    status = Status.OPTIMAL if ub == cap else (Status.FEASIBLE if status == Status.OPTIMAL else status)
    if restrict is not None:
        params = dict(params, restricted_nodes=cdag.n, exits=int(exempt.sum()), relaxed_capacity=cap,
                      relaxed_set=list(nodes))
        status = Status(status).relaxed()
        nodes, dom, cap = (), (), 0
    return CapacityResult(
        X, status, cap, ub, nodes, dom, total, weight_label(weight), convex, seconds, parameters=params
    )


def estimate_capacity_model(cdag: CompactDAG, convex: bool = False) -> dict:
    """The estimated size of the :func:`capacity_model` of ``cdag``, before it is built.

    Measured on attention, FFT and matrix-product DAGs of 1,000-10,000 nodes:
    about ``3.1 (|V| + |E|)`` constraints, ``5.6 (|V| + |E|)`` with
    convexity, 20-30 us each to build. The same record as
    :func:`~spartition.partition.minimum.estimate_partition_model`.

    Parameters
    ----------
    cdag : CompactDAG
    convex : bool
        Whether the model requires convexity.

    Returns
    -------
    dict
        ``model``, ``constraints``, ``build_seconds``, ``memory_bytes``.

    Examples
    --------
    >>> from spartition.core.dag import compact
    >>> from spartition.families.classic.dag import chain
    >>> estimate_capacity_model(compact(chain(3)))["constraints"]
    16
    """
    cons = int((5.6 if convex else 3.2) * (cdag.n + len(cdag.pred_idx)))
    return {"model": "capacity", "constraints": cons, "build_seconds": round(cons * 2.5e-5, 3),
            "memory_bytes": cons * 500}


def _weighted_dag(dag, weight) -> tuple:
    """(CompactDAG without isolated nodes, its networkx form or None, node -> weight)."""
    if isinstance(dag, CompactDAG):
        if weight is not None and not isinstance(weight, dict):
            raise ValueError("a selector or callable weight needs the networkx DAG, not a CompactDAG")
        cdag, G = partitioned_dag(dag)
        names = cdag.names
        wmap = {v: 1 for v in names} if weight is None else {v: int(weight.get(v, 0)) for v in names}
        return cdag, G, wmap
    cdag, G = partitioned_dag(dag)
    return cdag, G, node_weights(G, weight)


def _found_set(solver, code: int, cdag: CompactDAG, sv, w: np.ndarray, X: int, convex: bool, exempt) -> tuple:
    """(nodes, dominator, weight) of the best set the solve found, verified; empty when it found none."""
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        nodes, dom = decode_set(solver, cdag, sv)
        members = [cdag.index[v] for v in nodes]
        verify_set(cdag, members, X, convex, exempt)
        return nodes, dom, int(w[members].sum()) if members else 0
    if code != cp_model.UNKNOWN:  # pragma: no cover - the empty set is always feasible
        raise SpartitionError(f"CP-SAT returned {status_name(code)} on a capacity model")
    return (), (), 0


def capacity_model(cdag: CompactDAG, X: int, w: np.ndarray, convex: bool = False, exempt=None, blocks=None,
                   layer_cuts: bool = False, cap: int | None = None) -> tuple:
    """The CP-SAT model of the class capacity, built step by step.

    Parameters
    ----------
    cdag : CompactDAG
        The DAG (without isolated nodes, or a restricted sub-DAG).
    X : int
        The bound on the dominator and on the minimum set.
    w : numpy.ndarray
        Node weights.
    convex : bool
        Require convexity (:func:`~spartition.partition.encoding.add_convexity`).
    exempt : numpy.ndarray of bool, optional
        Nodes not counted in P3 (the exits of a restriction).
    blocks : list of block lists, optional
        Symmetry block families (node ids), each ordered by
        :func:`~spartition.partition.cuts.add_set_symmetry`. Several
        families are valid together only if each one's permutations keep the
        block weights of the others (true for attention rows and key
        columns: they commute and a column permutation maps each row block
        to itself).
    layer_cuts : bool
        Add :func:`~spartition.partition.cuts.add_product_layer_cuts`.
    cap : int, optional
        A PROVEN upper bound on U, added on the objective.

    Returns
    -------
    (cp_model.CpModel, SetVars, dict)
        The model, its variables, and what the optional steps added
        (``product_layers``, ``symmetry_blocks``) for the result's record.

    Raises
    ------
    SpartitionError
        If symmetry blocks are not a weight-preserving automorphism family.

    Examples
    --------
    >>> from spartition.core.dag import compact
    >>> from spartition.families.classic.dag import chain
    >>> model, sv, counts = capacity_model(compact(chain(3)), 1, np.ones(3, dtype=np.int64), layer_cuts=True)
    >>> len(sv.x), counts
    (3, {'product_layers': 0})
    """
    model = cp_model.CpModel()
    sv = add_set(model, cdag)
    add_set_dominator(model, cdag, sv, X)
    add_set_min_set(model, cdag, sv, X, exempt)
    if convex:
        add_convexity(model, cdag, sv)
    nblocks = None
    if blocks is not None:
        nblocks = [add_set_symmetry(model, cdag, sv, w, [[cdag.index[v] for v in b] for b in family])
                   for family in blocks]
    counts = {}
    if layer_cuts:
        counts["product_layers"] = add_product_layer_cuts(model, cdag, sv, w)
    if nblocks is not None:
        counts["symmetry_blocks"] = nblocks
    add_capacity_objective(model, sv, w)
    if cap is not None:
        add_capacity_cap(model, sv, w, cap)
    return model, sv, counts


def named_symmetry_blocks(G, names, symmetry) -> list:
    """The symmetry block families that ``symmetry`` asks for, from the DAG's family.

    Parameters
    ----------
    G : networkx.DiGraph or None
        The DAG; its graph attribute ``family`` says which registered
        function gives the blocks.
    names : sequence of str
        Node ids of the DAG modelled (a restricted sub-DAG keeps the ids).
    symmetry : str or list of lists of node ids
        Block family names joined by ``+`` (e.g. ``"rows+cols"``), or one
        family of blocks given explicitly (returned as it is).

    Returns
    -------
    list of list of list of str
        One list of aligned blocks per family named.

    Raises
    ------
    ValueError
        If the DAG's family registers no symmetry blocks, or not one of the
        names asked for; the message lists what is registered.

    Examples
    --------
    >>> from spartition.core.registry import build
    >>> G = build("attention-forward", n=2, d=1)
    >>> [len(b) for b in named_symmetry_blocks(G, list(G), "rows+cols")]
    [2, 2]
    >>> named_symmetry_blocks(build("fft", k=1), [], "rows")
    Traceback (most recent call last):
    ...
    ValueError: symmetry='rows' needs symmetry blocks of the DAG's family, but family 'fft' registers none (registered: attention-forward); give the blocks as a list instead
    """
    if not isinstance(symmetry, str):
        return [symmetry]
    family = G.graph.get("family") if G is not None else None
    providers = SYMMETRY
    if family not in providers:
        raise ValueError(
            f"symmetry={symmetry!r} needs symmetry blocks of the DAG's family, but family {family!r} registers none "
            f"(registered: {', '.join(providers) or 'none'}); give the blocks as a list instead"
        )
    named = providers[family](names)
    unknown = [part for part in symmetry.split("+") if part not in named]
    if unknown:
        raise ValueError(f"family {family!r} has no symmetry blocks {unknown[0]!r}; it has: {', '.join(sorted(named))}")
    return [named[part] for part in symmetry.split("+")]
