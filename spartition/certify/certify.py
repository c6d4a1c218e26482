"""Build certificates: find the witness, refute "better", check the refutation, write the bundle.

The optimum is not taken from any solver's word. :func:`certify_optimum`
starts from a schedule (CP-SAT's, replayed) and asks CaDiCaL whether the
pebbling CNF for one less I/O is satisfiable; a model is decoded into a
cheaper schedule, replayed, and the search goes on from it, so the loop ends
at a value whose refutation has been checked here, whatever CP-SAT said.
Partitions and capacities go the same way.
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from pathlib import Path

from spartition.certify.bundle import (
    MAX_CNF_CELLS,
    caps_argument,
    check_cnf_size,
    check_horizon,
    cnf_cells,
    write_bundle,
)
from spartition.certify.encoding import (
    ENCODER_VERSION,
    decode_schedule,
    default_horizon,
    pebbling_cnf,
    proven_horizon,
)
from spartition.certify.order_encoding import ORDER_ENCODER_VERSION, ORDER_REDUCTIONS, order_budget_cnf
from spartition.certify.partition_encoding import PARTITION_ENCODER_VERSION, partition_cnf, set_cnf
from spartition.certify.proof import check_lrat
from spartition.certify.sat import solve_cnf, tool_versions
from spartition.core.bounds import require_memory, trivial_lower_bound
from spartition.core.dag import as_compact, strip_isolated
from spartition.core.game import Schedule, replay
from spartition.errors import SpartitionError, TimeLimitReached
from spartition.settings import DEFAULT_VARIANT, check_variant

__all__ = ["certify_capacity", "certify_optimum", "certify_partition"]


#: The share of a time limit CP-SAT's starting witness gets; the refutations get the rest.
WITNESS_SHARE = 0.5
#: Seconds CP-SAT's starting witness gets when no time limit is given.
WITNESS_SECONDS = 60.0
#: Literal cells (:func:`~spartition.certify.bundle.cnf_cells`) the time-indexed encoder builds per second:
#: 65,000 to 110,000 measured on fft CNFs of 2 * 10^4 to 6 * 10^5 cells (2 shared cores); the low end, so
#: that a CNF estimated to fit is built within --time-limit (fft k=6 at M = 8, recompute, took 3.3 GB and
#: over 200 s at --time-limit 10 before this estimate).
CNF_CELLS_PER_SECOND = 65_000
#: The same for the order encoder: 550,000 measured on fft k = 5 (4 * 10^6 cells, 2 shared cores, loaded), 290,000
#: on fft k = 4 (3 * 10^5, where fixed costs count); below the first (fft k=6 at M = 8 built 21 million clauses in
#: 130 s and 4.6 GB at --time-limit 10 before this estimate).
ORDER_CELLS_PER_SECOND = 350_000


def _build_seconds(cells: int) -> float:
    return cells / CNF_CELLS_PER_SECOND


def _refuse_a_slow_cnf(deadline: float | None, cells: int, what: str, found: str, variant: str,
                       order: bool = False) -> None:
    """Raise TimeLimitReached, before building it, when the CNF refuting ``what`` (the time-indexed one, or with
    ``order`` the order one) cannot be built in the time left."""
    if deadline is None:
        return
    left = deadline - time.perf_counter()
    need = cells / ORDER_CELLS_PER_SECOND if order else _build_seconds(cells)
    if need > left:
        other = "; --encoding order states oneshot optima with a far smaller CNF" if variant == "oneshot" and \
            not order else ""
        raise TimeLimitReached(f"the CNF refuting {what} (about {cells:,} literals) would take about {need:.1f} s "
                               f"to build, {max(left, 0.0):.1f} s are left: {found}, not certified; no bundle written; "
                               f"give a longer time limit{other}")


def _order_cells(G) -> int:
    """The order CNF's literals from below: 3 in each of its 2 C(n, 3) transitivity clauses, n the computed nodes."""
    return 6 * math.comb(int((~as_compact(G).is_input).sum()), 3)


def _deadline(time_limit) -> float | None:
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit > 0:
        raise ValueError(f"time_limit must be a positive number of seconds or None, got {time_limit!r}")
    return time.perf_counter() + float(time_limit)


