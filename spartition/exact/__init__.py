"""Exact optimal I/O: the front door :func:`~spartition.exact.solve.solve_io`,
the CP-SAT formulations it chooses from (``formulations/``), the settings and
status handling every CP-SAT call shares (``cpsat``), and the brute-force
state search that is the tests' independent truth."""
