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

A bundle holds its files: every entry of ``files`` is a plain file name in
the bundle (no directory, no ``..``, no absolute path, no link out of it, a
regular file). ``certificate.json`` is checked key by key (a missing key or a
value of the wrong type is named), and nothing it says that the checker did
not verify is echoed: the report's claim holds only checked fields. The
statement names the DAG by its sha256 (:func:`spartition.core.dag.dag_hash`)
and, when ``dag.json`` names a registered family, by the family and
parameters, after rebuilding that family and comparing hashes; a label that
does not build the same DAG is refused. A recompute claim whose horizon is
below the moves every schedule needs (its computes plus the trivial I/O
bound) says nothing and is refused, unless it is proven sufficient (below), and
a horizon whose CNF would exceed :data:`MAX_CNF_CELLS` is refused before the
CNF is built.

Kinds and claims
----------------
``pebbling``
    ``io`` is the minimum I/O of the variant at M: the witness schedule costs
    ``io`` and the CNF for budget ``io - 1`` is refuted. Status ``OPTIMAL``
    when the horizon is at least
    :func:`~spartition.certify.encoding.proven_horizon` for budget ``io - 1``,
    which the checker computes from ``dag.json`` itself (the bundle's
    ``horizon_proven`` is never read): ``N + Q`` for oneshot, ``Q + sum pi(v)``
    for recompute, by the compute caps of
    :mod:`spartition.exact.formulations.caps`, which the statement names. A
    recompute horizon below that: ``OPTIMAL_WITHIN_HORIZON``, no schedule of
    at most ``horizon`` loads, stores and computes does better.
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
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from spartition.certify.cnf import CNF, read_dimacs
from spartition.certify.encoding import ENCODER_VERSION, pebbling_cnf, proven_horizon
from spartition.certify.order_encoding import ORDER_ENCODER_VERSION, ORDER_REDUCTIONS, order_budget_cnf
from spartition.certify.partition_encoding import PARTITION_ENCODER_VERSION, partition_cnf, set_cnf
from spartition.certify.proof import check_lrat
from spartition.core.bounds import trivial_lower_bound
from spartition.core.dag import as_compact, compact, dag_hash, load_dag, save_dag, strip_isolated
from spartition.core.game import Schedule, replay
from spartition.errors import DAGTooLarge, InvalidDAG, SpartitionError, UnknownFamily
from spartition.exact.formulations.caps import harmless_events
from spartition.status import Status

__all__ = ["BUNDLE_FORMAT", "MAX_CNF_CELLS", "BundleError", "BundleReport", "caps_argument", "check_bundle",
           "check_cnf_size", "check_horizon", "cnf_cells", "expected_cnf", "game_rules", "write_bundle"]

BUNDLE_FORMAT = "spartition-certificate-1"
FILES = {"dag": "dag.json", "witness": "witness.json", "cnf": "formula.cnf", "proof": "proof.lrat"}
#: The largest pebbling CNF built, in steps x nodes x (counter width): about 10^8 literals.
MAX_CNF_CELLS = 100_000_000
# the keys of each kind's claim and what each must be: (test, description)
_INT = (lambda x: isinstance(x, int) and not isinstance(x, bool), "an integer")
_POS = (lambda x: _INT[0](x) and x >= 1, "an integer >= 1")
_NONNEG = (lambda x: _INT[0](x) and x >= 0, "an integer >= 0")
_CLAIM_KEYS = {
    "pebbling": {"M": _POS, "variant": (lambda x: x in ("oneshot", "recompute"), "'oneshot' or 'recompute'"),
                 "io": _NONNEG, "horizon": (lambda x: x is None or _NONNEG[0](x), "an integer >= 0 or null"),
                 "count_levels": (lambda x: _INT[0](x) and 0 <= x <= 16, "an integer from 0 to 16")},
    "pebbling-order": {"M": _POS, "variant": (lambda x: x == "oneshot", "'oneshot' (the order encoding)"),
                       "io": _NONNEG, "reductions": (lambda x: isinstance(x, list) and all(isinstance(r, str) for r in x),
                                                     "a list of strings")},
    "partition": {"S": _POS, "classes": _NONNEG},
    "capacity": {"X": _POS, "convex": (lambda x: isinstance(x, bool), "true or false"), "capacity": _NONNEG,
                 "weights": (lambda x: isinstance(x, dict) and all(_INT[0](w) for w in x.values()),
                             "an object of integer weights")},
}


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
    """Write a bundle directory at ``path`` (a ``.tar.gz`` path packs it into an archive, leaving no directory behind)."""
    path = Path(path)
    if not path.name.endswith(".tar.gz"):
        _write_files(path, G, claim, witness, cnf, proof_file, tools, stats)
        return path
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / path.name[: -len(".tar.gz")]
        _write_files(out, G, claim, witness, cnf, proof_file, tools, stats)
        # packed beside the target and renamed: a kill during packing leaves no truncated archive at `path`
        part = path.with_name(path.name + ".part")
        try:
            with tarfile.open(part, "w:gz") as tar:
                tar.add(out, arcname=out.name)
            part.replace(path)
        finally:
            part.unlink(missing_ok=True)
    return path