def _witness_seconds(time_limit) -> float:
    return WITNESS_SECONDS if time_limit is None else max(float(time_limit) * WITNESS_SHARE, 0.05)


def _before_encoding(deadline: float | None, what: str, found: str) -> None:
    """Raise TimeLimitReached when ``deadline`` passed before the CNF refuting ``what`` is built."""
    if deadline is not None and time.perf_counter() > deadline:
        raise TimeLimitReached(f"the time limit ran out before the CNF refuting {what} was built: {found}, not "
                               "certified; no bundle written; give a longer time limit")


def _refute(cnf, stats: dict, deadline: float | None = None, what: str = "", found: str = ""):
    """Solve ``cnf`` with an LRAT proof; on UNSAT check the proof. Returns (model or None, proof path).

    Raises TimeLimitReached, naming ``what`` was being refuted and the best
    ``found``, when ``deadline`` passes during the solve or the check.
    """
    fd, proof = tempfile.mkstemp(suffix=".lrat")
    os.close(fd)
    try:
        if deadline is not None and time.perf_counter() > deadline:
            raise TimeLimitReached("the time limit ran out before the solver started")
        out = solve_cnf(cnf, proof, deadline=deadline)
        stats["solve_s"] = stats.get("solve_s", 0.0) + out.wall_s
        if out.satisfiable is None:
            raise TimeLimitReached(f"the time limit ran out after {out.wall_s:.1f} s of SAT search")
        if out.satisfiable:
            os.unlink(proof)
            return out.model, None
        t = time.perf_counter()
        rep = check_lrat(cnf, proof, deadline=deadline)
    except TimeLimitReached as exc:
        os.unlink(proof)
        raise TimeLimitReached(f"{exc} (refuting {what}; CNF of {cnf.num_vars:,} variables, {len(cnf.clauses):,} "
                               f"clauses): {found}, not certified; no bundle written; give a longer time "
                               "limit") from None
    except BaseException:
        os.unlink(proof)
        raise
    stats.update(check_s=round(time.perf_counter() - t, 3), proof_bytes=os.path.getsize(proof),
                 proof_additions=rep.additions, cnf_vars=cnf.num_vars, cnf_clauses=len(cnf.clauses))
    return None, proof


