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

import json
import math
from functools import lru_cache
from typing import Callable

from spartition.study.capacity_rows import capacity_row, weight_key
from spartition.study.claims import Interval, Quantity, ClaimContext, show_number, io_known
from spartition.study.store import canonical_json
from spartition.study.tasks import build_dag

__all__ = [
    "capacity_derived_lower",
    "derived_lower",
    "derived_value",
    "formula_ratio",
    "optimum_range",
    "proven_capacity",
    "replayed",
    "schedule_io",
]


def schedule_io(ctx, name: str, params_for: Callable | None = None, search: bool = False):
    """``(I/O, params)`` of algorithm ``name`` replayed on the DAG it runs on (None if not applicable).

    ``params_for(name, params, M)`` gives the builder parameters of that DAG
    (e.g. the column order Key Lemma 3.2 consumes); the claims these feed
    hold for every summation order of the family, so a schedule on any
    order is a witness against them. With ``search`` the cheapest of the
    algorithm's tile options (the sandwich's search), not its defaults.
    """
    params = dict(params_for(name, ctx.params, ctx.M) if params_for else ctx.params)
    sub = ClaimContext(ctx.family, params, ctx.M, ctx.variant, ctx.store, ctx.settings)
    options = (("search", True),) if search else ()
    found = sub.run(sub.task("algorithm", name, options=options))[f"algorithm:{name}"].finding()
    return (None if found.upper is None else float(found.upper)), params


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


def formula_ratio(name: str, fn: Callable, text: str) -> Quantity:
    """Registered formula ``name`` (outside its regime too) over ``fn(p, M)``, to 9 decimals (None where undefined).

    ``fn`` transcribes the same expression again (from the paper's line a
    claim set quotes), so ``formula_ratio(...) == 1`` catches a slip in
    either transcription; a constant ratio is a proof's step (e.g. a bound
    at a chosen parameter).

    Examples
    --------
    >>> from spartition.study.claims import ClaimContext
    >>> q = formula_ratio("trivial-forward", lambda p, M: 4 * p["n"] * p["d"], "4 n d")
    >>> q.evaluate(ClaimContext("attention-forward", {"n": 4, "d": 2}, 8, "oneshot", None, {})).lo
    1.0
    """
    from spartition.study.formulas import evaluate_formula, formula_named

    f = formula_named(name)

    def ev(ctx):
        v = evaluate_formula(f, ctx.paper, ctx.M, ctx.family).value
        t = fn(ctx.paper, ctx.M)
        if t is None or not t or not math.isfinite(v):
            return None
        return Interval.point(round(v / t, 9), f"{name} = {f.expression}, over {text}")

    return Quantity(f"{name} / ({text})", ev)


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
    weight : callable or str
        ``weight(p) -> w(V)``, the total weight the count is about, or a
        selector (:func:`~spartition.partition.weights.node_weights`): the
        weight counted on the DAG, never typed in.
    Xs : callable
        ``Xs(p, M) -> iterable`` of the X to try (``[2M]`` where the proof
        states its count for 2M-partitions only).
    label : str
        The count's source, for the derivation text.
    """

    def ev(ctx):
        p, M = ctx.paper, ctx.M
        v, X = derived_value(lambda x: count(p, M, x), _total(ctx, weight), M, Xs(p, M))
        if X is None:
            return None
        return Interval.point(v, f"(X - M)(ceil(w(V)/U(X)) - 1) with U from {label}, X = {X}")

    return Quantity(f"derived from {label}", ev)


def _whole_dag_witness(ctx, X: int, wmap: dict) -> tuple:
    """Weight of the whole DAG (isolated nodes removed) if it is one valid X-class, with its description."""
    nodes, dom, mins = _whole_dag_sets(ctx.family, canonical_json(ctx.params))
    if dom <= X and mins <= X:
        w = sum(wmap.get(v, 0) for v in nodes)
        return float(w), (f"class = the whole DAG ({len(nodes)} nodes, weight {w}): "
                          f"dominator {dom} <= X = {X}, minimum set {mins} <= {X}")
    return 0.0, ""


@lru_cache(maxsize=64)
def _whole_dag_sets(family: str, params_json: str) -> tuple:
    """The nodes of a family's DAG without isolated ones, and the sizes of their dominator and minimum set.

    They do not depend on X or M: computed (by max-flow) once per DAG, not once per instance.
    """
    from spartition.core.dag import strip_isolated
    from spartition.partition.certificate import min_dominator, minimum_set

    H = strip_isolated(build_dag(family, json.loads(params_json)))
    nodes = tuple(H)
    return nodes, len(min_dominator(H, nodes)), len(minimum_set(H, nodes))


@lru_cache(maxsize=64)
def _weights(family: str, params_json: str, weight) -> tuple:
    """``(node -> weight, total, key)`` of ``weight`` (a selector or ``weight(G, p)``) on a family's DAG, once per DAG.

    ``key`` (count and hash of the weighted nodes) is what a stored capacity is keyed by.
    """
    from spartition.partition.weights import node_weights

    G = build_dag(family, json.loads(params_json))
    sel = weight(G, ClaimContext(family, json.loads(params_json), 0, "oneshot", None, {}).paper) \
        if callable(weight) else weight
    wmap = node_weights(G, sel)
    return wmap, float(sum(wmap.values())), weight_key(wmap)


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

    def kn(ctx):
        return Interval(0.0, _weights(ctx.family, canonical_json(ctx.params), weight)[1], "0 .. total weight w(V)")

    def ev(ctx):
        x = int(X(ctx.paper, ctx.M))
        wmap, total, wkey = _weights(ctx.family, canonical_json(ctx.params), weight)
        how = method(ctx.paper, ctx.M) if callable(method) else method
        lo, witness = _whole_dag_witness(ctx, x, wmap)
        hi, text = total, "total weight"
        if how != "witness":
            row = capacity_row(ctx, x, wmap, wkey, how, restrict_tensor, convex)
            hi, text = min(hi, row.bound), f"U({x}) {row.status} by {how}"
            if row.value is not None and row.value > lo:
                lo, witness = row.value, f"a verified {x}-class of weight {show_number(row.value)} ({how})"
        return Interval(lo, hi, text + (f"; witness: {witness}" if witness else ""), witness)

    return Quantity(f"U(X) of {weight if isinstance(weight, str) else 'the counted nodes'}", ev, kn)


def _total(ctx, weight) -> float:
    """w(V): ``weight(p)``, or the nodes a selector string weighs, counted on the DAG."""
    if isinstance(weight, str):
        return _weights(ctx.family, canonical_json(ctx.params), weight)[1]
    return weight(ctx.paper)


def capacity_derived_lower(capacity: Quantity, W, X: Callable, label: str) -> Quantity:
    """``(X - M)(ceil(w(V) / U) - 1)`` with U the *proven* upper end of ``capacity`` at ``X(p, M)``: a proven I/O bound.

    ``W`` is ``W(p) -> w(V)`` or a selector whose weight is counted on the DAG (see :func:`derived_lower`).
    """

    def ev(ctx):
        v = capacity.evaluate(ctx)
        if v is None or not v.hi > 0:
            return None
        x = int(X(ctx.paper, ctx.M))
        val = max(0.0, (x - ctx.M) * (math.ceil(_total(ctx, W) / v.hi - 1e-12) - 1))
        return Interval.point(val, f"(X - M)(ceil(w(V)/U) - 1) with proven U({x}) <= {show_number(v.hi)} ({label})")

    return Quantity(f"lower bound from the proven capacity ({label})", ev)
