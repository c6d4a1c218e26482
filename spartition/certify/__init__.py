"""Certified optima: pure-clause CNF encodings, LRAT refutations and an independent checker.

An upper bound (a schedule, a partition) is checked by replaying it; this
package makes the lower side checkable too. For a claimed optimum ``Q*`` it
writes a CNF stating "a schedule with I/O <= Q* - 1 exists"
(:mod:`~spartition.certify.encoding`), refutes it with CaDiCaL producing an
LRAT proof (:mod:`~spartition.certify.sat`), and checks that proof with a
short checker of its own (:mod:`~spartition.certify.proof`). The pieces travel
together in a certificate bundle (:mod:`~spartition.certify.bundle`).

Rooms: ``cnf`` (clause container, DIMACS), ``cardinality`` (counters as
clauses), ``encoding`` (pebbling CNF), ``partition_encoding`` (S-partition
and class-capacity CNF), ``sat`` (the one place a SAT solver is called),
``proof`` (the LRAT checker), ``bundle`` (certificates on disk),
``certify`` (the orchestration used by the command line).
"""
