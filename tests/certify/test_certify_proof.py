"""The LRAT checker on valid proofs and on corrupted CNFs and proofs; bundles end to end; the CLI."""

import json
import shutil

import pytest

# from the test extra ('pip install -e .[test]'): missing, these tests fail instead of skipping
import pysat  # noqa: F401, E402

from spartition.certify.bundle import BundleError, check_bundle
from spartition.certify.certify import certify_capacity, certify_optimum, certify_partition
from spartition.certify.cnf import CNF
from spartition.certify.encoding import pebbling_cnf
from spartition.certify.partition_encoding import partition_cnf, set_cnf
from spartition.certify.proof import ProofError, check_lrat, check_lrat_text
from spartition.certify.sat import solve_cnf
from spartition.cli.main import main
from spartition.errors import IllegalMove
from spartition.exact.brute import brute_force
from spartition.families.classic.dag import fft, matmul, random_dag
from spartition.partition.brute import brute_class_capacity, brute_min_partition

XOR = CNF(num_vars=2, clauses=[(1, 2), (-1, 2), (1, -2), (-1, -2)])


def test_hand_written_proofs():
    assert check_lrat_text(XOR, "5 2 0 1 2 0\n5 d 1 2 0\n6 0 5 3 4 0\n").deletions == 1
    cases = {
        "5 2 0 1 0\n": "proof line 1, clause 5: the hints end without a conflict",
        "5 2 0 1 9 0\n": "proof line 1, clause 5: hint 9 is not a present clause",
        "5 2 0 1 -2 0\n": "clause 5: hint -2 is a RAT hint",
        "4 2 0 1 2 0\n": "clause 4: ids must increase",
        "5 2 0 1 2 0\n6 d 1 0\n7 0 5 3 1 0\n": "proof line 3, clause 7: hint 1 is not a present clause",
        "5 2 0 1 2 0\n": "the proof ends without deriving the empty clause",
        "5 3 0 1 2 0\n": "beyond the 2 variables",
        "5 2 0 1 2\n": "an addition is 'id literals 0 hints 0'",
        "5 x 0 1 2 0\n": "proof line 1: not an LRAT line",
    }
    for proof, message in cases.items():
        with pytest.raises(ProofError, match=message):
            check_lrat_text(XOR, proof)


def _proof(tmp_path, f):
    path = tmp_path / "p.lrat"
    assert not solve_cnf(f, path).satisfiable
    return path


