"""One settings module: the same checks, defaults and error type for every solver entry point."""

import inspect
import json
import subprocess
import sys

import pytest

from spartition.errors import ParameterError, SpartitionError
from spartition.settings import (
    DEFAULT_SEED,
    DEFAULT_VARIANT,
    DEFAULT_WORKERS,
    SEED_RANGE,
    check_seed,
    check_solver_settings,
    check_time_limit,
    check_variant,
    check_workers,
)


def test_parameter_error_is_a_spartition_error_and_a_value_error():
    assert issubclass(ParameterError, SpartitionError) and issubclass(ParameterError, ValueError)


@pytest.mark.parametrize("call, message", [
    (lambda: check_seed(2**31), r"seed must be an integer from 0 to 2147483647 \(CP-SAT seeds are 32-bit\), got 2147483648"),
    (lambda: check_seed(True), r"seed must be an integer from 0 to 2147483647 \(CP-SAT seeds are 32-bit\), got True"),
    (lambda: check_workers(0), "workers must be a positive integer, got 0"),
    (lambda: check_time_limit(float("inf")), "time_limit must be a positive number of seconds, got inf"),
    (lambda: check_time_limit(None, allow_none=False), "time_limit must be a positive number of seconds, got None"),
    (lambda: check_variant("both"), r"unknown variant 'both'; expected one of \('oneshot', 'recompute'\)"),
    (lambda: check_solver_settings(deterministic_time=0), "deterministic_time must be a positive number of seconds, got 0"),
])
def test_each_check_names_the_setting(call, message):
    with pytest.raises(ParameterError, match=message):
        call()


def test_the_edges_of_the_ranges_pass():
    assert (check_seed(SEED_RANGE[0]), check_seed(SEED_RANGE[1])) == (0, 2**31 - 1)
    assert check_time_limit(1e-3) == 0.001 and check_workers(1) == 1
    # a solver reads an infinite limit as no limit; a stored row may not carry one
    check_solver_settings(time_limit=float("inf"))


def entry_points():
    from spartition.exact.brute import brute_force
    from spartition.exact.solve import solve_io
    from spartition.partition.capacity import class_capacity
    from spartition.partition.lower_bounds import io_lower_bounds
    from spartition.partition.minimum import min_partition
    from spartition.study.studies import StudySpec
    from spartition.study.tasks import Task

    return {"solve_io": solve_io, "min_partition": min_partition, "class_capacity": class_capacity,
            "io_lower_bounds": io_lower_bounds, "brute_force": brute_force, "StudySpec": StudySpec, "Task": Task}


def test_every_solver_entry_point_has_the_same_defaults():
    defaults = {}
    for name, fn in entry_points().items():
        params = inspect.signature(fn).parameters
        defaults[name] = {k: params[k].default for k in ("variant", "workers", "seed") if k in params
                          and params[k].default is not inspect.Parameter.empty}
    assert defaults == {
        "solve_io": {"variant": "oneshot", "workers": 1, "seed": 0},
        "min_partition": {"workers": 1, "seed": 0},
        "class_capacity": {"workers": 1, "seed": 0},
        "io_lower_bounds": {"workers": 1, "seed": 0},
        "brute_force": {"variant": "oneshot"},
        "StudySpec": {"variant": "oneshot", "workers": 1, "seed": 0},
        "Task": {"workers": 1, "seed": 0},
    }
    assert (DEFAULT_VARIANT, DEFAULT_WORKERS, DEFAULT_SEED) == ("oneshot", 1, 0)


@pytest.mark.parametrize("name, kwargs, message", [
    ("solve_io", {"M": 3, "seed": -1}, "seed must be an integer from 0"),
    ("min_partition", {"S": 3, "workers": 0}, "workers must be a positive integer, got 0"),
    ("class_capacity", {"X": 3, "time_limit": float("nan")}, "time_limit must be a positive number of seconds, got nan"),
    ("io_lower_bounds", {"M": 3, "seed": 2**31}, "seed must be an integer from 0"),
    ("solve_io", {"M": 3, "variant": "one-shot"}, "unknown variant 'one-shot'"),
])
def test_every_entry_point_refuses_a_bad_setting_with_a_parameter_error(name, kwargs, message):
    from spartition.families.classic.dag import chain

    with pytest.raises(ParameterError, match=message):
        entry_points()[name](chain(3), **kwargs)


def test_the_cli_reports_a_bad_family_parameter_as_a_parameter_error_with_exit_2():
    proc = subprocess.run([sys.executable, "-m", "spartition", "build", "chain", "n=two", "--json"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert json.loads(proc.stdout) == {"error": "parameter n of chain must be an integer, got 'two'",
                                       "kind": "ParameterError"}