def _write_files(out: Path, G, claim: dict, witness: dict, cnf, proof_file, tools: dict, stats: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    save_dag(G, out / FILES["dag"])
    (out / FILES["witness"]).write_text(json.dumps(witness) + "\n")
    files = {"dag": FILES["dag"], "witness": FILES["witness"]}
    if cnf is not None:
        cnf.write(out / FILES["cnf"])
        Path(proof_file).replace(out / FILES["proof"])
        (out / FILES["proof"]).chmod(0o644)
        files.update(cnf=FILES["cnf"], proof=FILES["proof"])
    # the hash of the DAG as written and read back: a file without ``op`` gets ``input`` on its
    # sources when read, so the in-memory graph of a user's own DAG may hash differently
    doc = {"format": BUNDLE_FORMAT, **claim, "dag_sha256": dag_hash(load_dag(out / FILES["dag"])), "files": files,
           "sha256": {k: _sha256(out / v) for k, v in files.items()}, "tools": tools, "stats": stats}
    (out / "certificate.json").write_text(json.dumps(doc, indent=2) + "\n")


@contextmanager
def _opened(path: Path):
    """The bundle directory: ``path`` itself, or the archive unpacked into a directory removed afterwards."""
    if path.is_dir():
        yield path
        return
    if not path.name.endswith(".tar.gz"):
        raise BundleError(f"{path}: a bundle is a directory or a .tar.gz archive")
    if not path.is_file():
        raise BundleError(f"{path}: no such bundle")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            with tarfile.open(path, "r:gz") as tar:
                for m in tar.getmembers():
                    if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in Path(m.name).parts:
                        raise BundleError(f"{path}: refusing archive member {m.name!r}")
                tar.extractall(tmp)
        except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            raise BundleError(f"{path}: not a readable .tar.gz archive (truncated or not gzip): {exc}") from None
        found = [p.parent for p in Path(tmp).rglob("certificate.json")]
        if len(found) != 1:
            raise BundleError(f"{path}: expected one certificate.json in the archive, found {len(found)}")
        yield found[0]


def _member(root: Path, key, name) -> Path:
    """The file ``name`` of the bundle, refused unless it is a regular file inside it."""
    if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\\" in name:
        raise BundleError(f"files.{key} is {name!r}: a bundle names its files by plain file names, no paths")
    path = root / name
    if not path.resolve().is_relative_to(root.resolve()):
        raise BundleError(f"files.{key} ({name}) is a link out of the bundle")
    if not path.is_file():
        raise BundleError(f"files.{key} ({name}) is not a regular file in the bundle")
    return path


def _claim(doc) -> dict:
    """The keys of ``certificate.json`` the checker relies on, each checked for presence and type."""
    if not isinstance(doc, dict):
        raise BundleError(f"certificate.json must be a JSON object, got {type(doc).__name__}")
    if doc.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"unknown bundle format {doc.get('format')!r}")
    kind = doc.get("kind")
    if not isinstance(kind, str) or kind not in _CLAIM_KEYS:  # a list or object is no kind (and unhashable)
        raise BundleError(f"certificate.json: 'kind' is {kind!r}; expected one of {', '.join(_CLAIM_KEYS)}")
    for key, kinds in (("files", "an object of file names"), ("sha256", "an object of digests")):
        if not isinstance(doc.get(key), dict):
            raise BundleError(f"certificate.json: {key!r} must be {kinds}, got {doc.get(key)!r}")
    for key, (test, what) in _CLAIM_KEYS[kind].items():
        if key not in doc:
            raise BundleError(f"certificate.json: no {key!r} key (a {kind} claim needs it)")
        if not test(doc[key]):
            raise BundleError(f"certificate.json: {key!r} must be {what}, got {doc[key]!r}")
    for key in ("dag", "witness"):
        if key not in doc["files"]:
            raise BundleError(f"certificate.json: files has no {key!r} entry")
    for key in doc["files"]:
        if not isinstance(doc["sha256"].get(key), str):
            raise BundleError(f"certificate.json: no sha256 digest for files.{key}")
    if "dag_sha256" in doc and not isinstance(doc["dag_sha256"], str):
        raise BundleError(f"certificate.json: 'dag_sha256' must be a string, got {doc['dag_sha256']!r}")
    return {"format": doc["format"], "kind": kind, "encoder": doc.get("encoder"),
            **{k: doc[k] for k in _CLAIM_KEYS[kind]}}


