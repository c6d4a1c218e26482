"""pytest plugin of spartition (entry point ``pytest11``): assert claims from a test suite.

Fixtures
--------
``spartition_store``
    The results store of the test session: a fresh one in the session's
    temporary directory, unless ``--spartition-store PATH`` names one to reuse
    (``$SPARTITION_STORE``, the user's own store, is never read implicitly).
    A reused store answers only with rows the current code computed: every
    row is keyed by the hash of the sources that produced it
    (:func:`spartition.study.tasks.source_hash`).
``spartition_claims``
    A :class:`ClaimChecker` on that store, one CP-SAT worker:
    ``spartition_claims.check(claim)`` returns the report,
    ``spartition_claims.assert_holds(claim)`` fails the test with a message
    naming each failing instance and its numbers.

Examples
--------
In a user's test file (at M = 4 the forward DAG n = 2, d = 1 cannot reach
its trivial bound 4 n d = 8; its optimum is 15)::

    from spartition.study.claims import Claim, expr, optimum

    def test_forward_beats_the_trivial_bound(spartition_claims):
        spartition_claims.assert_holds(Claim("above-trivial", "opt >= 4 n d + 1 at M = 4", "Saha & Ye, section 2",
                                             "attention-forward", {"n": [2], "d": [1]}, optimum(), ">=",
                                             expr(lambda p, M: 4 * p["n"] * p["d"] + 1, "4nd + 1"), Ms=(4,)))
"""

from __future__ import annotations

import pytest

__all__ = ["ClaimChecker", "pytest_addoption", "spartition_store", "spartition_claims"]


class ClaimChecker:
    """Checks claims against one store with fixed settings (time limits, workers)."""

    def __init__(self, store, **settings):
        self.store = store
        self.settings = settings

    def check(self, claim, **settings):
        from spartition.study.claims import check_claim

        return check_claim(claim, self.store, **{**self.settings, **settings})

    def assert_holds(self, claim, allow_undecided: bool = False, **settings):
        from spartition.study.claims import assert_claim

        __tracebackhide__ = True
        return assert_claim(claim, self.store, allow_undecided=allow_undecided, **{**self.settings, **settings})


def pytest_addoption(parser):
    group = parser.getgroup("spartition")
    group.addoption("--spartition-store", default=None, metavar="PATH",
                    help="results store for the claim fixtures to reuse (default: a fresh one per test session)")


@pytest.fixture(scope="session")
def spartition_store(request, tmp_path_factory):
    """The session's results store (see the module docstring)."""
    from spartition.study.store import ResultStore

    path = request.config.getoption("--spartition-store")
    if path is None:
        path = tmp_path_factory.mktemp("spartition") / "results.sqlite"
    store = ResultStore(path)
    yield store
    store.close()


@pytest.fixture
def spartition_claims(spartition_store):
    """A :class:`ClaimChecker` on the session store, one CP-SAT worker."""
    return ClaimChecker(spartition_store, workers=1)
