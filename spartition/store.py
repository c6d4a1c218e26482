"""The results store: an embedded SQLite database of computed values with their certificates.

One row per (DAG hash, M, variant, method, solver parameters, version): the
status, the value (an I/O, a bound), the proven bound of a time-limited run,
the full result record and its certificate (a schedule or a partition, as
compressed JSON, or a path to a file beside the database when it is large).

Notes
-----
Safe for several writers in several processes: the database runs in WAL
mode with a busy timeout, every write is one short ``BEGIN IMMEDIATE``
transaction, and a finished row is committed before the next computation
starts, so a crash mid-sweep loses no finished row.

The time limit is a column, not part of the key: a row is *final* when its
status is proven (OPTIMAL, INFEASIBLE, or an exact algorithm replay), and a
non-final row answers a request whose time limit is no longer than the one
it ran with. A later run with a longer limit replaces it only if it is
better (proven, or a longer limit) -- see :meth:`ResultStore.put`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import sqlite3
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ResultKey", "StoredResult", "ResultStore", "default_store_path", "canonical_json", "open_store"]

#: Certificates whose compressed JSON is larger than this go to a file beside the database.
INLINE_LIMIT = 1 << 20
BUSY_TIMEOUT_MS = 60_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY,
    dag_hash TEXT NOT NULL,
    M INTEGER NOT NULL,
    variant TEXT NOT NULL,
    method TEXT NOT NULL,
    params TEXT NOT NULL,
    version TEXT NOT NULL,
    family TEXT,
    family_params TEXT,
    status TEXT NOT NULL,
    value REAL,
    bound REAL,
    proven INTEGER NOT NULL,
    time_limit REAL,
    wall_s REAL,
    record TEXT NOT NULL,
    certificate BLOB,
    certificate_path TEXT,
    created REAL NOT NULL,
    UNIQUE (dag_hash, M, variant, method, params, version)
);
CREATE INDEX IF NOT EXISTS results_family ON results (family, family_params, variant, M);
"""


