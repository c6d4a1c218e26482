"""Exact optimal I/O: the front door :func:`~spartition.exact.solve.solve_io`,
the CP-SAT formulations it chooses from (``formulations/``, one module and one
:class:`~spartition.exact.formulations.Formulation` record per model), the
hint schedules (``hints``), the result and its status (``result``), the
settings, status names and version every CP-SAT call shares (``cpsat``),
the brute-force state search that is the tests' independent truth (``brute``),
and the second engine of the order model, its clauses (``formulations/order_cnf``)
solved by RC2 MaxSAT (``maxsat``), alone or beside CP-SAT (``portfolio``)."""