def game_rules(variant: str) -> str:
    """The rules a pebbling statement is about, in words (docs/definitions.md)."""
    again = "a node may be computed again" if variant == "recompute" else "each node is computed once"
    return ("red-blue pebble game: a load or store costs 1, a compute needs every predecessor red, "
            f"at most M red pebbles, every output ends blue, {again}")


def cnf_cells(G, M: int, budget: int, horizon: int, count_levels: int = 2) -> int:
    """About how many literals the pebbling CNF of ``horizon`` steps has (what :data:`MAX_CNF_CELLS` limits).

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> cnf_cells(fft(1), 3, 3, 5)
    275
    """
    c = as_compact(G)
    return horizon * (c.n * (min(M, c.n) + count_levels + 8) + budget)


def check_cnf_size(G, M: int, budget: int, horizon: int, count_levels: int = 2) -> None:
    """Refuse a ``horizon`` whose CNF would exceed :data:`MAX_CNF_CELLS` literals.

    Raises
    ------
    ValueError
        Naming the horizon and the size.
    """
    cells = cnf_cells(G, M, budget, horizon, count_levels)
    if cells > MAX_CNF_CELLS:
        raise ValueError(f"horizon {horizon} makes a CNF of about {cells:,} literals for this DAG, more than "
                         f"{MAX_CNF_CELLS:,}; give a smaller horizon")


def check_horizon(G, M: int, variant: str, budget: int, horizon: int, count_levels: int = 2) -> None:
    """Refuse a recompute ``horizon`` that no schedule fits in, or one whose CNF would be too large.

    Every schedule computes each non-input node at least once and makes at
    least :func:`~spartition.core.bounds.trivial_lower_bound` loads and
    stores, so below ``N + trivial`` moves no schedule exists and "no
    schedule within the horizon does better" says nothing. (A horizon of at
    least :func:`~spartition.certify.encoding.proven_horizon` for ``budget``
    says something whatever its length, since its refutation covers every
    schedule: for it callers check only :func:`check_cnf_size`.)

    Raises
    ------
    ValueError
        Naming the horizon and the least one that says something, or the size.
    """
    c = as_compact(G)
    fewest = int((~c.is_input).sum()) + trivial_lower_bound(c)
    if horizon < fewest:
        raise ValueError(
            f"horizon {horizon} is below {fewest}, the loads, stores and computes every schedule of this DAG needs "
            f"(its {fewest - trivial_lower_bound(c)} computes and {trivial_lower_bound(c)} loads and stores): "
            "no schedule fits, so the statement would be empty")
    check_cnf_size(c, M, budget, horizon, count_levels)


def caps_argument(G, budget: int, horizon: int) -> str:
    """Why a recompute ``horizon`` covers every schedule with I/O <= ``budget``, in the statement's words.

    The argument is :func:`~spartition.certify.encoding.proven_horizon`'s;
    the caller has checked ``horizon >= budget + sum pi``.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> caps_argument(fft(1), 3, 5).split("; ")[-1]
    'horizon = 5 >= Q + sum pi = 3 + 2'
    """
    total = harmless_events(as_compact(G))
    return (f"horizon proven for the unbounded game by the compute caps pi(v) "
            f"(spartition.exact.formulations.caps): every schedule with I/O <= {budget} has one of no greater I/O "
            f"computing each node v at most pi(v) times, sum pi = {total}, hence with at most {budget} + {total} = "
            f"{budget + total} loads, stores and computes; horizon = {horizon} >= Q + sum pi = {budget} + {total}")


