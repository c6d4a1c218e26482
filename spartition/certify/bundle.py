"""Certificate bundles: one directory (or ``.tar.gz`` of it) that a reader checks end to end.

Layout::

    certificate.json   what is claimed, the parameters, file digests, tool versions
    dag.json           the DAG (node-link JSON)
    witness.json       the upper bound: a schedule, a partition, or a node set
    formula.cnf        "something better than the witness exists" (DIMACS), absent if trivial
    proof.lrat         the LRAT refutation of formula.cnf

:func:`check_bundle` trusts none of it: it replays the schedule with
:func:`spartition.core.game.replay` (or re-verifies the partition with
:func:`spartition.partition.certificate.check_partition`, the set by
max-flow), re-derives the CNF from the DAG with the encoders of this package
and compares it clause by clause, and checks the proof with
:func:`spartition.certify.proof.check_lrat`. No SAT solver is involved.

Kinds and claims
----------------
``pebbling``
    ``io`` is the minimum I/O of the variant at M: the witness schedule costs
    ``io`` and the CNF for budget ``io - 1`` is refuted. Oneshot: status
    ``OPTIMAL`` (the horizon is proven sufficient, see
    :mod:`spartition.certify.encoding`). Recompute: ``OPTIMAL_WITHIN_HORIZON``:
    no schedule of at most ``horizon`` loads, stores and computes does better.
``pebbling-order``
    ``io`` is the minimum oneshot I/O at M: the witness schedule costs
    ``io`` and the order CNF of :mod:`spartition.certify.order_encoding` for
    budget ``io - 1`` is refuted. Status ``OPTIMAL``, resting on the
    reductions the claim lists (``reductions``: normal form and chain
    dominance, each argued in :mod:`spartition.exact.formulations.order`);
    the statement names them.
``partition``
    P(S) = ``classes``: the witness is an S-partition with that many classes
    and the CNF "at most classes - 1 classes" is refuted.
``capacity``
    U(X) = ``capacity``: the witness set weighs that much and the CNF "a set
    of weight capacity + 1" is refuted.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from spartition.certify.cnf import CNF, read_dimacs
from spartition.certify.encoding import ENCODER_VERSION, default_horizon, pebbling_cnf
from spartition.certify.order_encoding import ORDER_ENCODER_VERSION, ORDER_REDUCTIONS, order_budget_cnf
from spartition.certify.partition_encoding import PARTITION_ENCODER_VERSION, partition_cnf, set_cnf
from spartition.certify.proof import check_lrat
from spartition.core.dag import compact, load_dag, save_dag, strip_isolated
from spartition.core.game import Schedule, replay
from spartition.errors import SpartitionError

__all__ = ["BUNDLE_FORMAT", "BundleError", "BundleReport", "check_bundle", "expected_cnf", "write_bundle"]

BUNDLE_FORMAT = "spartition-certificate-1"
FILES = {"dag": "dag.json", "witness": "witness.json", "cnf": "formula.cnf", "proof": "proof.lrat"}


class BundleError(SpartitionError):
    """A bundle that does not certify its claim; the message says which check failed."""


@dataclass(frozen=True)
class BundleReport:
    """A verified claim: ``kind``, ``status``, the ``statement`` in words, and the checks' numbers."""

    kind: str
    status: str
    statement: str
    details: dict

    def to_dict(self) -> dict:
        return {"valid": True, "kind": self.kind, "status": self.status,
                "statement": self.statement, **self.details}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def expected_cnf(G, claim: dict) -> CNF | None:
    """The CNF the encoders write for ``claim`` (None when the claim needs no refutation)."""
    kind = claim["kind"]
    if kind == "pebbling":
        if claim["io"] == 0:
            return None
        return pebbling_cnf(G, claim["M"], claim["variant"], claim["io"] - 1, horizon=claim["horizon"],
                            count_levels=claim["count_levels"]).cnf
    if kind == "pebbling-order":
        if claim["io"] == 0:
            return None
        return order_budget_cnf(G, claim["M"], claim["io"] - 1)[0]
    if kind == "partition":
        if claim["classes"] <= 1:
            return None
        return partition_cnf(G, claim["S"], claim["classes"] - 1).cnf
    if kind == "capacity":
        return set_cnf(G, claim["X"], claim["weights"], claim["capacity"] + 1, convex=claim["convex"]).cnf
    raise BundleError(f"unknown certificate kind {kind!r}")


