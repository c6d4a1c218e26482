"""improve_schedule: same compute order, loads/stores/evictions re-chosen; never worse, always replayed."""

import json

import pytest

from spartition.cli.main import main
from spartition.core.dag import as_compact
from spartition.core.game import Schedule, replay, save_schedule
from spartition.core.greedy import greedy_schedule
from spartition.core.registry import algorithm, build
from spartition.errors import IllegalMove, InvalidSchedule
from spartition.exact.brute import brute_force
from spartition.exact.improve import evict_by_lookahead, improve_schedule
from spartition.families.attention.forward.dag import attention_forward
from spartition.families.classic.dag import chain, matmul, pyramid


def _store_everything(G, schedule):
    """The worst schedule with the same compute order: every value stored, every operand reloaded."""
    c = as_compact(G)
    preds, names = c.pred_lists(), c.names
    moves = []
    for v in (v for m, v in schedule.moves if m == "compute"):
        ps = [names[u] for u in preds[c.index[v]]]
        moves += [("load", u) for u in ps] + [("compute", v)] + [("delete", u) for u in ps]
        moves += [("store", v), ("delete", v)]
    return Schedule(schedule.M, "oneshot", tuple(moves))


@pytest.mark.parametrize("G, M, optimum", [(matmul(2, 2, 1), 3, 13), (matmul(2, 2, 1), 4, 9), (pyramid(3), 3, 11)])
def test_beats_a_bad_schedule_up_to_the_brute_force_optimum(G, M, optimum):
    best = brute_force(G, M, "oneshot")
    assert best.io == optimum
    bad = _store_everything(G, best.schedule)
    r = improve_schedule(G, bad)
    assert r.before == replay(G, bad).io == 18
    assert r.after == replay(G, r.schedule).io == optimum  # the optimum's compute order, evictions re-chosen


@pytest.mark.parametrize(
    "family, name, M",
    [
        ("attention-forward", "square-tiling-forward", 8),
        ("attention-forward", "tiled-forward", 9),
        ("attention-forward", "flash-forward", 24),
        ("attention-forward", "greedy", 4),
        ("attention-backward-flash", "flash-backward", 24),
        ("attention-backward-weights", "li-small-cache-backward", 16),
    ],
)
def test_never_worse_and_replays(family, name, M):
    G = build(family, n=6, d=2)
    s = algorithm(name).generate(G, M)
    r = improve_schedule(G, s)
    assert r.before == replay(G, s).io
    assert r.after <= r.before
    assert replay(G, r.schedule).io == r.after and r.schedule.M == M


def test_hand_computed_improvement():
    # chain c0 -> c1 -> c2 at M = 2: storing and reloading c1 costs 2 more than the trivial
    # minimum (load the input once, store the output once), which the improver reaches
    wasteful = Schedule(2, "oneshot", [("load", "c0"), ("compute", "c1"), ("store", "c1"), ("delete", "c1"),
                                       ("load", "c1"), ("delete", "c0"), ("compute", "c2"), ("store", "c2")])
    r = improve_schedule(chain(3), wasteful)
    assert (r.before, r.after, r.method) == (4, 2, "lookahead-eviction(weight=1.0)")


def test_square_tiling_regression():
    # square tiling at side 1 (n = 2, d = 2, M = 6) reloads Q and K for every product: 46; the
    # same computes with furthest-next-use evictions: 30 (both replayed)
    G = attention_forward(2, 2)
    s = algorithm("square-tiling-forward").generate(G, 6)
    assert (improve_schedule(G, s).before, improve_schedule(G, s).after) == (46, 30)


def test_recomputing_schedule_is_returned_unchanged():
    s = Schedule(2, "recompute", [("load", "c0"), ("compute", "c1"), ("delete", "c1"), ("compute", "c1"),
                                  ("delete", "c0"), ("compute", "c2"), ("store", "c2")])
    r = improve_schedule(chain(3), s)
    assert (r.method, r.before, r.after) == ("input", 2, 2) and "recomputes" in r.tried[0][0]


def test_invalid_input_raises():
    with pytest.raises(IllegalMove, match="predecessor 'c1' is not in fast memory"):
        improve_schedule(chain(3), Schedule(2, "oneshot", [("compute", "c2")]))
    with pytest.raises(InvalidSchedule, match="compute 'P_0_0_0' needs 3 red pebbles, more than M = 2"):
        evict_by_lookahead(matmul(1, 1, 1), [as_compact(matmul(1, 1, 1)).index["P_0_0_0"]], 2)


def test_cli_improve(tmp_path, capsys):
    G = attention_forward(3, 2)
    path, out = tmp_path / "s.json", tmp_path / "better.json"
    save_schedule(greedy_schedule(G, 5), path)
    assert main(["improve", "attention-forward:n=3,d=2", str(path), "--M", "5", "-o", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["after"] <= data["before"] and data["replayed_io"] == data["after"]
    # another M re-pebbles the compute order there
    assert main(["improve", "attention-forward:n=3,d=2", str(path), "--M", "4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["M"], data["input_M"]) == (4, 5) and data["replayed_io"] == data["after"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"M": 5, "variant": "oneshot", "moves": [["compute", "O_0_0"]]}))
    assert main(["improve", "attention-forward:n=3,d=2", str(bad)]) == 1
    assert "invalid schedule" in capsys.readouterr().err
    assert main(["improve", "attention-forward:n=3,d=2", str(path), "--M", "2"]) == 2
    assert "needs 3 red pebbles, more than M = 2" in capsys.readouterr().err


def test_retarget_to_a_smaller_memory():
    G = attention_forward(4, 2)
    s = algorithm("tiled-forward").generate(G, 12)
    r = improve_schedule(G, s, M=5)
    assert r.schedule.M == 5 and replay(G, r.schedule).io == r.after and r.before == replay(G, s).io


@pytest.mark.parametrize("G, M, optimum", [(matmul(2, 2, 1), 3, 13), (pyramid(3), 3, 11)])
def test_one_window_over_the_whole_order_reaches_the_brute_force_optimum(G, M, optimum):
    from spartition.exact.windows import improve_windows

    best = brute_force(G, M, "oneshot")
    bad = _store_everything(G, best.schedule)
    r = improve_windows(G, bad, k=100, window_time=10.0)
    assert (r.before, r.after, r.windows, r.optimal, r.covered) == (18, optimum, 1, 1, 1.0)
    assert replay(G, r.schedule).io == optimum


@pytest.mark.parametrize("k", [3, 12])
def test_windows_never_worse_and_replay(k):
    from spartition.exact.windows import improve_windows

    G = attention_forward(4, 2)
    s = algorithm("square-tiling-forward").generate(G, 6)
    r = improve_windows(G, s, k=k, window_time=1.0)
    assert r.after < r.before == 164 and replay(G, r.schedule).io == r.after  # 162 (k = 3), 140 (k = 12)
    assert r.improved >= 1 and r.covered == 1.0
    # after the eviction passes the windows find nothing left at this size (all proven optimal)
    e = improve_schedule(G, s, window=k)
    assert e.after == 124 and "cp-sat windows" in e.tried[-1][0]
