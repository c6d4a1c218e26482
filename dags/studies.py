"""The built-in study of ``spartition compare``, registered under ``spartition.studies`` as ``default``."""

from __future__ import annotations

from spartition.study.studies import StudySpec

__all__ = ["BUILTIN"]

#: The README's main job: exact-attention forward with n = 2, d = 1 over its whole M range,
#: the CP-SAT optimum cross-checked by the exhaustive state search.
BUILTIN = StudySpec(
    family="attention-forward", params={"n": 2, "d": 1}, Ms=None, variant="oneshot",
    exact=("cpsat", "brute"), time_limit=60.0, bound_time_limit=20.0, workers=1,
)
