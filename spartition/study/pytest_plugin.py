"""pytest plugin of spartition (entry point ``pytest11``): assert claims from a test suite.

Fixtures
--------
``spartition_store``
    A results store shared by the whole session: ``--spartition-store PATH``
    (or ``$SPARTITION_STORE``; ``:memory:`` for a fresh one), else a file in
    pytest's cache directory, so a re-run reuses every computed value
    (``pytest --cache-clear`` starts afresh).
``claims``
    A :class:`ClaimChecker`: ``claims.check(claim)`` returns the report,
    ``claims.assert_holds(claim)`` fails the test with a message naming each
    failing instance and its numbers.

Examples
--------
In a user's test file::

    from spartition.study.claims import Claim, optimum, formula

    def test_forward_lower_bound(claims):
        claims.assert_holds(Claim("sy", "opt >= sy-lower", "Saha & Ye", "attention-forward",
                                  {"n": [2], "d": [1]}, optimum(), ">=", formula("sy-lower")))
"""

from __future__ import annotations

import os

import pytest

__all__ = ["ClaimChecker", "pytest_addoption", "spartition_store", "claims"]


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
                    help="results store for claim fixtures (default: in pytest's cache directory)")


@pytest.fixture(scope="session")
def spartition_store(request):
    """The session's results store (see the module docstring)."""
    from spartition.study.store import ResultStore

    path = request.config.getoption("--spartition-store") or os.environ.get("SPARTITION_STORE")
    if path is None:
        cache = getattr(request.config, "cache", None)
        path = cache.mkdir("spartition") / "results.sqlite" if cache is not None else ":memory:"
    store = ResultStore(path)
    yield store
    store.close()


@pytest.fixture
def claims(spartition_store):
    """A :class:`ClaimChecker` on the session store, one CP-SAT worker."""
    return ClaimChecker(spartition_store, workers=1)
