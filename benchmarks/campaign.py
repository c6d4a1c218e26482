"""A user campaign of the command line: hundreds of invocations on a user's own DAGs, checked.

Usage: ``python benchmarks/campaign.py [--time-limit S] [--out DIR] [--quick]``.

Inputs are what new users bring (issue 42): an MLP forward/backward CDAG of 33
nodes whose forward outputs ``y`` are read by the backward pass and marked
``"output": true``, a 3-point stencil written with networkx, seeded random DAGs
(some with marked inner outputs), each saved as node-link JSON, DOT and
HyperDAG; and the mistakes they make: a cyclic graph, a malformed file, a
schedule naming an unknown node or making an illegal move, an M below the
smallest feasible M, a flag out of range, the results store or an input named
as the output, and runs interrupted with SIGINT sent to the process group.

Each invocation is checked for
- its exit status: the expected one, and never 3 (an internal error) on a
  user's mistake;
- no write over the results store or any input (sha256 before and after);
- its wall time: at most ``--time-limit`` + 5 s where it takes a time limit
  (for an interrupted run: at most 5 s after the signal);
- its numbers: on DAGs of at most 9 nodes, against the optimum of a brute
  force written here, independent of the project's (a 0-1 BFS over pebble
  states): a proven optimum equals it, every lower bound is at most it, every
  replayed schedule at least it.

It prints one row per invocation and a summary line; exit status 1 when a
check failed.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from spartition.core.dag import outputs, save_dag

CLI = [sys.executable, "-m", "spartition"]
USER_MISTAKE = {2}  # bad input or usage
#: commands that hold a result before they end (a schedule, a bound), so Ctrl-C must print it
BEST_SO_FAR = {"solve", "improve", "bounds", "sandwich"}


# --------------------------------------------------------------------------- an independent brute force


def independent_optimum(G: nx.DiGraph, M: int, variant: str) -> int | None:
    """The minimum I/O by a 0-1 BFS over (red, blue[, computed]) bitmasks; None if no pebbling exists.

    Written from the rules of docs/definitions.md section 2 alone: load (blue, not red, cost 1),
    store (red, not blue, cost 1), compute (a non-input, not red, all predecessors red, cost 0;
    oneshot: never twice), delete (cost 0); at most M red; done when every output is blue.
    """
    nodes = list(G)
    bit = {v: 1 << i for i, v in enumerate(nodes)}
    preds = [sum(bit[u] for u in G.pred[v]) for v in nodes]
    is_input = [not G.pred[v] for v in nodes]
    goal = sum(bit[v] for v in outputs(G) if G.pred[v])
    blue0 = sum(bit[v] for v, i in zip(nodes, is_input) if i)
    n = len(nodes)
    start = (0, blue0, 0)
    dist = {start: 0}
    queue = collections.deque([start])
    while queue:
        state = queue.popleft()
        R, B, C = state
        d = dist[state]
        if B & goal == goal:
            return d
        count = bin(R).count("1")
        for i in range(n):
            b = 1 << i
            steps = []
            if R & b:
                steps.append(((R & ~b, B, C), 0))
                if not B & b:
                    steps.append(((R, B | b, C), 1))
            else:
                if B & b and count < M:
                    steps.append(((R | b, B, C), 1))
                if not is_input[i] and count < M and R & preds[i] == preds[i]:
                    if variant == "recompute" or not C & b:
                        steps.append(((R | b, B, C | b if variant == "oneshot" else 0), 0))
            for nxt, cost in steps:
                nd = d + cost
                if nd < dist.get(nxt, 1 << 30):
                    dist[nxt] = nd
                    (queue.appendleft if cost == 0 else queue.append)(nxt)
    return None


# --------------------------------------------------------------------------- the user's DAGs


def mlp() -> nx.DiGraph:
    """A 3-2 layer: h = W x, y = act(h) (marked outputs), e = y - t, dh = e act'(h), dW = dh x^T: 33 nodes."""
    G = nx.DiGraph()
    xs, ts = [f"x{j}" for j in range(3)], [f"t{i}" for i in range(2)]
    for v in xs + ts + [f"w{i}{j}" for i in range(2) for j in range(3)]:
        G.add_node(v, op="input")
    for i in range(2):
        for j in range(3):
            G.add_edge(f"w{i}{j}", f"p{i}{j}")
            G.add_edge(xs[j], f"p{i}{j}")
            G.nodes[f"p{i}{j}"]["op"] = "mul"
        G.add_edges_from([(f"p{i}0", f"s{i}"), (f"p{i}1", f"s{i}"), (f"s{i}", f"h{i}"), (f"p{i}2", f"h{i}")])
        G.add_edges_from([(f"h{i}", f"y{i}"), (f"y{i}", f"e{i}"), (ts[i], f"e{i}"), (f"e{i}", f"dh{i}"),
                          (f"h{i}", f"dh{i}")])
        G.nodes[f"y{i}"].update(op="act", output=True)  # read by e: an output beyond the sinks
        for j in range(3):
            G.add_edges_from([(f"dh{i}", f"dw{i}{j}"), (xs[j], f"dw{i}{j}")])
    return G


