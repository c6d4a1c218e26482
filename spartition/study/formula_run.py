"""The sandwich's explicit lower-bound formulas, evaluated in a child process that a time limit can end.

A formula's value can be a search of its own (the segment count
``segment-forward-lower`` of attention-forward n = 16, d = 4 at M = 16 takes
about 10 s), which nothing can stop from inside: run in a child process
(:class:`spartition.exact.child.ChildSearch`) beside the parent's schedule
generation, it uses the second core, and what it has not finished when the
time runs out is killed and named as skipped.
"""

from __future__ import annotations

import sys
import time

from spartition.exact.child import ChildSearch, child_connections

__all__ = ["FormulaRun"]


def _wanted(f, variant: str) -> bool:
    # the sandwich's lower side: explicit lower bounds proven for the game asked (spartition.study.sandwich)
    return f.kind == "lower" and f.constants == "explicit" and variant in f.variants


def _serve(fd_in: int, fd_out: int) -> None:
    """The child process: check the DAG's label, then evaluate each wanted formula, sending each value as it is done."""
    from spartition.study.formulas import evaluate_formula, formulas_for, paper_params_for

    (family, params, M, variant, digest, nodes), conn = child_connections(fd_in, fd_out)
    if digest is not None:
        same = _builds(family, params, digest, nodes)
        conn.send(("label", same))
        if not same:
            conn.send(("end",))
            conn.close()
            return
    paper = paper_params_for(family, params)
    for f in formulas_for(family):
        if not _wanted(f, variant):
            continue
        try:
            conn.send(("value", evaluate_formula(f, paper, M, family)))
        except Exception as exc:  # noqa: BLE001 - the parent reports it as the formula's own failure
            conn.send(("error", f.name, f"{type(exc).__name__}: {exc}"))
    conn.send(("end",))
    conn.close()


def _builds(family: str, params: dict, digest: str, nodes: int) -> bool:
    """Whether ``family(**params)`` (isolated nodes aside) is the DAG of hash ``digest``: a file's label is a claim."""
    from spartition.core.dag import dag_hash, strip_isolated
    from spartition.core.registry import build
    from spartition.errors import SpartitionError

    try:
        built = build(family, max_nodes=max(nodes, 1), **params)
        # the stripped build only when the plain one differs: on 10^5 nodes each costs seconds
        return dag_hash(built) == digest or dag_hash(strip_isolated(built)) == digest
    except (SpartitionError, ValueError, TypeError):
        return False


class FormulaRun:
    """The explicit lower-bound formulas of ``family`` at ``(params, M)`` for ``variant``, in a child process.

    Parameters
    ----------
    family : str
    params : dict
        Builder parameters (:func:`spartition.study.formulas.paper_params_for` completes them).
    M : int
    variant : {"oneshot", "recompute"}
    digest : str or None
        The hash (:func:`spartition.core.dag.dag_hash`) of the DAG the
        formulas are for: the child first checks that the family builds it
        (:attr:`label`); None: known already.
    nodes : int
        Its node count (the size guard of the rebuild).

    Attributes
    ----------
    label : bool or None
        Whether the family builds the DAG (None: not checked, or not in time).

    Examples
    --------
    >>> run = FormulaRun("attention-forward", {"n": 2, "d": 1}, 4, "oneshot")
    >>> values, skipped = run.collect(time.monotonic() + 60)
    >>> [v.name for v in values], skipped
    (['trivial-forward', 'segment-forward-lower', 'segment-forward-av-lower', 'segment-forward-recompute-lower'], [])
    """

    def __init__(self, family: str, params: dict, M: int, variant: str, digest: str | None = None, nodes: int = 0):
        from spartition.study.formulas import formulas_for

        self.names = [f.name for f in formulas_for(family) if _wanted(f, variant)]
        self.label = None
        self._child = ChildSearch("spartition.study.formula_run", (family, dict(params), M, variant, digest, nodes))

    def collect(self, deadline: float) -> tuple[list, list]:
        """Wait until the child is done or ``deadline`` (``time.monotonic()``) passes, then end it.

        Returns
        -------
        (list of FormulaValue, list of str)
            The values received, and one skipped note per formula not
            evaluated (``"formula:NAME: time limit"``, or its error).
        """
        conn, values, skipped = self._child.conn, [], []
        finished = False
        if not self.names:
            self._child.end({})
            return values, skipped
        try:
            while not finished:
                left = max(deadline - time.monotonic(), 0.0)
                if not conn.poll(min(left, 0.1)):  # at the deadline: what was already sent is still read
                    if left <= 0 or (not self._child.alive and not conn.poll()):
                        break  # out of time, or it died (out of memory, say): the rest is skipped below
                    continue
                try:
                    msg = conn.recv()
                except EOFError:
                    break
                if msg[0] == "label":
                    self.label = msg[1]
                elif msg[0] == "value":
                    values.append(msg[1])
                elif msg[0] == "error":
                    skipped.append(f"formula:{msg[1]}: {msg[2]}")
                elif msg[0] == "end":
                    finished = True
        finally:
            self._child.end({})
        if self.label is False:
            return values, skipped
        if not finished:
            why = "time limit" if time.monotonic() >= deadline else "the evaluation failed"
            done = {v.name for v in values} | {s.split(":")[1] for s in skipped}
            skipped += [f"formula:{name}: {why}" for name in self.names if name not in done]
        return values, skipped


if __name__ == "__main__":  # the child of FormulaRun
    _serve(int(sys.argv[1]), int(sys.argv[2]))