def write_bundle(path, G, claim: dict, witness: dict, cnf: CNF | None, proof_file, tools: dict,
                 stats: dict) -> Path:
    """Write a bundle directory at ``path`` (a ``.tar.gz`` path packs it into an archive)."""
    path = Path(path)
    archive = path.name.endswith(".tar.gz")
    out = Path(tempfile.mkdtemp()) / path.name[: -len(".tar.gz")] if archive else path
    out.mkdir(parents=True, exist_ok=True)
    save_dag(G, out / FILES["dag"])
    (out / FILES["witness"]).write_text(json.dumps(witness) + "\n")
    files = {"dag": FILES["dag"], "witness": FILES["witness"]}
    if cnf is not None:
        cnf.write(out / FILES["cnf"])
        Path(proof_file).replace(out / FILES["proof"])
        (out / FILES["proof"]).chmod(0o644)
        files.update(cnf=FILES["cnf"], proof=FILES["proof"])
    doc = {"format": BUNDLE_FORMAT, **claim, "files": files,
           "sha256": {k: _sha256(out / v) for k, v in files.items()}, "tools": tools, "stats": stats}
    (out / "certificate.json").write_text(json.dumps(doc, indent=2) + "\n")
    if archive:
        with tarfile.open(path, "w:gz") as tar:
            tar.add(out, arcname=out.name)
        return path
    return out


def _open(path: Path) -> Path:
    if path.is_dir():
        return path
    if not path.name.endswith(".tar.gz"):
        raise BundleError(f"{path}: a bundle is a directory or a .tar.gz archive")
    tmp = Path(tempfile.mkdtemp())
    with tarfile.open(path, "r:gz") as tar:
        for m in tar.getmembers():
            if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in Path(m.name).parts:
                raise BundleError(f"{path}: refusing archive member {m.name!r}")
        tar.extractall(tmp)
    found = [p.parent for p in tmp.rglob("certificate.json")]
    if len(found) != 1:
        raise BundleError(f"{path}: expected one certificate.json in the archive, found {len(found)}")
    return found[0]


def _first_difference(got: CNF, want: CNF) -> str | None:
    if got.num_vars != want.num_vars:
        return f"the CNF has {got.num_vars} variables, the encoder writes {want.num_vars}"
    for i, (a, b) in enumerate(zip(got.clauses, want.clauses), 1):
        if a != b:
            return f"clause {i} is {list(a)}, the encoder writes {list(b)}"
    if len(got.clauses) != len(want.clauses):
        return f"the CNF has {len(got.clauses)} clauses, the encoder writes {len(want.clauses)}"
    return None