def stencil(width: int = 3, steps: int = 2) -> nx.DiGraph:
    """A 3-point 1-D stencil written by hand with networkx."""
    G = nx.DiGraph()
    for i in range(width):
        G.add_node(f"u_0_{i}", op="input")
    for t in range(1, steps + 1):
        for i in range(width):
            for k in (i - 1, i, i + 1):
                if 0 <= k < width:
                    G.add_edge(f"u_{t - 1}_{k}", f"u_{t}_{i}")
    return G


def random_dag(n: int, seed: int, mark: bool) -> nx.DiGraph:
    """A seeded random DAG on n nodes, in-degree at most 2; with ``mark``, one inner node marked an output."""
    rng = random.Random(seed)
    G = nx.DiGraph()
    G.add_nodes_from(f"v{i}" for i in range(n))
    for j in range(1, n):
        for i in rng.sample(range(j), min(j, rng.choice((1, 2)))):
            if rng.random() < 0.7:
                G.add_edge(f"v{i}", f"v{j}")
    if mark:
        inner = [v for v in G if G.pred[v] and G.succ[v]]
        if inner:
            G.nodes[rng.choice(inner)]["output"] = True
    return G


# --------------------------------------------------------------------------- running and checking


@dataclass
class Case:
    name: str
    argv: list
    expect: set
    inputs: list = field(default_factory=list)
    time_limit: float | None = None
    check: object = None  # check(json or None, stdout) -> error string or None
    sigint_after: float | None = None
    then: object = None  # follow-up cases built once this one ran: then(case) -> list of Case


@dataclass
class Outcome:
    case: Case
    rc: int
    wall: float
    problems: list


