"""Class capacities U(X) of claims, computed once and kept in the results store under one method name.

:func:`capacity_row` is the one place a claim's capacity is solved (CP-SAT
or the matrix-product decomposition) and cached (store method
``capacity-claim``, keyed by X, the weighted nodes, the method and the
restriction); :func:`weight_key` is how the weighted nodes enter that key.
"""

from __future__ import annotations

import json

from spartition.status import Status
from spartition.study.store import ResultKey, StoredResult, canonical_json, stored_or_computed
from spartition.study.tasks import build_dag, family_dag_hash, method_version

__all__ = ["capacity_row", "hash_nodes", "weight_key"]


def weight_key(wmap: dict) -> tuple:
    """``(count, hash)`` of the nodes of nonzero weight: what a stored capacity is keyed by.

    Examples
    --------
    >>> weight_key({"a": 1, "b": 0, "c": 2})[0]
    2
    """
    wkey = sorted(v for v, w in wmap.items() if w)
    return len(wkey), hash_nodes(wkey)


def capacity_row(ctx, X: int, wmap: dict, wkey: tuple, method: str, restrict_tensor, convex: bool) -> StoredResult:
    """The class capacity U(X) run of a claim, from the store when it has it.

    Parameters
    ----------
    ctx : ClaimContext
        The instance (its store and settings: ``capacity_time_limit``, else
        ``bound_time_limit``; ``workers``, ``seed``).
    X : int
    wmap : dict
        Node -> weight.
    wkey : tuple
        :func:`weight_key` of ``wmap``: what the stored row is keyed by.
    method : {"product", "cp-sat"}
    restrict_tensor : str or None
        Restrict the set to the ancestors of this tensor's nodes.
    convex : bool

    Returns
    -------
    StoredResult
        Store method ``capacity-claim`` (the one cache of capacities);
        ``value`` the verified set's weight (None for a relaxation),
        ``bound`` the proven upper bound. A method that refuses the instance
        gives an UNKNOWN row with the total weight as bound, not stored.
    """
    from spartition.partition.capacity import class_capacity
    from spartition.partition.product import product_capacity

    s = ctx.settings
    # a claim may give its capacities a shorter limit: a count needs only a proven bound below it
    tl = s.get("capacity_time_limit") or s.get("bound_time_limit", 20.0)
    params = {"X": X, "weight_nodes": wkey[0], "weight_hash": wkey[1], "method": method,
              "restrict": restrict_tensor, "convex": convex, "workers": s.get("workers", 1), "seed": s.get("seed", 0)}
    key = ResultKey(family_dag_hash(ctx.family, ctx.params), ctx.M, ctx.variant, "capacity-claim", params,
                    method_version("bound:capacity"))

    def compute():
        G = ctx.dag
        restrict = None
        if restrict_tensor is not None:
            restrict = [v for v in G if (G.nodes[v].get("entry") or ("",))[0] == restrict_tensor]
        try:
            if method == "product":
                # the restricted DAG is built once per DAG and weight, and solved at each X
                res = product_capacity(_product_problem(ctx.family, canonical_json(ctx.params), wkey, restrict_tensor,
                                                        wmap, restrict), X, convex=convex)
            else:
                res = class_capacity(G, X, weight=wmap, convex=convex, time_limit=tl, workers=params["workers"],
                                     seed=params["seed"], method="cp-sat", restrict=restrict)
        except ValueError as exc:  # the decomposition refuses an enumeration too large: nothing proven
            raise _Refused(str(exc)) from exc
        value = None if Status(res.status).is_relaxed() else res.capacity
        proven = res.status in (Status.OPTIMAL, Status.RELAXED)  # the store keeps only the first final
        return [StoredResult(key, res.status, value, res.upper_bound, proven, tl, res.wall_s,
                             {"status": res.status, "capacity": res.capacity, "upper_bound": res.upper_bound},
                             family=ctx.family, family_params=ctx.params)]

    try:
        [row] = stored_or_computed(ctx.store, [(key, tl)], compute)
    except _Refused as exc:  # not stored: a later run with a larger budget may prove it
        total = float(sum(wmap.values()))
        return StoredResult(key, Status.UNKNOWN, None, total, False, tl, 0.0, {"error": str(exc)},
                            family=ctx.family, family_params=ctx.params)
    return row


class _Refused(Exception):
    """A capacity method refused the instance (an enumeration too large): nothing proven, nothing to store."""


_PROBLEMS: dict = {}


def _product_problem(family, params_json, wkey, restrict_tensor, wmap, restrict):
    """:func:`~spartition.partition.product.product_problem` of a family's DAG, once per (DAG, weight, restriction)."""
    from spartition.partition.product import product_problem

    key = (family, params_json, wkey, restrict_tensor)
    if key not in _PROBLEMS:
        if len(_PROBLEMS) >= 16:  # a few DAGs at a time: a claim walks its grid one DAG after another
            _PROBLEMS.pop(next(iter(_PROBLEMS)))
        _PROBLEMS[key] = product_problem(build_dag(family, json.loads(params_json)), wmap, restrict)
    return _PROBLEMS[key]


def hash_nodes(nodes) -> str:
    """A short stable hash of a node list (store keys of weighted capacities)."""
    import hashlib

    return hashlib.sha256("\n".join(map(str, nodes)).encode()).hexdigest()[:16]
