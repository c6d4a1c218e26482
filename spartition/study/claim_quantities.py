"""Quantities for checking a paper's claims where they bite: best-known optimum ranges, derived bounds, capacities.

The sides of a :class:`~spartition.study.claims.Claim` beyond the basic ones
of :mod:`spartition.study.claims`:

* :func:`optimum_range` -- the optimum as far as it is known on a DAG too big
  to solve: ``[best proven lower bound, best replayed schedule]``, the
  schedule named as the witness (a schedule below a claimed lower bound
  refutes it);
* :func:`derived_lower` -- the explicit lower bound a per-class count yields,
  ``(X - M)(ceil(w(V) / U_claimed(X)) - 1)`` maximised over X
  (docs/definitions.md section 3), labelled with its derivation;
* :func:`proven_capacity` -- a class capacity U(X) with the method that scales
  (the exact matrix-product decomposition of a ``restrict`` relaxation, or
  CP-SAT), and, as its lower end, a *witness class* (the whole DAG, when it
  is one valid X-class), verified independently -- the counterexample to a
  per-class count;
* :func:`capacity_derived_lower` -- the lower bound from a proven capacity,
  which confirms a derived bound that it exceeds.

References
----------
Hong & Kung (1981); Irony, Toledo & Tiskin (2004), the Loomis-Whitney form of
the one-class count of a matrix product; Papp, Sobczyk & Zouzias (arXiv
2605.23751), Lemma A.1 and Appendices A.2, B.3, C.
"""

from __future__ import annotations

import math
from typing import Callable

from spartition.study.claims import Interval, Quantity, ClaimContext, show_number, io_known
from spartition.study.store import ResultKey, StoredResult
from spartition.study.tasks import family_dag_hash, method_version
from spartition.status import Status

__all__ = [
    "capacity_derived_lower",
    "derived_lower",
    "derived_value",
    "optimum_range",
    "proven_capacity",
    "replayed",
    "schedule_io",
]


def schedule_io(ctx, name: str, params_for: Callable | None = None):
    """``(I/O, params)`` of algorithm ``name`` replayed on the DAG it runs on (None if not applicable).

    ``params_for(name, params, M)`` gives the builder parameters of that DAG
    (e.g. the column order Key Lemma 3.2 consumes); the claims these feed
    hold for every summation order of the family, so a schedule on any
    order is a witness against them.
    """
    params = dict(params_for(name, ctx.params, ctx.M) if params_for else ctx.params)
    sub = ClaimContext(ctx.family, params, ctx.M, ctx.variant, ctx.store, ctx.settings)
    r = sub.run(sub.task("algorithm", name))[f"algorithm:{name}"]
    if r.status != Status.VALID:
        return None, params
    return float(r.value), params


def replayed(name: str, params_for: Callable | None = None) -> Quantity:
    """The replayed I/O of algorithm ``name`` on the DAG ``params_for`` gives (None where it does not apply)."""

    def ev(ctx):
        io, params = schedule_io(ctx, name, params_for)
        order = params.get("order")
        w = f"schedule {name}" + (f" (order={order})" if order else "")
        return None if io is None else Interval.point(io, f"{name} replayed", w)

    return Quantity(f"I/O of {name}", ev, io_known)


def optimum_range(algorithms, lower=(), params_for: Callable | None = None) -> Quantity:
    """The optimum as known: ``[max(trivial, proven lower bounds), min over replayed algorithms]``.

    Parameters
    ----------
    algorithms : sequence of str
        Registered algorithms (``greedy`` included where wanted); those not
        applicable at an instance are left out.
    lower : sequence of Quantity
        Proven lower bounds (their ``lo`` is used), e.g. :func:`capacity_derived_lower`.
    params_for : callable, optional
        See :func:`schedule_io`.

    Returns
    -------
    Quantity
        Its ``witness`` names the cheapest schedule and its DAG.
    """

    def ev(ctx):
        known = io_known(ctx)
        lo, lo_text = known.lo, "trivial bound"
        for q in lower:
            v = q.evaluate(ctx)
            if v is not None and v.lo > lo:
                lo, lo_text = v.lo, v.text
        best, witness = known.hi, "naive schedule"
        for name in algorithms:
            io, params = schedule_io(ctx, name, params_for)
            if io is not None and io < best:
                order = params.get("order")
                best, witness = io, f"schedule {name}" + (f" (order={order})" if order else "")
        return Interval(lo, best, f"optimum in [{lo_text}, {witness}]", witness)

    return Quantity(f"optimum (proven bound .. best of {', '.join(algorithms)})", ev, io_known)