def certify_optimum(dag, M: int, variant: str = DEFAULT_VARIANT, out=None, *, schedule=None,
                    time_limit: float | None = None,
                    horizon: int | None = None, count_levels: int = 2, encoding: str = "time-indexed") -> dict:
    """Certify the minimum I/O of ``dag`` at ``M``; write the bundle to ``out`` if given.

    Parameters
    ----------
    dag : networkx.DiGraph
    M : int
    variant : {"oneshot", "recompute"}
    out : path, optional
        Bundle directory or ``.tar.gz``.
    schedule : Schedule, optional
        A starting schedule; default CP-SAT's (:func:`spartition.exact.solve.solve_io`).
        Whatever M and variant it names, it is replayed at ``M`` and
        ``variant`` before it is used.
    time_limit : float, optional
        Seconds for the whole call: CP-SAT's starting schedule gets half of
        them (none when ``schedule`` is given), the refutations and their
        checks the rest. Default: 60 s for the starting schedule and no limit
        on the refutations.
    horizon : int, optional
        Recompute: the step cap. Default the proven horizon ``Q + sum pi(v)``
        (:func:`spartition.certify.encoding.proven_horizon`, by the compute
        caps), so that the claim holds for the unbounded game, or ``2 N + Q``
        when that CNF would exceed
        :data:`~spartition.certify.bundle.MAX_CNF_CELLS` literals (the claim
        then holds within the horizon, and ``horizon_argument`` says why). A
        given horizon at least the proven one is proven too. Oneshot: leave it
        unset. Checked by :func:`spartition.certify.bundle.check_horizon`.
    count_levels : int
        Clause 11 of :mod:`spartition.certify.encoding`.
    encoding : {"time-indexed", "order"}
        The CNF refuted: the time-indexed pebbling CNF of
        :mod:`spartition.certify.encoding` (no reduction assumed), or, for
        oneshot, the order CNF of :mod:`spartition.certify.order_encoding`
        (far smaller; rests on the normal form and chain dominance, which
        the claim lists under ``reductions``).

    Returns
    -------
    dict
        The claim (``horizon_proven``: the refutation covers every schedule;
        ``horizon_argument``: why, or why not) and the stats (solve and
        check seconds, CNF and proof sizes).

    Raises
    ------
    InfeasibleMemory
        ``M`` is below the smallest feasible M.
    TimeLimitReached
        ``time_limit`` ran out before a refutation was found and checked
        (nothing is written).
    IllegalMove
        The given schedule is not a legal ``variant`` schedule with ``M`` red pebbles.
    ValueError
        An unknown variant, or a horizon no schedule fits in (the statement
        would be empty) or too large to encode.
    """
    if encoding not in ("time-indexed", "order"):
        raise ValueError(f"unknown encoding {encoding!r}; expected 'time-indexed' or 'order'")
    if encoding == "order" and (variant != "oneshot" or horizon is not None):
        raise ValueError("the order encoding states oneshot schedules only, with no horizon")
    check_variant(variant)
    if isinstance(M, bool) or not isinstance(M, int) or M < 1:
        # a bundle states a game with at least one red pebble (the checker refuses M = 0 the same way)
        raise ValueError(f"M must be an integer >= 1, got {M!r}")
    require_memory(dag, M)
    deadline = _deadline(time_limit)
    if horizon is not None:
        check_horizon(dag, M, variant, 0, horizon, count_levels)
    if encoding == "order" and deadline is not None and schedule is None:  # as below, for the order CNF
        _refuse_a_slow_cnf(time.perf_counter() + float(time_limit) * (1 - WITNESS_SHARE), _order_cells(dag),
                           f"one better schedule at M = {M}", "the order CNF is too large for the refutation's half "
                           "of the time limit", variant, order=True)
    if encoding == "time-indexed":  # the smallest CNF any witness leads to: refused before the witness is sought
        least = max(trivial_lower_bound(dag) - 1, 0)  # the refutation of a witness at the trivial bound
        smallest = min(proven_horizon(dag, variant, least), default_horizon(dag, variant, least))
        smallest = smallest if horizon is None else horizon
        _refuse_a_huge_cnf(dag, M, variant, least, smallest, count_levels)
        if deadline is not None and schedule is None:  # nor sought when even that CNF cannot be built in time
            _refuse_a_slow_cnf(time.perf_counter() + float(time_limit) * (1 - WITNESS_SHARE),
                               cnf_cells(dag, M, least, smallest, count_levels), f"I/O <= {least} at M = {M}",
                               "the smallest CNF any schedule leads to (at the trivial bound) is too large for the "
                               "refutation's half of the time limit", variant)
    if schedule is None:
        from spartition.exact.solve import solve_io

        start = solve_io(dag, M, variant, time_limit=_witness_seconds(time_limit), workers=1)
        if start.interrupted:  # Ctrl-C stopped the witness search: stop, rather than refute from its best
            raise KeyboardInterrupt
        schedule = start.schedule
        if schedule is None:  # pragma: no cover - M is feasible, so greedy gives a schedule
            raise SpartitionError(f"no schedule found at M = {M} to start from")
    # the witness counts only as a schedule of this call's game
    schedule = Schedule(M, variant, schedule.moves, dict(schedule.meta))
    io = replay(dag, schedule).io
    if horizon is not None and io > 0:
        check_horizon(dag, M, variant, io - 1, horizon, count_levels)
    stats = {"start_io": io, "improved": 0}
    if encoding == "order":
        return _certify_by_order(dag, M, out, schedule, io, stats, deadline)
    cnf = proof = None
    T = note = None
    while io > 0:
        T, note = _horizon(dag, M, variant, io - 1, horizon, count_levels, deadline)
        what, found = f"I/O <= {io - 1} at M = {M}", f"the best replayed schedule has I/O {io}"
        _before_encoding(deadline, what, found)
        _refuse_a_huge_cnf(dag, M, variant, io - 1, T, count_levels)
        _refuse_a_slow_cnf(deadline, cnf_cells(dag, M, io - 1, T, count_levels), what, found, variant)
        p = pebbling_cnf(dag, M, variant, io - 1, horizon=T, count_levels=count_levels)
        model, proof = _refute(p.cnf, stats, deadline, what, found)
        if model is None:
            cnf = p.cnf
            break
        schedule = decode_schedule(p, model)
        io = replay(dag, schedule).io  # the model is trusted only through its replay
        stats["improved"] += 1
    proven = io == 0 or T >= proven_horizon(dag, variant, io - 1)
    if variant == "recompute" and io > 0:
        note = caps_argument(dag, io - 1, T) if proven else note or (
            f"horizon {T} is below the proven {proven_horizon(dag, variant, io - 1)} (Q + sum pi of the compute caps): "
            "optimal within the horizon only")
    claim = {"kind": "pebbling", "encoder": ENCODER_VERSION, "M": M, "variant": variant, "io": io,
             "horizon": T, "horizon_proven": proven, "count_levels": count_levels}
    if note:
        claim["horizon_argument"] = note
    _deliver(out, dag, claim, schedule.to_dict(), cnf, proof, stats)
    return {**claim, "stats": stats}