def _dag_name(G, recorded) -> str:
    """The DAG in words: its hash and, when it names a family, the family rebuilt and compared."""
    from spartition.core.registry import family_names, rebuild

    digest = dag_hash(G)
    if recorded is not None and recorded != digest:
        raise BundleError(f"dag.json hashes to {digest}, certificate.json says {recorded}")
    name = G.graph.get("family")
    if not isinstance(name, str) or name not in family_names():
        return f"the DAG of sha256 {digest} ({G.number_of_nodes()} nodes, {G.number_of_edges()} edges)"
    params = G.graph.get("params") or {}
    label = f"{name} {' '.join(f'{k}={v}' for k, v in params.items())}".strip()
    mismatch = BundleError(f"dag.json says it is {label}, but its graph is not that family's (sha256 {digest})")
    try:
        built = rebuild(G, max_nodes=max(G.number_of_nodes(), 1))
    except DAGTooLarge:
        raise mismatch from None
    except (InvalidDAG, UnknownFamily, ValueError, TypeError, SpartitionError) as exc:
        raise BundleError(f"dag.json says it is {label}, which does not build: {exc}") from None
    if digest not in (dag_hash(built), dag_hash(strip_isolated(built))):
        raise mismatch
    return f"{label} (sha256 {digest})"


def _first_difference(got: CNF, want: CNF) -> str | None:
    if got.num_vars != want.num_vars:
        return f"the CNF has {got.num_vars} variables, the encoder writes {want.num_vars}"
    for i, (a, b) in enumerate(zip(got.clauses, want.clauses), 1):
        if a != b:
            return f"clause {i} is {list(a)}, the encoder writes {list(b)}"
    if len(got.clauses) != len(want.clauses):
        return f"the CNF has {len(got.clauses)} clauses, the encoder writes {len(want.clauses)}"
    return None


def _check_witness(G, claim: dict, witness, dag: str) -> tuple:
    kind = claim["kind"]
    if kind == "pebbling":
        s = Schedule.from_dict(witness)
        if (s.M, s.variant) != (claim["M"], claim["variant"]):
            raise BundleError(f"the schedule is for M = {s.M}, {s.variant}; the claim for M = {claim['M']}, "
                              f"{claim['variant']}")
        r = replay(G, s)
        if r.io != claim["io"]:
            raise BundleError(f"the schedule replays with I/O {r.io}, the claim says {claim['io']}")
        # the horizon is read from the bundle and proven_horizon computed from its DAG; a
        # horizon_proven flag in certificate.json is never read
        T, io, variant = claim["horizon"], claim["io"], claim["variant"]
        rules = game_rules(variant)
        optimum = f"the minimum {variant} I/O of {dag} with M = {claim['M']} is {io} ({rules})"
        if io == 0 or variant == "oneshot" and (T is None or T >= proven_horizon(G, "oneshot", io - 1)):
            return Status.OPTIMAL, optimum  # io == 0: no schedule has I/O below 0
        if T is None:
            raise BundleError("certificate.json: a recompute claim needs a 'horizon'")
        try:
            if variant == "recompute" and T >= proven_horizon(G, variant, io - 1):
                check_cnf_size(G, claim["M"], io - 1, T, claim["count_levels"])
                return Status.OPTIMAL, f"{optimum}; {caps_argument(G, io - 1, T)}"
            check_horizon(G, claim["M"], variant, io - 1, T, claim["count_levels"])
        except ValueError as exc:
            raise BundleError(f"certificate.json: {exc}") from None
        return (Status.OPTIMAL_WITHIN_HORIZON,
                f"no {variant} schedule of {dag} with M = {claim['M']} and at most {T} loads, stores "
                f"and computes has I/O below {io}; one with I/O {io} exists ({rules})")
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
        return Status.OPTIMAL, (f"the minimum oneshot I/O of {dag} with M = {claim['M']} is {claim['io']} "
                           f"({game_rules('oneshot')}), given the reductions of the order model: "
                           + "; ".join(ORDER_REDUCTIONS))
    if kind == "partition":
        from spartition.partition.certificate import Partition, check_partition

        rep = check_partition(G, Partition.from_dict(witness), claim["S"])
        if not rep.valid:
            raise BundleError(f"the partition fails the check: {rep.problems[0].to_dict()}")
        if rep.num_classes != claim["classes"]:
            raise BundleError(f"the partition has {rep.num_classes} classes, the claim says {claim['classes']}")
        return Status.OPTIMAL, f"P({claim['S']}) = {claim['classes']} for {dag}"
    if kind == "capacity":
        from spartition.partition.sets import verify_set

        H = strip_isolated(G)
        c = compact(H)
        nodes = witness.get("nodes") if isinstance(witness, dict) else None
        if not isinstance(nodes, list) or not all(isinstance(v, str) and v in c.index for v in nodes):
            raise BundleError("witness.json: 'nodes' must be a list of node ids of the DAG")
        unknown = [v for v in claim["weights"] if v not in c.index]
        if unknown:
            raise BundleError(f"certificate.json: weights name {unknown[0]!r}, not a node of the DAG")
        members = [c.index[v] for v in nodes]
        verify_set(c, members, claim["X"], claim["convex"])
        w = sum(int(claim["weights"].get(v, 0)) for v in nodes)
        if w != claim["capacity"]:
            raise BundleError(f"the witness set weighs {w}, the claim says {claim['capacity']}")
        # the weights come from the bundle itself: the statement says what they are
        weighted = sum(1 for x in claim["weights"].values() if int(x))
        total = sum(int(x) for x in claim["weights"].values())
        return Status.OPTIMAL, (f"U({claim['X']}) = {claim['capacity']}{' (convex sets)' if claim['convex'] else ''} "
                           f"for {dag}, "
                           f"weights from the bundle: {weighted} weighted nodes, total weight {total}")
    raise BundleError(f"unknown certificate kind {kind!r}")