def canonical_json(value) -> str:
    """Sorted-key compact JSON: the form in which parameters are keyed.

    Examples
    --------
    >>> canonical_json({"b": 1, "a": [2, 3]})
    '{"a":[2,3],"b":1}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def default_store_path() -> Path:
    """Where the store lives unless ``--store`` says otherwise.

    ``$SPARTITION_STORE`` if set; else ``results.sqlite`` in the user's data
    directory: ``$XDG_DATA_HOME/spartition`` (default ``~/.local/share``) on
    Linux, ``~/Library/Application Support/spartition`` on macOS,
    ``%LOCALAPPDATA%\\spartition`` on Windows.
    """
    env = os.environ.get("SPARTITION_STORE")
    if env:
        return Path(env)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "spartition" / "results.sqlite"


@dataclass(frozen=True)
class ResultKey:
    """What identifies a stored value.

    ``params`` are the solver parameters that change the answer's meaning
    (workers, seed, options) -- not the time limit, which is a column.
    """

    dag_hash: str
    M: int
    variant: str
    method: str
    params: dict = field(default_factory=dict)
    version: str = ""

    def columns(self) -> tuple:
        return (self.dag_hash, int(self.M), self.variant, self.method, canonical_json(self.params), self.version)

    def to_dict(self) -> dict:
        return {"dag_hash": self.dag_hash, "M": self.M, "variant": self.variant, "method": self.method,
                "params": dict(self.params), "version": self.version}


@dataclass(frozen=True)
class StoredResult:
    """One row of the store.

    Attributes
    ----------
    key : ResultKey
    status : str
        ``OPTIMAL``, ``FEASIBLE``, ``INFEASIBLE``, ``UNKNOWN``, ``VALID`` (a
        replayed schedule), ``PROVEN``/``UNPROVEN`` (a bound), ``ERROR``.
    value, bound : float or None
        The value (an I/O or a bound) and the solver's proven bound.
    proven : bool
        Final: no longer time limit can change it.
    time_limit : float or None
        The limit the run had (None: none).
    record : dict
        The full result (``to_dict()`` of the producing function).
    certificate : dict or None
        Schedule or partition JSON, read back lazily by :meth:`ResultStore.certificate`.
    family, family_params
        What built the DAG, so that ``report`` can show the row.
    """

    key: ResultKey
    status: str
    value: float | None
    bound: float | None
    proven: bool
    time_limit: float | None
    wall_s: float | None
    record: dict
    family: str | None = None
    family_params: dict | None = None
    certificate: dict | None = field(default=None, compare=False, repr=False)
    created: float = 0.0
    row_id: int | None = None

    def to_dict(self) -> dict:
        return {
            **self.key.to_dict(), "status": self.status, "value": self.value, "bound": self.bound,
            "proven": self.proven, "time_limit": self.time_limit, "wall_s": self.wall_s,
            "family": self.family, "family_params": self.family_params, "record": self.record,
            "created": self.created, "id": self.row_id,
        }

    def satisfies(self, time_limit: float | None) -> bool:
        """Whether this row answers a request with ``time_limit`` (no recomputation needed)."""
        if self.proven:
            return True
        if self.time_limit is None:
            return True
        return time_limit is not None and self.time_limit >= time_limit


def _limit(x):
    return math.inf if x is None else float(x)


def _better(new: StoredResult, old: StoredResult) -> bool:
    """Whether ``new`` should replace ``old`` (same key)."""
    if new.proven != old.proven:
        return new.proven
    if new.proven:
        return False  # both final: keep the first, rows are never rewritten needlessly
    if _limit(new.time_limit) != _limit(old.time_limit):
        return _limit(new.time_limit) > _limit(old.time_limit)
    return False


class ResultStore:
    """An SQLite results store (see the module docstring). A context manager.

    Parameters
    ----------
    path : str or Path
        The database file; its directory is created. ``":memory:"`` for a
        throw-away store.

    Examples
    --------
    >>> with ResultStore(":memory:") as st:
    ...     k = ResultKey("abc", 3, "oneshot", "greedy")
    ...     st.put(StoredResult(k, "VALID", 4.0, None, True, None, 0.0, {"io": 4}))
    ...     st.get(k).value
    True
    4.0
    """

    def __init__(self, path):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if self.path != ":memory:":
            # WAL persists in the file; switching to it takes an exclusive lock that
            # ignores the busy timeout, so writers opening a new store together retry.
            mode = self._retry(lambda: self._conn.execute("PRAGMA journal_mode").fetchone()[0])
            if mode.lower() != "wal":
                self._retry(lambda: self._conn.execute("PRAGMA journal_mode = WAL"))
        self._conn.execute("PRAGMA synchronous = NORMAL")
        for stmt in _SCHEMA.strip().split(";"):
            if stmt.strip():
                self._retry(lambda s=stmt: self._conn.execute(s))

    # ------------------------------------------------------------ plumbing

    def close(self) -> None:
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _retry(self, fn, tries: int = 20):
        for attempt in range(tries):
            try:
                return fn()
            except sqlite3.OperationalError as exc:  # "database is locked" past the busy timeout
                if "locked" not in str(exc) or attempt == tries - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))

    @contextmanager
    def _transaction(self):
        self._retry(lambda: self._conn.execute("BEGIN IMMEDIATE"))
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        else:
            self._retry(lambda: self._conn.execute("COMMIT"))

    def _cert_dir(self) -> Path:
        return Path(self.path + ".certificates")

    def _encode_certificate(self, cert):
        if cert is None:
            return None, None
        blob = gzip.compress(canonical_json(cert).encode(), mtime=0)
        if len(blob) <= INLINE_LIMIT or self.path == ":memory:":
            return blob, None
        d = self._cert_dir()
        d.mkdir(parents=True, exist_ok=True)
        p = d / (hashlib.sha256(blob).hexdigest()[:32] + ".json.gz")
        if not p.exists():
            tmp = p.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(blob)
            os.replace(tmp, p)
        return None, str(p)

    # ------------------------------------------------------------ rows

    def put(self, result: StoredResult) -> bool:
        """Insert ``result``, or replace the row of the same key if ``result`` is better.

        Better: proven where the old row was not, or neither proven and a
        longer time limit. Returns whether the row was written. One short
        transaction.
        """
        blob, cpath = self._encode_certificate(result.certificate)
        cols = result.key.columns()
        values = (
            *cols, result.family, canonical_json(result.family_params) if result.family_params is not None else None,
            result.status, result.value, result.bound, int(bool(result.proven)), result.time_limit,
            result.wall_s, canonical_json(result.record), blob, cpath, time.time(),
        )
        with self._transaction():
            old = self._select("WHERE dag_hash=? AND M=? AND variant=? AND method=? AND params=? AND version=?", cols)
            if old and not _better(result, old[0]):
                return False
            if old:
                self._conn.execute("DELETE FROM results WHERE id=?", (old[0].row_id,))
            self._conn.execute(
                "INSERT INTO results (dag_hash, M, variant, method, params, version, family, family_params, status, "
                "value, bound, proven, time_limit, wall_s, record, certificate, certificate_path, created) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                values,
            )
        return True

    def get(self, key: ResultKey, time_limit: float | None = None, any_limit: bool = False) -> StoredResult | None:
        """The stored row of ``key`` if it answers a request with ``time_limit``, else None.

        With ``any_limit`` the row is returned whatever its time limit.
        """
        rows = self._select("WHERE dag_hash=? AND M=? AND variant=? AND method=? AND params=? AND version=?", key.columns())
        if not rows:
            return None
        row = rows[0]
        return row if any_limit or row.satisfies(time_limit) else None

    def certificate(self, row: StoredResult) -> dict | None:
        """The certificate JSON of ``row`` (schedule or partition), or None."""
        cur = self._conn.execute("SELECT certificate, certificate_path FROM results WHERE id=?", (row.row_id,))
        got = cur.fetchone()
        if got is None:
            return None
        blob, cpath = got
        if cpath:
            blob = Path(cpath).read_bytes()
        return None if blob is None else json.loads(gzip.decompress(blob))

    def rows(self, family: str | None = None, method: str | None = None) -> list[StoredResult]:
        """Every row (optionally of one family / method), oldest first."""
        where, args = [], []
        if family is not None:
            where.append("family=?")
            args.append(family)
        if method is not None:
            where.append("method=?")
            args.append(method)
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        return self._select(clause + " ORDER BY id", tuple(args))

    def count(self) -> int:
        """The number of rows."""
        return self._conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]

    def _select(self, clause: str, args: tuple) -> list[StoredResult]:
        cur = self._retry(lambda: self._conn.execute(
            "SELECT id, dag_hash, M, variant, method, params, version, family, family_params, status, value, bound, "
            "proven, time_limit, wall_s, record, created FROM results " + clause, args))
        out = []
        for (rid, h, M, variant, method, params, version, fam, fparams, status, value, bound, proven, tl, wall,
             record, created) in cur.fetchall():
            out.append(StoredResult(
                key=ResultKey(h, M, variant, method, json.loads(params), version), status=status, value=value,
                bound=bound, proven=bool(proven), time_limit=tl, wall_s=wall, record=json.loads(record),
                family=fam, family_params=json.loads(fparams) if fparams else None, created=created, row_id=rid,
            ))
        return out


def open_store(path=None) -> ResultStore:
    """Open the store at ``path`` (default :func:`default_store_path`)."""
    return ResultStore(default_store_path() if path is None else path)
