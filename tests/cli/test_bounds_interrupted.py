"""Ctrl-C during ``spartition bounds`` reports the bounds finished before it, exit 130 (issue 42)."""

import json

import pytest

import spartition.partition.lower_bounds as lower_bounds
from spartition.cli.main import main


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def test_ctrl_c_in_a_partition_search_keeps_the_closed_form_bounds(capsys, monkeypatch):
    monkeypatch.setattr(lower_bounds, "min_partition", _interrupt)
    assert main(["bounds", "fft:k=2", "--M", "3", "--json", "--time-limit", "10"]) == 130
    data = json.loads(capsys.readouterr().out)
    assert data["interrupted"] is True and data["best"] == 8
    assert [(b["method"], b["value"], b["proven"]) for b in data["bounds"]] == [("trivial", 8, True), ("pair-sums", 8, True)]


def test_ctrl_c_in_the_text_output_says_what_was_not_computed(capsys, monkeypatch):
    monkeypatch.setattr(lower_bounds, "min_partition", _interrupt)
    assert main(["bounds", "fft:k=2", "--M", "3", "--time-limit", "10"]) == 130
    out = capsys.readouterr().out
    assert "best lower bound: 8" in out and "stopped by Ctrl-C" in out


def test_found_collects_every_bound_of_an_uninterrupted_run():
    from spartition.families.classic.dag import fft

    found = []
    bounds = lower_bounds.io_lower_bounds(fft(1), 3, time_limit=10, workers=1, found=found)
    assert tuple(found) == bounds and [b.method for b in bounds] == ["trivial", "pair-sums", "hong-kung",
                                                                      "x-partition", "capacity"]