def _check_witness(G, claim: dict, witness: dict) -> str:
    kind = claim["kind"]
    if kind == "pebbling":
        s = Schedule.from_dict(witness)
        if (s.M, s.variant) != (claim["M"], claim["variant"]):
            raise BundleError(f"the schedule is for M = {s.M}, {s.variant}; the claim for M = {claim['M']}, "
                              f"{claim['variant']}")
        r = replay(G, s)
        if r.io != claim["io"]:
            raise BundleError(f"the schedule replays with I/O {r.io}, the claim says {claim['io']}")
        # the oneshot proof covers every schedule only with a horizon of at least N + (io - 1) moves
        # (encoding.default_horizon); the horizon is read from the bundle, so it is checked here
        T = claim["horizon"]
        if claim["variant"] == "oneshot" and (T is None or T >= default_horizon(G, "oneshot", claim["io"] - 1)):
            return "OPTIMAL", f"the minimum oneshot I/O with M = {claim['M']} is {claim['io']}"
        return ("OPTIMAL_WITHIN_HORIZON",
                f"no {claim['variant']} schedule with M = {claim['M']} and at most {claim['horizon']} loads, stores "
                f"and computes has I/O below {claim['io']}; one with I/O {claim['io']} exists")
    if kind == "pebbling-order":
        s = Schedule.from_dict(witness)
        if (s.M, s.variant, claim["variant"]) != (claim["M"], "oneshot", "oneshot"):
            raise BundleError(f"the schedule is for M = {s.M}, {s.variant}; the claim for M = {claim['M']}, "
                              f"{claim['variant']} (the order encoding states oneshot only)")
        r = replay(G, s)
        if r.io != claim["io"]:
            raise BundleError(f"the schedule replays with I/O {r.io}, the claim says {claim['io']}")
        # the reductions are this checker's own, not the bundle's: the statement names them
        if list(claim.get("reductions", ())) != list(ORDER_REDUCTIONS):
            raise BundleError("the claim's reductions are not those of this checker's order encoding")
        return "OPTIMAL", (f"the minimum oneshot I/O with M = {claim['M']} is {claim['io']}, given the reductions "
                           f"of the order model: " + "; ".join(ORDER_REDUCTIONS))
    if kind == "partition":
        from spartition.partition.certificate import Partition, check_partition

        rep = check_partition(G, Partition.from_dict(witness), claim["S"])
        if not rep.valid:
            raise BundleError(f"the partition fails the check: {rep.problems[0].to_dict()}")
        if rep.num_classes != claim["classes"]:
            raise BundleError(f"the partition has {rep.num_classes} classes, the claim says {claim['classes']}")
        return "OPTIMAL", f"P({claim['S']}) = {claim['classes']}"
    if kind == "capacity":
        from spartition.partition.sets import verify_set

        H = strip_isolated(G)
        c = compact(H)
        members = [c.index[v] for v in witness["nodes"]]
        verify_set(c, members, claim["X"], claim["convex"])
        w = sum(int(claim["weights"].get(v, 0)) for v in witness["nodes"])
        if w != claim["capacity"]:
            raise BundleError(f"the witness set weighs {w}, the claim says {claim['capacity']}")
        # the weights come from the bundle itself: the statement says what they are
        weighted = sum(1 for x in claim["weights"].values() if int(x))
        total = sum(int(x) for x in claim["weights"].values())
        return "OPTIMAL", (f"U({claim['X']}) = {claim['capacity']}{' (convex sets)' if claim['convex'] else ''}, "
                           f"weights from the bundle: {weighted} weighted nodes, total weight {total}")
    raise BundleError(f"unknown certificate kind {kind!r}")


def check_bundle(path) -> BundleReport:
    """Verify a bundle end to end (module docstring).

    Raises
    ------
    BundleError, ProofError, IllegalMove, CNFError
        At the first check that fails, saying which.
    """
    root = _open(Path(path))
    try:
        doc = json.loads((root / "certificate.json").read_text())
    except (OSError, ValueError) as e:
        raise BundleError(f"{root}: unreadable certificate.json: {e}") from None
    if doc.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"unknown bundle format {doc.get('format')!r}")
    version = {"pebbling": ENCODER_VERSION, "pebbling-order": ORDER_ENCODER_VERSION}.get(doc["kind"],
                                                                                        PARTITION_ENCODER_VERSION)
    if doc.get("encoder") != version:
        raise BundleError(f"written by encoder {doc.get('encoder')!r}, this checker re-derives {version!r}")
    for key, name in doc["files"].items():
        if _sha256(root / name) != doc["sha256"][key]:
            raise BundleError(f"{name} does not match its recorded sha256")
    G = load_dag(root / doc["files"]["dag"])
    status, statement = _check_witness(G, doc, json.loads((root / doc["files"]["witness"]).read_text()))
    want = expected_cnf(G, doc)
    details = {"claim": {k: doc[k] for k in doc if k not in ("files", "sha256", "stats", "tools", "weights")}}
    if want is None:
        return BundleReport(doc["kind"], status, statement + " (nothing to refute)", details)
    if "cnf" not in doc["files"]:
        raise BundleError("the claim needs a refutation but the bundle has no formula.cnf")
    got = read_dimacs(root / doc["files"]["cnf"])
    diff = _first_difference(got, want)
    if diff:
        raise BundleError(f"formula.cnf is not the encoder's CNF for this claim: {diff}")
    rep = check_lrat(got, root / doc["files"]["proof"])
    details["proof"] = rep.to_dict()
    details["cnf"] = {"variables": got.num_vars, "clauses": len(got.clauses)}
    return BundleReport(doc["kind"], status, statement, details)
