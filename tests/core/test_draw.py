"""`spartition draw`: files written at the requested size, the timeline's peak is the replay's, refusals."""

import json
import re
import struct

import pytest

from spartition.cli.main import main
from spartition.core.draw import draw_timeline, pebble_state, timeline
from spartition.core.game import Schedule, replay, save_schedule
from spartition.core.greedy import greedy_schedule
from spartition.core.registry import build

# from the test extra ('pip install -e .[test]'): missing, these tests fail instead of skipping
import matplotlib  # noqa: F401, E402
import pydot  # noqa: F401, E402

SPEC = "attention-forward:n=2,d=1"


def png_size(path):
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


@pytest.fixture
def schedule_file(tmp_path):
    G = build("attention-forward", ["n=2", "d=1"])
    schedule = greedy_schedule(G, 4, "oneshot")
    path = tmp_path / "s.json"
    save_schedule(schedule, path)
    return G, schedule, path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_timeline_png_of_the_requested_size(tmp_path, capsys, schedule_file):
    G, schedule, sched = schedule_file
    out = tmp_path / "t.png"
    code, stdout, _ = run(capsys, "draw", SPEC, sched, "-o", out, "--size", "640x360", "--json")
    assert code == 0
    assert png_size(out) == (640, 360) and out.stat().st_size > 5_000
    data = json.loads(stdout)
    result = replay(G, schedule)
    assert (data["kind"], data["peak_red"], data["io"]) == ("timeline", result.peak_red, result.io)


def test_the_timeline_maximum_is_the_replay_peak(schedule_file):
    G, schedule, _ = schedule_file
    result = replay(G, schedule)
    fig = draw_timeline(G, schedule, (500, 300))
    red_line, io_line = fig.axes[0].lines[0], fig.axes[1].lines[0]
    assert max(red_line.get_ydata()) == result.peak_red
    assert io_line.get_ydata()[-1] == result.io
    assert fig.axes[0].lines[1].get_ydata()[0] == schedule.M  # the M line
    data = timeline(G, schedule)
    assert len(data["red"]) == len(schedule.moves) + 1
    assert (len(data["loads"]), len(data["stores"])) == (result.loads, result.stores)


def test_layered_svg_and_png(tmp_path, capsys, schedule_file):
    _, _, sched = schedule_file
    svg = tmp_path / "g.svg"
    assert run(capsys, "draw", SPEC, "-o", svg)[0] == 0
    text = svg.read_text()
    assert "<svg" in text and 'width="576pt"' in text  # 800 px at 100 dpi is 576 pt
    png = tmp_path / "g.png"
    code, out, _ = run(capsys, "draw", SPEC, sched, "-o", png, "--kind", "layered", "--size", "300x200", "--json")
    assert code == 0 and png_size(png) == (300, 200) and json.loads(out)["coloured_by"] == "compute step"


def test_partition_colours(tmp_path, capsys):
    G = build("fft", ["k=1"])
    cert = tmp_path / "p.json"
    cert.write_text(json.dumps({"S": 4, "classes": [list(G)[:2], list(G)[2:]]}))
    png = tmp_path / "p.png"
    code, out, _ = run(capsys, "draw", "fft:k=1", "-o", png, "--partition", cert, "--json")
    assert code == 0 and json.loads(out)["coloured_by"] == "partition" and png_size(png) == (800, 600)
    dot = tmp_path / "p.dot"
    assert run(capsys, "draw", "fft:k=1", "-o", dot, "--partition", cert)[0] == 0
    assert dot.read_text().count('tooltip="class 1"') == 2