def derived_value(count: Callable, W: float, M: int, Xs) -> tuple:
    """``max over X in Xs of (X - M)(ceil(W / count(X)) - 1)``, and the maximising X.

    Examples
    --------
    >>> derived_value(lambda X: 2 * X + X**1.5 / 2, 2048, 4, range(5, 40))
    (384.0, 20)
    """
    best, arg = 0.0, None
    for X in Xs:
        U = count(X)
        if X <= M or U is None or not U > 0:
            continue
        v = float((X - M) * (math.ceil(W / U - 1e-12) - 1))
        if v > best or arg is None:
            best, arg = max(best, v), X
    return best, arg


def derived_lower(count: Callable, weight: Callable, Xs: Callable, label: str) -> Quantity:
    """The explicit lower bound a per-class count ``U_claimed`` yields, maximised over X.

    Parameters
    ----------
    count : callable
        ``count(p, M, X) -> U`` the claimed bound on one X-class (None where
        the count is not stated).
    weight : callable
        ``weight(p) -> w(V)``, the total weight the count is about.
    Xs : callable
        ``Xs(p, M) -> iterable`` of the X to try (``[2M]`` where the proof
        states its count for 2M-partitions only).
    label : str
        The count's source, for the derivation text.
    """

    def ev(ctx):
        p, M = ctx.paper, ctx.M
        v, X = derived_value(lambda x: count(p, M, x), weight(p), M, Xs(p, M))
        if X is None:
            return None
        return Interval.point(v, f"(X - M)(ceil(w(V)/U(X)) - 1) with U from {label}, X = {X}")

    return Quantity(f"derived from {label}", ev)


def _whole_dag_witness(G, X: int, wmap: dict) -> tuple:
    """Weight of the whole DAG (isolated nodes removed) if it is one valid X-class, with its description."""
    from spartition.core.dag import strip_isolated
    from spartition.partition.certificate import min_dominator, minimum_set

    H = strip_isolated(G)
    nodes = list(H)
    dom, mins = min_dominator(H, nodes), minimum_set(H, nodes)
    if len(dom) <= X and len(mins) <= X:
        w = sum(wmap.get(v, 0) for v in nodes)
        return float(w), (f"class = the whole DAG ({len(nodes)} nodes, weight {w}): "
                          f"dominator {len(dom)} <= X = {X}, minimum set {len(mins)} <= {X}")
    return 0.0, ""


def proven_capacity(X: Callable, weight, method: str = "witness", restrict_tensor: str | None = None,
                    convex: bool = False) -> Quantity:
    """U(X) of ``weight`` as an interval ``[verified witness class, proven upper bound]``.

    Parameters
    ----------
    X : callable
        ``X(p, M) -> int``.
    weight : str or callable
        A selector (see :func:`~spartition.partition.weights.node_weights`)
        or ``weight(G, p) -> {node: weight}``.
    method : {"witness", "product", "cp-sat"} or callable ``method(p, M)``
        ``witness``: no search; the lower end is the whole DAG when it is a
        valid X-class (checked by max-flow), the upper end the total weight.
        ``product``: the exact decomposition of the relaxation restricted to
        the ancestors of ``restrict_tensor``'s nodes (proven upper bound).
        ``cp-sat``: the one-set CP-SAT model with the claim's time limit.
    """
    from spartition.partition.weights import node_weights

    def wsel(ctx):
        return weight(ctx.dag, ctx.paper) if callable(weight) else weight

    def kn(ctx):
        return Interval(0.0, float(sum(node_weights(ctx.dag, wsel(ctx)).values())), "0 .. total weight w(V)")

    def ev(ctx):
        x = int(X(ctx.paper, ctx.M))
        wmap = node_weights(ctx.dag, wsel(ctx))
        how = method(ctx.paper, ctx.M) if callable(method) else method
        total = float(sum(wmap.values()))
        lo, witness = _whole_dag_witness(ctx.dag, x, wmap)
        hi, text = total, "total weight"
        if how != "witness":
            row = _capacity_row(ctx, x, wmap, how, restrict_tensor, convex)
            hi, text = min(hi, row.bound), f"U({x}) {row.status} by {how}"
            if row.value is not None and row.value > lo:
                lo, witness = row.value, f"a verified {x}-class of weight {show_number(row.value)} ({how})"
        return Interval(lo, hi, text + (f"; witness: {witness}" if witness else ""), witness)

    return Quantity(f"U(X) of {weight if isinstance(weight, str) else 'the counted nodes'}", ev, kn)


