"""The settings every solver entry point takes, their defaults, and their checks, in one place.

:func:`~spartition.exact.solve.solve_io`,
:func:`~spartition.partition.minimum.min_partition`,
:func:`~spartition.partition.capacity.class_capacity`,
:func:`~spartition.partition.lower_bounds.io_lower_bounds`, the study tasks
and the grid reader take the same ``variant``, ``workers``, ``seed`` and
``time_limit``, with the defaults below, and check them here: a bad value
raises :class:`~spartition.errors.ParameterError` naming the setting (exit
status 2 at the command line), never a solver's own error later on.
"""

from __future__ import annotations

import math

from spartition.errors import ParameterError

__all__ = [
    "VARIANTS",
    "PARTIAL",
    "GAMES",
    "DEFAULT_VARIANT",
    "DEFAULT_WORKERS",
    "DEFAULT_SEED",
    "SEED_RANGE",
    "ENGINES",
    "DEFAULT_CUBE_DEPTH",
    "check_positive_int",
    "check_seed",
    "check_time_limit",
    "check_variant",
    "check_workers",
    "check_solver_settings",
]

#: The two games (``docs/definitions.md``): the standard one, and each non-input computed at most once.
VARIANTS = ("oneshot", "recompute")
#: The partial-computation game (``docs/definitions.md`` section 2.1): a node aggregated one in-edge at a time.
PARTIAL = "partial"
#: Every game a schedule is played in: the two variants above, which the solvers take, and the partial game, which
#: only the commands that name it take (replay, greedy, brute).
GAMES = (*VARIANTS, PARTIAL)
#: The game a solver plays when none is named.
DEFAULT_VARIANT = "oneshot"
#: CP-SAT search workers when none are named: one is deterministic and fair on a shared machine.
DEFAULT_WORKERS = 1
DEFAULT_SEED = 0
#: Who solves an exact model (:func:`spartition.exact.solve.solve_io`); ``auto`` picks one of the others.
ENGINES = ("auto", "cp-sat", "maxsat", "linear", "portfolio", "cubes")
#: Order literals the ``cubes`` engine splits on when none are named (2^3 = 8 cubes).
DEFAULT_CUBE_DEPTH = 3
#: CP-SAT's ``random_seed`` is a 32-bit signed integer; negative seeds are refused like the library does.
SEED_RANGE = (0, 2**31 - 1)


def check_positive_int(value, name: str) -> int:
    """``value`` if it is an integer >= 1 (not a bool), else :class:`ParameterError` naming ``name``.

    Examples
    --------
    >>> check_positive_int(2, "workers")
    2
    >>> check_positive_int(0, "--workers")
    Traceback (most recent call last):
    ...
    spartition.errors.ParameterError: --workers must be a positive integer, got 0
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(f"{name} must be a positive integer, got {value!r}")
    return value


def check_workers(value, name: str = "workers") -> int:
    """A number of CP-SAT workers: a positive integer (:func:`check_positive_int`)."""
    return check_positive_int(value, name)


def check_seed(value, name: str = "seed") -> int:
    """``value`` if it is an integer in :data:`SEED_RANGE`, else :class:`ParameterError` naming ``name``.

    Examples
    --------
    >>> check_seed(7)
    7
    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    spartition.errors.ParameterError: seed must be an integer from 0 to 2147483647 (CP-SAT seeds are 32-bit), got -1
    """
    lo, hi = SEED_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ParameterError(f"{name} must be an integer from {lo} to {hi} (CP-SAT seeds are 32-bit), got {value!r}")
    return value


def check_time_limit(value, name: str = "time_limit", allow_none: bool = True, finite: bool = True) -> float | None:
    """``value`` as a float if it is a positive finite number of seconds (or None if allowed).

    ``finite=False`` also takes infinity (no limit), which a solver reads
    as it is but a stored row may not carry (SQLite cannot key on it).

    Raises
    ------
    ParameterError
        Naming ``name``, on NaN, infinity, zero, a negative number or a non-number.

    Examples
    --------
    >>> check_time_limit(3), check_time_limit(None)
    (3.0, None)
    >>> check_time_limit(float("nan"), "--time-limit")
    Traceback (most recent call last):
    ...
    spartition.errors.ParameterError: --time-limit must be a positive number of seconds, got nan
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or value <= 0 \
            or (finite and math.isinf(value)):
        raise ParameterError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


def check_variant(value, name: str = "variant") -> str:
    """``value`` if it is one of :data:`VARIANTS`.

    Examples
    --------
    >>> check_variant("recompute")
    'recompute'
    >>> check_variant("one-shot")
    Traceback (most recent call last):
    ...
    spartition.errors.ParameterError: unknown variant 'one-shot'; expected one of ('oneshot', 'recompute')
    """
    if value not in VARIANTS:
        raise ParameterError(f"unknown {name} {value!r}; expected one of {VARIANTS}")
    return value


def check_solver_settings(time_limit=None, workers=None, seed=None, deterministic_time=None) -> None:
    """Reject solver settings that CP-SAT would misread, naming the setting; ``None`` means "not given".

    Parameters
    ----------
    time_limit, deterministic_time : float, optional
        Seconds (wall clock, deterministic).
    workers : int, optional
    seed : int, optional

    Raises
    ------
    ParameterError
        Naming the first setting out of range.

    Examples
    --------
    >>> check_solver_settings(time_limit=1.0, workers=2, seed=0)
    >>> check_solver_settings(time_limit=float("nan"))
    Traceback (most recent call last):
    ...
    spartition.errors.ParameterError: time_limit must be a positive number of seconds, got nan
    """
    check_time_limit(time_limit, "time_limit", finite=False)
    check_time_limit(deterministic_time, "deterministic_time", finite=False)
    if workers is not None:
        check_workers(workers)
    if seed is not None:
        check_seed(seed)