def test_solver_proofs_check_and_corruptions_name_the_first_failing_step(tmp_path):
    f = pebbling_cnf(fft(2), 3, "oneshot", 13).cnf
    path = _proof(tmp_path, f)
    rep = check_lrat(f, path)
    assert rep.additions > 100
    lines = path.read_text().splitlines()
    adds = [i for i, l in enumerate(lines) if l.split()[1] != "d"]
    # Drop one hint of an addition with several: RUP fails at exactly that line.
    k = next(i for i in adds[len(adds) // 2:] if lines[i].split().count("0") == 2 and len(lines[i].split()) > 6)
    toks = lines[k].split()
    cut = toks.index("0")
    bad = lines[:k] + [" ".join(toks[: cut + 1] + toks[cut + 2:])] + lines[k + 1:]
    with pytest.raises(ProofError, match=f"proof line {k + 1}, clause {toks[0]}:"):
        check_lrat_text(f, "\n".join(bad) + "\n")
    # A truncated proof never reaches the empty clause.
    with pytest.raises(ProofError, match="ends without deriving the empty clause"):
        check_lrat_text(f, "\n".join(lines[:-1]) + "\n")
    # A corrupted CNF: weaken a clause the proof uses first; the step that leans on it fails.
    first_hints = [int(t) for t in lines[0].split()[lines[0].split().index("0") + 1 : -1]]
    g = CNF(num_vars=f.num_vars, clauses=list(f.clauses))
    c = first_hints[-1]
    g.clauses[c - 1] = g.clauses[c - 1] + (g.num_vars,) if -g.num_vars not in g.clauses[c - 1] else g.clauses[c - 1][:-1]
    with pytest.raises(ProofError, match="proof line 1,"):
        check_lrat(g, path)


def test_partition_and_set_cnfs_match_brute_force():
    for seed in range(12):
        G = random_dag(4 + seed % 4, 0.45, 2, seed=seed)
        for S in (1, 2, 3):
            P = brute_min_partition(G, S).P
            if P == 0:
                continue
            assert solve_cnf(partition_cnf(G, S, P).cnf).satisfiable, (seed, S)
            assert not solve_cnf(partition_cnf(G, S, P - 1).cnf).satisfiable, (seed, S)
            for convex in (False, True):
                w = {v: 1 for v in G}
                U = brute_class_capacity(G, S, convex=convex)
                assert solve_cnf(set_cnf(G, S, w, U, convex).cnf).satisfiable, (seed, S, convex)
                assert not solve_cnf(set_cnf(G, S, w, U + 1, convex).cnf).satisfiable, (seed, S, convex)


def test_bundle_round_trip_and_tampering(tmp_path):
    G = matmul(1, 2, 2)
    out = tmp_path / "b"
    r = certify_optimum(G, 3, "oneshot", out)
    rep = check_bundle(out)
    q = brute_force(G, 3, "oneshot").io
    assert rep.status == "OPTIMAL" and rep.details["claim"]["io"] == r["io"] == q
    # A claim of a better optimum: the schedule no longer replays to it.
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    doc = json.loads((bad / "certificate.json").read_text())
    doc["io"] = q - 1
    (bad / "certificate.json").write_text(json.dumps(doc))
    with pytest.raises(BundleError, match=f"replays with I/O {q}, the claim says {q - 1}"):
        check_bundle(bad)
    # A CNF edited consistently with its digest is still caught by re-derivation.
    shutil.rmtree(bad)
    shutil.copytree(out, bad)
    lines = (bad / "formula.cnf").read_text().splitlines()
    i = next(k for k, l in enumerate(lines) if l.startswith("p cnf")) + 3
    lines[i] = " ".join(lines[i].split()[1:])
    (bad / "formula.cnf").write_text("\n".join(lines) + "\n")
    import hashlib

    doc = json.loads((bad / "certificate.json").read_text())
    doc["sha256"]["cnf"] = hashlib.sha256((bad / "formula.cnf").read_bytes()).hexdigest()
    (bad / "certificate.json").write_text(json.dumps(doc))
    with pytest.raises(BundleError, match="clause 3 is"):
        check_bundle(bad)
    # A schedule edited (digest updated) fails the replay at its step.
    shutil.rmtree(bad)
    shutil.copytree(out, bad)
    s = json.loads((bad / "witness.json").read_text())
    s["moves"] = s["moves"][1:]
    (bad / "witness.json").write_text(json.dumps(s))
    doc = json.loads((bad / "certificate.json").read_text())
    doc["sha256"]["witness"] = hashlib.sha256((bad / "witness.json").read_bytes()).hexdigest()
    (bad / "certificate.json").write_text(json.dumps(doc))
    # (the first move loaded A_0_0, which the first product needs)
    with pytest.raises(IllegalMove, match="step 1: compute 'P_0_0_0': predecessor 'A_0_0' is not in fast memory"):
        check_bundle(bad)


def test_partition_capacity_and_recompute_bundles(tmp_path):
    G = fft(2)
    r = certify_partition(G, 2, tmp_path / "p.tar.gz")
    assert r["classes"] == brute_min_partition(G, 2).P
    assert check_bundle(tmp_path / "p.tar.gz").statement.startswith(f"P(2) = {r['classes']} for fft k=2 (sha256 ")
    r = certify_capacity(G, 3, convex=True, out=tmp_path / "u")
    assert r["capacity"] == brute_class_capacity(G, 3, convex=True)
    assert check_bundle(tmp_path / "u").status == "OPTIMAL"
    # the proven horizon Q + sum pi = 3 + 2 is below the 6 moves any schedule needs (which only makes the
    # refutation easier): a proven horizon is not refused for it
    r = certify_optimum(fft(1), 3, "recompute", tmp_path / "r")
    assert (check_bundle(tmp_path / "r").status, r["io"], r["horizon"], r["horizon_proven"]) == ("OPTIMAL", 4, 5, True)


def test_cli_certify_check_certificate_and_check_proof(tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["certify", "fft:k=1", "--M", "3", "--out", str(out)]) == 0
    assert "OPTIMAL: io = 4" in capsys.readouterr().out
    assert main(["check-certificate", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "OPTIMAL"
    assert main(["check-proof", str(out / "formula.cnf"), str(out / "proof.lrat")]) == 0
    assert "VALID" in capsys.readouterr().out
    proof = out / "proof.lrat"
    lines = proof.read_text().splitlines()
    proof.write_text("\n".join(lines[:-1]) + "\n")
    assert main(["check-proof", str(out / "formula.cnf"), str(proof)]) == 1
    assert "without deriving the empty clause" in capsys.readouterr().err
    assert main(["check-certificate", str(out)]) == 1
    assert "does not match its recorded sha256" in capsys.readouterr().err


def test_ctrl_c_stops_a_solve_without_a_deadline_between_two_slices():
    # Python sees Ctrl-C only between two calls into CaDiCaL: one unlimited solve of the pigeonhole CNF PHP(10)
    # held it for 53 s. PHP(11) runs for minutes; in slices the signal, sent after 0.5 s, stops it at once
    import subprocess
    import sys

    script = (
        "import os, signal, threading\n"
        "from pysat.examples.genhard import PHP\n"
        "from spartition.certify.cnf import CNF\n"
        "from spartition.certify.sat import solve_cnf\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)  # even where the suite runs with it ignored\n"
        "php = PHP(11)\n"
        "f = CNF(num_vars=php.nv, clauses=[tuple(c) for c in php.clauses])\n"
        "threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "try:\n"
        "    print('finished', solve_cnf(f).satisfiable)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "interrupted", out.stderr