def sha(path: Path) -> str | None:
    if not path.exists():
        return None
    if path.is_dir():
        return "dir"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_case(case: Case, store: Path, env: dict, cwd: Path) -> Outcome:
    watched = [store, *map(Path, case.inputs)]
    before = {p: sha(p) for p in watched}
    t0 = time.perf_counter()
    # as a terminal runs it: Ctrl-C at its default even when this script runs as a background job
    # (whose children inherit an ignored SIGINT), in a process group of its own to signal as a whole
    proc = subprocess.Popen(CLI + case.argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    signalled = None
    try:
        if case.sigint_after is not None:
            try:
                out, err = proc.communicate(timeout=case.sigint_after)
            except subprocess.TimeoutExpired:
                signalled = time.perf_counter()
                os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C: the whole process group
                out, err = proc.communicate(timeout=60)
        else:
            out, err = proc.communicate(timeout=(case.time_limit or 120) + 60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    wall = time.perf_counter() - t0
    rc = proc.returncode
    problems = []
    if rc == 3:
        problems.append("exit-3: " + err.strip().splitlines()[-1][:160] if err.strip() else "exit-3")
    elif rc not in case.expect:
        problems.append(f"exit {rc}, expected {sorted(case.expect)}: {err.strip()[:160]}")
    for p, h in before.items():
        if sha(p) != h:
            problems.append(f"write-over: {p.name} changed")
    if signalled is not None and time.perf_counter() - signalled > 5:
        problems.append(f"over-time: {wall:.1f}s, more than 5 s after SIGINT")
    elif case.time_limit is not None and signalled is None and wall > case.time_limit + 5:
        problems.append(f"over-time: {wall:.1f}s > {case.time_limit} + 5 s")
    if signalled is not None and rc == 130 and case.argv[0] in BEST_SO_FAR and not out.strip():
        problems.append(f"no-best: {case.argv[0]} interrupted printed no result so far")
    if case.check is not None and rc == 0:
        try:
            data = json.loads(out) if "--json" in case.argv else None
        except ValueError:
            data = None
            problems.append("wrong: --json printed no JSON object")
        error = case.check(data, out)
        if error:
            problems.append("wrong: " + error)
    return Outcome(case, rc, wall, problems)


def _le(a, b, what):
    return None if a is None or b is None or a <= b else f"{what}: {a} > {b}"


def dag_cases(path: Path, G: nx.DiGraph, Ms, tl: float, out: Path, opt: dict) -> list:
    """The commands a user runs on one DAG file, with their checks against the optimum ``opt[(M, variant)]``."""
    p, cases = str(path), []
    tag = path.name
    cases.append(Case(f"info {tag}", ["info", p, "--json"], {0}, [p], None,
                      lambda d, o: _le(d["trivial_lower_bound"], min((v for v in opt.values() if v is not None),
                                                                     default=None), "trivial bound above optimum")))
    for M in Ms:
        for variant in ("oneshot", "recompute"):
            best = opt.get((M, variant))
            sched = out / f"{tag}.M{M}.{variant}.greedy.json"

            def replay_cases(case, sched=sched, best=best, M=M, variant=variant):
                if not sched.exists():
                    return []
                imp = out / f"{sched.name}.improved.json"
                return [Case(f"replay {tag} M={M} {variant}", ["replay", p, str(sched), "--json"], {0}, [p, sched],
                             None, lambda d, o: _le(best, d["io"], "greedy schedule below the optimum")),
                        Case(f"improve {tag} M={M} {variant}",
                             ["improve", p, str(sched), "--time-limit", str(tl), "-o", str(imp), "--json"], {0},
                             [p, sched], tl,
                             lambda d, o: _le(best, d.get("after", d.get("io")), "improved schedule below the optimum"))]

            cases.append(Case(f"greedy {tag} M={M} {variant}",
                              ["greedy", p, "--M", str(M), "--variant", variant, "-o", str(sched), "--json"], {0}, [p],
                              None, lambda d, o, best=best: _le(best, d["io"], "greedy below the optimum"),
                              then=replay_cases))
            cases.append(Case(f"solve {tag} M={M} {variant}",
                              ["solve", p, "--M", str(M), "--variant", variant, "--time-limit", str(tl),
                               "--workers", "1", "--json"], {0}, [p], tl,
                              lambda d, o, best=best: _solve_check(d, best)))
            cases.append(Case(f"sandwich {tag} M={M} {variant}",
                              ["sandwich", p, "--M", str(M), "--variant", variant, "--time-limit", str(tl), "--json"],
                              {0}, [p], tl, lambda d, o, best=best: _sandwich_check(d, best)))
            if best is not None:
                cases.append(Case(f"brute {tag} M={M} {variant}",
                                  ["brute", p, "--M", str(M), "--variant", variant, "--time-limit", str(tl), "--json"],
                                  {0}, [p], tl,
                                  lambda d, o, best=best: None if d["io"] == best else
                                  f"brute {d['io']} != independent {best}"))
        cases.append(Case(f"bounds {tag} M={M}", ["bounds", p, "--M", str(M), "--time-limit", str(tl), "--json"],
                          {0}, [p], tl, lambda d, o, M=M: _bounds_check(d, opt.get((M, "recompute")))))
    return cases


def _solve_check(d, best):
    if best is None:
        return _le(d["lower_bound"], d["io"], "solve's lower bound above its schedule")
    if d["status"] == "OPTIMAL" and d["io"] != best:
        return f"solve OPTIMAL {d['io']} != independent optimum {best}"
    return _le(d["lower_bound"], best, "solve's lower bound above the optimum") or \
        _le(best, d["io"], "solve's schedule below the optimum")


def _sandwich_check(d, best):
    row = d["rows"][0]
    low, up = (row.get("lower") or {}).get("value"), (row.get("upper") or {}).get("value")
    return _le(low, up, "sandwich lower above upper") or _le(low, best, "sandwich lower above the optimum") or \
        _le(best, up, "sandwich upper below the optimum")


def _bounds_check(d, best):
    # a recompute optimum is at most the oneshot one: every lower bound must stay below it
    for b in d["bounds"]:
        if b.get("proven") and best is not None and b["value"] > best:
            return f"bound {b['method']} = {b['value']} > optimum {best}"
    return None


def mistake_cases(tmp: Path, store: Path, good: Path, big: Path, tl: float) -> list:
    """What users get wrong: each an exit 2 (or 1 for an invalid schedule), nothing written."""
    g = str(good)
    cyc = tmp / "cyclic.json"
    cyc.write_text(json.dumps({"directed": True, "multigraph": False, "graph": {}, "nodes": [{"id": "a"}, {"id": "b"}],
                               "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "a"}]}))
    bad = tmp / "malformed.json"
    bad.write_text('{"directed": true, "nodes": [{"id": "a"}, ')
    badmark = tmp / "badmark.json"
    badmark.write_text(json.dumps({"directed": True, "multigraph": False, "graph": {},
                                   "nodes": [{"id": "a"}, {"id": "b", "output": "yes"}, {"id": "c"}],
                                   "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}]}))
    cycdot = tmp / "cyclic.dot"
    cycdot.write_text("digraph { a -> b; b -> c; c -> a; }\n")
    badhdag = tmp / "bad.hdag"
    badhdag.write_text("3 4 nonsense\n")
    unknown = tmp / "unknown.json"
    unknown.write_text(json.dumps({"M": 4, "variant": "oneshot", "moves": [["load", "nosuchnode"]]}))
    illegal = tmp / "illegal.json"
    illegal.write_text(json.dumps({"M": 4, "variant": "oneshot", "moves": [["compute", "dw00"]]}))
    notsched = tmp / "notsched.json"
    notsched.write_text("[1, 2, 3]")
    cases = []
    for f in (cyc, bad, badmark, cycdot, badhdag):
        for cmd in (["info", str(f)], ["greedy", str(f), "--M", "4"], ["solve", str(f), "--M", "4", "--time-limit", str(tl)],
                    ["sandwich", str(f), "--M", "4", "--time-limit", str(tl)], ["convert", str(f), str(tmp / "x.json")],
                    ["bounds", str(f), "--M", "4", "--time-limit", str(tl)]):
            cases.append(Case(f"{cmd[0]} {f.name}", cmd + ["--json"], USER_MISTAKE, [f], tl if "--time-limit" in cmd else None))
    for s, codes in ((unknown, {1, 2}), (illegal, {1}), (notsched, {2})):
        for cmd in (["replay", g, str(s)], ["improve", g, str(s), "--time-limit", str(tl)],
                    ["draw", g, str(s), "-o", str(tmp / "d.dot")]):
            cases.append(Case(f"{cmd[0]} {s.name}", cmd, codes, [good, s], tl if "--time-limit" in cmd else None))
    # M below the smallest feasible M (3 on the MLP), and flags out of range
    for cmd in (["solve", g, "--M", "2"], ["greedy", g, "--M", "2"], ["sandwich", g, "--M", "2"],
                ["brute", g, "--M", "2"], ["bounds", g, "--M", "2"], ["certify", g, "--M", "2", "-o", str(tmp / "c")],
                ["solve", g, "--M", "0"], ["solve", g, "--M", "3", "--time-limit", "-1"],
                ["solve", g, "--M", "3", "--time-limit", "nan"], ["greedy", g, "--M", "x"],
                ["solve", g, "--M", "3", "--engine", "cubes", "--variant", "recompute"],
                ["solve", g, "--M", "3", "--cube-depth", "2", "--engine", "cp-sat"],
                ["improve", g, g], ["build", "nosuchfamily", "n=2"], ["build", "approx-attention", "r=1"],
                ["build", "fft", "k=abc"], ["greedy", "fft:k=2,k=3", "--M", "3"], ["info", str(tmp / "missing.json")],
                ["info", "/dev/zero"], ["nosuchcommand"], ["solve"]):
        cases.append(Case(" ".join(cmd[:2]) + " (mistake)", cmd, USER_MISTAKE, [good]))
    # outputs over the store or an input
    for cmd in (["convert", g, str(store)], ["convert", g, g], ["build", "fft", "k=2", "-o", str(store)],
                ["greedy", g, "--M", "4", "-o", str(store)], ["greedy", g, "--M", "4", "-o", g],
                ["solve", g, "--M", "4", "--time-limit", str(tl), "--schedule-out", str(store)],
                ["solve", g, "--M", "4", "--time-limit", str(tl), "--schedule-out", g],
                ["brute", str(tmp / "r0.json"), "--M", "3", "--schedule-out", str(store)],
                ["sandwich", g, "--M", "4", "--time-limit", str(tl), "--schedule-out", str(store)],
                ["partition", g, "--S", "6", "--time-limit", str(tl), "-o", str(store)],
                ["schedule", "flash-forward", "attention-forward:n=2,d=1", "--M", "8", "-o", str(store)],
                ["certify", g, "--M", "4", "-o", str(store.parent)],
                ["report", "--html", str(store)]):
        cases.append(Case(" ".join(cmd[:2]) + " -> store/input", cmd + ["--json"], USER_MISTAKE, [good, tmp / "r0.json"],
                          tl if "--time-limit" in cmd else None))
    # Ctrl-C to the process group: exit 130 (or 0 when the command had finished), within 5 s
    for cmd, after in ((["solve", g, "--M", "3", "--variant", "recompute", "--time-limit", "60"], 3),
                       (["solve", g, "--M", "3", "--time-limit", "60"], 3),
                       (["sandwich", "attention-forward:n=16,d=4", "--M", "16", "--time-limit", "60"], 3),
                       # at several moments: the eviction passes, the windows' set-up, a window's model
                       *((["improve", str(big), str(tmp / "big.greedy.json"), "--time-limit", "60"], t)
                         for t in (2, 3, 4, 5)),
                       # a user's own DAG: Ctrl-C in the exact solver, which answers its row
                       (["sandwich", g, "--M", "3", "--variant", "recompute", "--time-limit", "60"], 4),
                       (["bounds", "fft:k=5", "--M", "4", "--time-limit", "60"], 3),
                       (["brute", g, "--M", "3"], 3),
                       # in the SAT search, after the witness's half of the limit and the CNF's build
                       (["certify", "fft:k=4", "--M", "4", "--time-limit", "20", "-o", str(tmp / "cert-sigint")], 16)):
        cases.append(Case(f"SIGINT {cmd[0]} {Path(cmd[1]).name}", cmd, {130, 0}, [good], None, sigint_after=after))
    # certify within its limit (exit 2 when it ran out, nothing written): CaDiCaL's calls cannot be stopped from
    # Python, and an order CNF of 21 million clauses took 134 s to build
    for cmd in (["certify", "fft:k=4", "--M", "4"], ["certify", "fft:k=6", "--M", "8", "--encoding", "order"],
                ["certify", g, "--M", "4"]):
        cases.append(Case(" ".join(cmd[:2]) + " (time limit)", cmd + ["--time-limit", "10", "-o",
                          str(tmp / f"cert-{len(cases)}"), "--json"], {0, 2}, [good], 10.0))
    return cases


def self_test() -> None:
    """The independent brute force on the facts docs/definitions.md states: a chain costs 2,
    the 2-point butterfly 4 at M = 3, and a marked inner node of a chain one store more."""
    chain = nx.DiGraph([("a", "b"), ("b", "c")])
    butterfly = nx.DiGraph([("x0", "y0"), ("x1", "y0"), ("x0", "y1"), ("x1", "y1")])
    assert independent_optimum(chain, 2, "oneshot") == 2 and independent_optimum(butterfly, 3, "recompute") == 4
    assert independent_optimum(butterfly, 2, "oneshot") is None
    chain.nodes["b"]["output"] = True
    assert independent_optimum(chain, 2, "recompute") == 3


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=5.0, help="the --time-limit of every timed command")
    ap.add_argument("--out", type=Path, default=None, help="work folder (default: a temporary one, removed)")
    ap.add_argument("--quick", action="store_true", help="one M per DAG and JSON files only")
    ap.add_argument("--only", default=None, help="run only the invocations whose name holds this text")
    args = ap.parse_args(argv)
    self_test()
    tmp = args.out or Path(tempfile.mkdtemp(prefix="spartition-campaign-"))
    tmp.mkdir(parents=True, exist_ok=True)
    store = tmp / "store.sqlite"
    env = {**os.environ, "SPARTITION_STORE": str(store)}
    tl = args.time_limit
    # a store with rows in it, as a user has after a first compare
    subprocess.run(CLI + ["compare", "chain", "n=3", "--M", "2", "--exact", "brute", "--no-bounds"], env=env,
                   cwd=tmp, capture_output=True, check=True)
    dags = {"mlp": mlp(), "stencil": stencil()}
    for k in range(4):
        dags[f"r{k}"] = random_dag(6 + k % 3, seed=k, mark=k % 2 == 1)
    formats = ("json",) if args.quick else ("json", "dot", "hdag")
    cases = []
    for name, G in dags.items():
        tiny = len(G) <= 9
        m0 = 1 + max(len(G.pred[v]) for v in G if G.pred[v])
        Ms = [m0] if args.quick else [m0, m0 + 1]
        opt = {}
        if tiny:
            for M in Ms:
                for variant in ("oneshot", "recompute"):
                    opt[(M, variant)] = independent_optimum(G, M, variant)
        for ext in formats:
            path = tmp / f"{name}.{ext}"
            save_dag(G, path)
            cases += dag_cases(path, G, Ms if ext == "json" else Ms[:1], tl, tmp, opt)  # the format is read once
            other = {"json": "dot", "dot": "hdag", "hdag": "json"}[ext]
            cases.append(Case(f"convert {path.name}", ["convert", str(path), str(tmp / f"{name}.conv.{other}"), "--json"],
                              {0}, [path], None))
    good = tmp / "mlp.json"
    big = tmp / "fft10.json"
    subprocess.run(CLI + ["build", "fft", "k=10", "-o", str(big)], env=env, cwd=tmp, capture_output=True, check=True)
    subprocess.run(CLI + ["greedy", str(big), "--M", "8", "-o", str(tmp / "big.greedy.json")], env=env, cwd=tmp,
                   capture_output=True, check=True)
    cases += mistake_cases(tmp, store, good, big, tl)
    # the limits at 10^5 nodes: the 114,688-node FFT, each command with a 10 s limit
    huge, big_tl = "fft:k=13", max(tl, 10.0)
    for cmd in (["solve", huge, "--M", "8"], ["bounds", huge, "--M", "8"], ["sandwich", huge, "--M", "8"],
                ["partition", huge, "--S", "16"], ["improve", str(big), str(tmp / "big.greedy.json")]):
        cases.append(Case(f"{cmd[0]} {Path(cmd[1]).name} (10^5 nodes)" if cmd[0] != "improve" else "improve fft10.json",
                          cmd + ["--time-limit", f"{big_tl:g}", "--json"], {0}, [big], big_tl))
    if args.only:
        cases = [c for c in cases if args.only in c.name]
    outcomes = []
    queue = collections.deque(cases)
    print(f"{'#':>4} {'invocation':<48} {'exit':>4} {'wall s':>7}  result")
    while queue:
        case = queue.popleft()
        o = run_case(case, store, env, tmp)
        outcomes.append(o)
        print(f"{len(outcomes):>4} {case.name[:48]:<48} {o.rc:>4} {o.wall:>7.1f}  "
              f"{'ok' if not o.problems else '; '.join(o.problems)}", flush=True)
        if case.then is not None:
            queue.extendleft(reversed(case.then(case)))
    count = collections.Counter(p.split(":")[0] for o in outcomes for p in o.problems)
    unexpected = sum(1 for o in outcomes if any(p.startswith("exit ") for p in o.problems))
    print(f"campaign: {len(outcomes)} invocations, {count['wrong']} wrong answers, {count['write-over']} writes over "
          f"the store or an input, {count['over-time']} over time, {count['exit-3']} exit 3, "
          f"{count['no-best']} Ctrl-C without the result so far, "
          f"{unexpected} other unexpected exits; time limit {tl:g} s")
    if args.out is None:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if any(o.problems for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
