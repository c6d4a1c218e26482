"""The suite's own rules: in strict mode (CI) a skipped test fails, naming the reason."""

from pathlib import Path

pytest_plugins = ["pytester"]

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()


def test_a_skip_fails_in_strict_mode_and_stays_a_skip_otherwise(pytester, monkeypatch):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile("import pytest\n\ndef test_s():\n    pytest.skip('no browser')\n")
    monkeypatch.delenv("SPARTITION_STRICT_SKIPS", raising=False)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(skipped=1)
    monkeypatch.setenv("SPARTITION_STRICT_SKIPS", "1")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*skipped in strict mode (SPARTITION_STRICT_SKIPS=1): Skipped: no browser*"])
