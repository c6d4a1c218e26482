"""A usage error is one line with a hint, not argparse's usage block (issue 42)."""

import pytest

from spartition.cli.main import main


@pytest.mark.parametrize("argv, prog, words", [
    (["solve", "fft:k=1", "--M", "x"], "spartition solve", "argument --M"),
    (["solve"], "spartition solve", "required"),
    (["nosuchcommand"], "spartition", "invalid choice"),
    (["greedy", "fft:k=1", "--M", "3", "--bogus"], "spartition", "unrecognized arguments"),
])
def test_a_usage_error_is_one_line_with_a_hint(capsys, argv, prog, words):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{prog}: error: ") and words in lines[0]
    assert lines[0].endswith(f"(see '{prog} --help')") and out == ""
