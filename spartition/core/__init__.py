"""The model and the game: CDAGs and their compact form, schedules and replay,
trivial bounds, the greedy schedule, DAG symmetry, numeric evaluation, and the
registries through which families and algorithms plug in."""