@pytest.mark.parametrize("classes, message", [
    ([["F0_0", "nope"]], r"class 0 names node 'nope', which is not in the DAG fft:k=1"),
    ([["F0_0"], ["F0_0"]], r"node 'F0_0' is in classes 0 and 1"),
])
def test_partition_naming_unknown_or_repeated_nodes_is_refused(tmp_path, capsys, classes, message):
    G = build("fft", ["k=1"])
    assert "F0_0" in G and "nope" not in G
    cert = tmp_path / "p.json"
    cert.write_text(json.dumps({"S": 4, "classes": classes}))
    png = tmp_path / "p.png"
    code, _, err = run(capsys, "draw", "fft:k=1", "-o", png, "--partition", cert)
    assert code == 2 and not png.exists()
    assert re.search(message, err), err


def test_dot_coloured_by_pebbles(tmp_path, capsys, schedule_file):
    G, schedule, sched = schedule_file
    dot = tmp_path / "s.dot"
    assert run(capsys, "draw", SPEC, sched, "-o", dot, "--step", 5)[0] == 0
    state = pebble_state(G, schedule, 5)
    text = dot.read_text()
    assert text.count('tooltip="red"') == sum(s == "red" for s in state.values())
    assert "after 5 of" in text


def test_pebble_state_at_the_start_and_end():
    G = build("chain", ["n=3"])
    s = Schedule(2, "oneshot", [("load", "c0"), ("compute", "c1"), ("delete", "c0"),
                                ("compute", "c2"), ("store", "c2")])
    assert pebble_state(G, s, 0) == {"c0": "blue", "c1": "none", "c2": "none"}
    assert pebble_state(G, s) == {"c0": "blue", "c1": "red", "c2": "both"}


@pytest.mark.parametrize("argv, message", [
    (["draw", "attention-forward:n=8,d=2", "-o", "{tmp}/big.png"], "a layered drawing of 624 nodes would be unreadable"),
    (["draw", SPEC, "-o", "{tmp}/x.jpg"], "the extension must be one of"),
    (["draw", SPEC, "-o", "{tmp}/x.png", "--kind", "timeline"], "--kind timeline needs a SCHEDULE"),
    (["draw", SPEC, "-o", "{tmp}/x.png", "--size", "10x10"], "WIDTHxHEIGHT"),
])
def test_refusals_exit_2(tmp_path, capsys, argv, message):
    code, _, err = run(capsys, *(a.format(tmp=tmp_path) for a in argv))
    assert code == 2 and message in err and "Traceback" not in err
    assert not list(tmp_path.glob("*.png"))


def test_invalid_schedule_is_refused(tmp_path, capsys):
    sched = tmp_path / "bad.json"
    sched.write_text(json.dumps({"M": 4, "variant": "oneshot", "moves": [["compute", "A_0_0"]]}))
    code, _, err = run(capsys, "draw", SPEC, sched, "-o", tmp_path / "t.png")
    assert code == 1 and "step 0: compute 'A_0_0'" in err  # an invalid schedule, as replay says
    assert not (tmp_path / "t.png").exists()


def test_layered_drawing_has_an_arrowhead_per_edge_and_names_the_dag():
    from matplotlib.patches import FancyArrowPatch

    from spartition.core.draw import draw_layered

    G = build("attention-forward", ["n=2", "d=1"])
    fig = draw_layered(G)
    ax = fig.axes[0]
    arrows = [t for t in ax.texts if isinstance(getattr(t, "arrow_patch", None), FancyArrowPatch)]
    assert len(arrows) == G.number_of_edges() == 34
    # the defaults the builder fills in (shape, mask, ...) are not repeated in the title
    assert ax.get_title() == "attention-forward n=2 d=1: 26 nodes, 34 edges"
    labels = [t for t in ax.texts if t.get_text() in G]
    assert len(labels) == 26 and min(t.get_fontsize() for t in labels) >= 8


def test_timeline_legend_sits_above_the_curve(schedule_file):
    from spartition.core.draw import draw_timeline

    G, schedule, _ = schedule_file
    top = draw_timeline(G, schedule).axes[0]
    assert top.get_title().startswith("attention-forward n=2 d=1, oneshot schedule, M = 4")
    assert top.get_ylim()[1] > schedule.M + 1  # headroom for the legend: the curve never exceeds M
