"""Suite-wide settings: in strict mode (``SPARTITION_STRICT_SKIPS=1``, set by CI) a skipped test fails.

CI installs every test extra and the browser the report test uses, so a skip
there means a missing install step or a test that checks nothing; locally a
skip stays a skip, with its reason (``-rs``).
"""

import os

import pytest

# tests/data holds inputs, among them an example plug-in package that only loads once installed
collect_ignore = ["data"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("SPARTITION_STRICT_SKIPS") == "1" and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped in strict mode (SPARTITION_STRICT_SKIPS=1): {reason}"
