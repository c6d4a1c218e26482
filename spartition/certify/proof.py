"""An independent LRAT proof checker, small enough to read in one sitting.

An LRAT proof refutes a CNF whose clauses are numbered 1, 2, ... in file
order. Each line is either an addition or a deletion::

    <id> <literals> 0 <hints> 0      add clause <id>
    <id> d <ids> 0                   delete clauses <ids>

An added clause C is accepted when it is a reverse unit propagation (RUP)
consequence of its hints: assume every literal of C false, then walk the
hints in order; each must be a clause, still present, with all literals false
but one, which becomes true, until one hint has every literal false (a
conflict). Nothing else is searched, so checking is linear in the proof.
The proof is valid once the empty clause has been added this way. Added ids
must increase and never reuse a present id. Negative hints (RAT steps) are
refused: CaDiCaL writes pure RUP proofs in LRAT mode.

The checker shares no code with the solver or the encoders: it reads the
two files and trusts neither.

References
----------
L. Cruz-Filipe, M. Heule, W. Hunt, M. Kaufmann, P. Schneider-Kamp,
"Efficient certified RAT verification", CADE 2017.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from spartition.certify.cnf import CNF, read_dimacs, read_file_text
from spartition.errors import SpartitionError, TimeLimitReached

__all__ = ["ProofError", "ProofReport", "check_lrat", "check_lrat_text"]


class ProofError(SpartitionError):
    """The proof is not a valid LRAT refutation of the CNF; the message names the first bad step."""


@dataclass(frozen=True)
class ProofReport:
    """An accepted refutation: steps read, clauses added and deleted, hint literals, wall-clock seconds (``wall_s``)."""

    lines: int
    additions: int
    deletions: int
    hints: int
    wall_s: float

    def to_dict(self) -> dict:
        return {"valid": True, "lines": self.lines, "additions": self.additions,
                "deletions": self.deletions, "hints": self.hints, "wall_s": round(self.wall_s, 3)}


def _rup(clauses: dict, lemma: list, hints: list) -> str | None:
    """None if ``hints`` derive ``lemma`` by unit propagation, else what went wrong."""
    true = {-x for x in lemma}
    for h in hints:
        if h < 0:
            return f"hint {h} is a RAT hint; only RUP steps are accepted"
        clause = clauses.get(h)
        if clause is None:
            return f"hint {h} is not a present clause"
        open_lits = []
        for x in clause:
            if x in true:
                return f"hint {h} {list(clause)} is already satisfied"
            if -x not in true:
                open_lits.append(x)
        if not open_lits:
            return None
        if len(open_lits) > 1:
            return f"hint {h} {list(clause)} is not unit: {len(open_lits)} literals unassigned"
        true.add(open_lits[0])
    return "the hints end without a conflict"


#: Proof lines checked between two looks at the clock when a deadline is set.
CLOCK_EVERY_LINES = 4096


def check_lrat(cnf, proof, deadline: float | None = None) -> ProofReport:
    """Check that ``proof`` (an LRAT file) refutes ``cnf`` (a DIMACS file or a :class:`CNF`).

    ``deadline`` (a ``time.perf_counter()`` value) stops the check when it
    passes: the proof is then neither accepted nor refused.

    Raises
    ------
    ProofError
        At the first line that is malformed or not a valid step, naming the
        line number, the clause id and the reason; or if the proof ends
        without the empty clause.
    TimeLimitReached
        ``deadline`` passed before the check ended.

    Examples
    --------
    >>> f = CNF(num_vars=2, clauses=[(1, 2), (-1, 2), (1, -2), (-1, -2)])
    >>> check_lrat_text(f, "5 2 0 1 2 0\\n6 0 5 3 4 0\\n").additions
    2
    >>> check_lrat_text(f, "5 2 0 1 3 0\\n")
    Traceback (most recent call last):
    ...
    spartition.certify.proof.ProofError: proof line 1, clause 5: hint 3 [1, -2] is already satisfied
    """
    return _check(cnf, proof, is_text=False, deadline=deadline)


def _check(cnf, proof, is_text: bool, deadline: float | None = None) -> ProofReport:
    start = time.perf_counter()
    f = cnf if isinstance(cnf, CNF) else read_dimacs(cnf)
    clauses = {i: c for i, c in enumerate(f.clauses, 1)}
    last_id = len(f.clauses)
    text = proof if is_text else read_file_text(proof, ProofError, "proof file")
    additions = deletions = hints = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        if deadline is not None and lineno % CLOCK_EVERY_LINES == 0 and time.perf_counter() > deadline:
            raise TimeLimitReached(f"the time limit ran out at line {lineno:,} of the LRAT check")
        tokens = line.split()
        if not tokens or tokens[0] == "c":
            continue
        where = f"proof line {lineno}"
        try:
            if tokens[1:2] == ["d"]:
                ids = [int(t) for t in tokens[2:]]
                if not ids or ids[-1] != 0 or 0 in ids[:-1]:
                    raise ProofError(f"{where}: a deletion is 'id d ids 0'")
                for i in ids[:-1]:
                    if clauses.pop(i, None) is None:
                        raise ProofError(f"{where}: deletes clause {i}, which is not present")
                deletions += 1
                continue
            nums = [int(t) for t in tokens]
        except ValueError:
            raise ProofError(f"{where}: not an LRAT line: {line.strip()[:60]!r}") from None
        cid, rest = nums[0], nums[1:]
        if rest.count(0) != 2 or rest[-1] != 0:
            raise ProofError(f"{where}: an addition is 'id literals 0 hints 0'")
        cut = rest.index(0)
        lemma, hint_ids = rest[:cut], rest[cut + 1 : -1]
        where += f", clause {cid}"
        if cid <= last_id:
            raise ProofError(f"{where}: ids must increase (last id {last_id})")
        if len(set(lemma)) != len(lemma) or any(-x in lemma for x in lemma):
            raise ProofError(f"{where}: repeated or complementary literals in {lemma}")
        if any(abs(x) > f.num_vars for x in lemma):
            # Fresh variables need RAT; a RUP step cannot introduce one.
            raise ProofError(f"{where}: literal beyond the {f.num_vars} variables of the CNF")
        problem = _rup(clauses, lemma, hint_ids)
        if problem is not None:
            raise ProofError(f"{where}: {problem}")
        clauses[cid] = tuple(lemma)
        last_id = cid
        additions += 1
        hints += len(hint_ids)
        if not lemma:
            return ProofReport(lineno, additions, deletions, hints, time.perf_counter() - start)
    raise ProofError("the proof ends without deriving the empty clause")


def check_lrat_text(cnf, proof_text: str) -> ProofReport:
    """:func:`check_lrat` on a proof given as text."""
    return _check(cnf, proof_text, is_text=True)