def check_bundle(path) -> BundleReport:
    """Verify a bundle end to end (module docstring); an archive is unpacked into a directory removed afterwards.

    Raises
    ------
    BundleError, ProofError, IllegalMove, CNFError
        At the first check that fails, saying which.
    """
    with _opened(Path(path)) as root:
        return _check(root)


def _read_json(path: Path, what: str):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise BundleError(f"unreadable {what}: {e}") from None
    except RecursionError:
        raise BundleError(f"unreadable {what}: nested too deeply") from None


def _check(root: Path) -> BundleReport:
    doc = _read_json(root / "certificate.json", f"{root}/certificate.json")
    claim = _claim(doc)
    version = {"pebbling": ENCODER_VERSION, "pebbling-order": ORDER_ENCODER_VERSION}.get(claim["kind"],
                                                                                          PARTITION_ENCODER_VERSION)
    if claim["encoder"] != version:
        raise BundleError(f"written by encoder {claim['encoder']!r}, this checker re-derives {version!r}")
    files = {key: _member(root, key, name) for key, name in doc["files"].items()}
    for key, path in files.items():
        if _sha256(path) != doc["sha256"][key]:
            raise BundleError(f"{path.name} does not match its recorded sha256")
    try:
        G = load_dag(files["dag"])
    except InvalidDAG as exc:
        raise BundleError(f"dag.json: {exc}") from None
    dag = _dag_name(G, doc.get("dag_sha256"))
    status, statement = _check_witness(G, claim, _read_json(files["witness"], "witness.json"), dag)
    want = expected_cnf(G, claim)
    # only what was checked goes into the report: not horizon_proven, stats or tools as the bundle states them
    details = {"claim": {**claim, "dag_sha256": dag_hash(G)}}
    if claim["kind"] == "capacity":
        details["claim"].pop("weights")
    if want is None:
        return BundleReport(claim["kind"], status, statement + " (nothing to refute)", details)
    if "cnf" not in files or "proof" not in files:
        raise BundleError("the claim needs a refutation but the bundle has no formula.cnf and proof.lrat")
    got = read_dimacs(files["cnf"])
    diff = _first_difference(got, want)
    if diff:
        raise BundleError(f"formula.cnf is not the encoder's CNF for this claim: {diff}")
    rep = check_lrat(got, files["proof"])
    details["proof"] = rep.to_dict()
    details["cnf"] = {"variables": got.num_vars, "clauses": len(got.clauses)}
    return BundleReport(claim["kind"], status, statement, details)