def _horizon(dag, M: int, variant: str, budget: int, given, count_levels: int,
             deadline: float | None = None) -> tuple:
    """The horizon of the CNF for ``budget``, and why it is not the proven one (None when it is, or was given).

    The proven horizon (:func:`proven_horizon`) unless its CNF is too large,
    or too slow to build before ``deadline``: then, for recompute, the
    stated cap ``2 N + Q``, itself refused if too large.
    """
    if given is not None:
        return given, None
    T = proven_horizon(dag, variant, budget)
    cells = cnf_cells(dag, M, budget, T, count_levels)
    slow = deadline is not None and _build_seconds(cells) > deadline - time.perf_counter()
    if variant == "oneshot" or (cells <= MAX_CNF_CELLS and not slow):
        return T, None
    fallback = default_horizon(dag, variant, budget)
    check_cnf_size(dag, M, budget, fallback, count_levels)
    why = (f"more than {MAX_CNF_CELLS:,}" if cells > MAX_CNF_CELLS
           else f"about {_build_seconds(cells):.0f} s to build, past the time limit")
    return fallback, (f"the proven horizon Q + sum pi = {T} (compute caps) makes a CNF of about {cells:,} literals, "
                      f"{why}; horizon 2N + Q = {fallback} used instead: optimal within the horizon only")


def _refuse_a_huge_cnf(G, M: int, variant: str, budget: int, horizon: int, count_levels: int) -> None:
    """Refuse before building a time-indexed CNF of more than MAX_CNF_CELLS literals (:func:`cnf_cells`)."""
    cells = cnf_cells(G, M, budget, horizon, count_levels)
    if cells > MAX_CNF_CELLS:
        # fft 4,096 points: building its CNF of some 10^10 literals ran past a minute at --time-limit 5
        other = "; --encoding order states oneshot optima with a far smaller CNF" if variant == "oneshot" else ""
        raise ValueError(f"the time-indexed CNF of this DAG ({G.number_of_nodes():,} nodes, horizon {horizon:,}) "
                         f"would hold about {cells:,} literals, more than {MAX_CNF_CELLS:,}: too large to "
                         f"certify{other}")


def _certify_by_order(G, M: int, out, schedule, io: int, stats: dict, deadline: float | None) -> dict:
    """:func:`certify_optimum` with the order CNF: refute I/O <= io - 1, improving on each model found."""
    from spartition.exact.formulations.order_cnf import decode_order_cnf

    cnf = proof = None
    while io > 0:
        what, found = f"I/O <= {io - 1} at M = {M}", f"the best replayed schedule has I/O {io}"
        _before_encoding(deadline, what, found)
        _refuse_a_slow_cnf(deadline, _order_cells(G), what, found, "oneshot", order=True)
        f, oc = order_budget_cnf(G, M, io - 1)
        model, proof = _refute(f, stats, deadline, what, found)
        if model is None:
            cnf = f
            break
        schedule = decode_order_cnf(oc, model, meta={"method": "certify-order-cnf"})
        io = replay(G, schedule).io  # the model is trusted only through its replay
        stats["improved"] += 1
    claim = {"kind": "pebbling-order", "encoder": ORDER_ENCODER_VERSION, "M": M, "variant": "oneshot", "io": io,
             "horizon": None, "horizon_proven": True, "reductions": list(ORDER_REDUCTIONS)}
    _deliver(out, G, claim, schedule.to_dict(), cnf, proof, stats)
    return {**claim, "stats": stats}