def _capacity_row(ctx, X: int, wmap: dict, method: str, restrict_tensor, convex: bool) -> StoredResult:
    """The capacity run, from the store when it has it (keyed by X, weight, method, restriction)."""
    from spartition.partition.capacity import class_capacity

    s = ctx.settings
    tl = s.get("bound_time_limit", 20.0)
    wkey = sorted(v for v, w in wmap.items() if w)
    params = {"X": X, "weight_nodes": len(wkey), "weight_hash": hash_nodes(wkey), "method": method,
              "restrict": restrict_tensor, "convex": convex, "workers": s.get("workers", 1), "seed": s.get("seed", 0)}
    key = ResultKey(family_dag_hash(ctx.family, ctx.params), ctx.M, ctx.variant, "capacity-claim", params,
                    method_version("bound:capacity"))
    row = ctx.store.get(key, tl) if ctx.store is not None else None
    if row is not None:
        return row
    G = ctx.dag
    restrict = None
    if restrict_tensor is not None:
        restrict = [v for v in G if (G.nodes[v].get("entry") or ("",))[0] == restrict_tensor]
    try:
        res = class_capacity(G, X, weight=wmap, convex=convex, time_limit=tl, workers=params["workers"],
                             seed=params["seed"], method="product" if method == "product" else "cp-sat",
                             restrict=restrict)
    except ValueError as exc:  # the decomposition refuses an enumeration too large: nothing proven
        total = float(sum(wmap.values()))
        return StoredResult(key, Status.UNKNOWN, None, total, False, tl, 0.0, {"error": str(exc)},
                            family=ctx.family, family_params=ctx.params)
    value = None if Status(res.status).is_relaxed() else res.capacity
    proven = res.status in (Status.OPTIMAL, Status.RELAXED)  # the store keeps only the first final
    row = StoredResult(key, res.status, value, res.upper_bound, proven, tl,
                       res.wall_s, {"status": res.status, "capacity": res.capacity, "upper_bound": res.upper_bound},
                       family=ctx.family, family_params=ctx.params)
    if ctx.store is not None:
        ctx.store.put(row)
    return row


def hash_nodes(nodes) -> str:
    """A short stable hash of a node list (store keys of weighted capacities)."""
    import hashlib

    return hashlib.sha256("\n".join(map(str, nodes)).encode()).hexdigest()[:16]


def capacity_derived_lower(capacity: Quantity, W: Callable, X: Callable, label: str) -> Quantity:
    """``(X - M)(ceil(w(V) / U) - 1)`` with U the *proven* upper end of ``capacity`` at ``X(p, M)``: a proven I/O bound."""

    def ev(ctx):
        v = capacity.evaluate(ctx)
        if v is None or not v.hi > 0:
            return None
        x = int(X(ctx.paper, ctx.M))
        val = max(0.0, (x - ctx.M) * (math.ceil(W(ctx.paper) / v.hi - 1e-12) - 1))
        return Interval.point(val, f"(X - M)(ceil(w(V)/U) - 1) with proven U({x}) <= {show_number(v.hi)} ({label})")

    return Quantity(f"lower bound from the proven capacity ({label})", ev)