def _deliver(out, G, claim: dict, witness: dict, cnf, proof, stats: dict) -> None:
    """Write the bundle to ``out``, or drop the proof file when no bundle is asked for."""
    stats["solve_s"] = round(stats.get("solve_s", 0.0), 3)
    if out is not None:
        write_bundle(out, G, claim, witness, cnf, proof, tool_versions(), stats)
    elif proof:
        os.unlink(proof)


def _positive(value, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def certify_partition(dag, S: int, out=None, *, time_limit: float | None = None) -> dict:
    """Certify P(S) of ``dag`` (isolated nodes removed): a checked partition and a refuted CNF for one class less.

    ``time_limit`` bounds the whole call as in :func:`certify_optimum` (CP-SAT's
    starting partition gets half of it; default 60 s for it and no limit on
    the refutations); TimeLimitReached when it runs out.
    """
    from spartition.partition.certificate import Partition, check_partition
    from spartition.partition.minimum import min_partition

    _positive(S, "S")

    deadline = _deadline(time_limit)
    H = strip_isolated(dag)
    part = min_partition(H, S, time_limit=_witness_seconds(time_limit), workers=1).partition
    if part is None:
        raise SpartitionError(f"no {S}-partition found to start from")
    stats = {"start_classes": len(part), "improved": 0}
    cnf = proof = None
    while len(part) > 1:
        what, found = f"{len(part) - 1} classes for S = {S}", f"the best checked partition has {len(part)} classes"
        _before_encoding(deadline, what, found)
        p = partition_cnf(H, S, len(part) - 1)
        model, proof = _refute(p.cnf, stats, deadline, what, found)
        if model is None:
            cnf = p.cnf
            break
        part = Partition(S, p.decode_classes(model), meta={"method": "certify-cnf"})
        if not check_partition(H, part, S).valid:  # pragma: no cover - the encoder is exact
            raise SpartitionError("a model of the partition CNF decodes to an invalid partition")
        stats["improved"] += 1
    claim = {"kind": "partition", "encoder": PARTITION_ENCODER_VERSION, "S": S, "classes": len(part)}
    _deliver(out, H, claim, part.to_dict(), cnf, proof, stats)
    return {**claim, "stats": stats}


def certify_capacity(dag, X: int, weight=None, convex: bool = False, out=None, *,
                     time_limit: float | None = None) -> dict:
    """Certify U(X): the heaviest set with P2 and P3 for X, found and refuted by the set CNF alone.

    ``time_limit`` (seconds, default none) bounds the whole call;
    TimeLimitReached when it runs out.
    """
    from spartition.partition.weights import node_weights

    _positive(X, "X")
    deadline = _deadline(time_limit)
    H = strip_isolated(dag)
    weights = {v: int(w) for v, w in node_weights(H, weight).items()}
    stats = {"improved": 0}
    best, W = [], 1
    while True:
        what, found = f"a class of weight >= {W} for X = {X}", f"the heaviest class found weighs {W - 1}"
        _before_encoding(deadline, what, found)
        p = set_cnf(H, X, weights, W, convex=convex)
        model, proof = _refute(p.cnf, stats, deadline, what, found)
        if model is None:
            break
        classes = p.decode_classes(model)
        best = classes[0] if classes else []
        W = sum(weights[v] for v in best) + 1
        stats["improved"] += 1
    claim = {"kind": "capacity", "encoder": PARTITION_ENCODER_VERSION, "X": X, "convex": convex,
             "capacity": W - 1, "weights": weights}
    _deliver(out, H, claim, {"nodes": best}, p.cnf, proof, stats)
    return {**{k: v for k, v in claim.items() if k != "weights"}, "stats": stats}
