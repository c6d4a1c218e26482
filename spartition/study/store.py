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
non-final row answers a request only when the limit it ran with is known
and at least the requested one (a non-final row without a recorded limit
answers nothing: NULL never means "no limit" for a time-limited method). A
later run with a longer limit replaces it only if it is better (proven, or a
longer limit) -- see :meth:`ResultStore.put`. Time limits that are not
positive finite numbers are refused on write (SQLite stores NaN as NULL).

A file that is not a results store -- not SQLite, truncated, corrupted, a
directory, or SQLite with another schema, another ``application_id``, or
views, indexes or a ``user_version`` but no tables -- is refused with a
:class:`StoreError` naming it, before anything is written to it. A store
opened with ``readonly=True`` (what ``report`` does) is never written.
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

from spartition.errors import SpartitionError
from spartition.finding import Finding
from spartition.settings import check_time_limit
from spartition.status import PROVEN_STATUSES, Status, is_proven

__all__ = ["ResultKey", "StoredResult", "ResultStore", "StoreError", "PROVEN_STATUSES", "default_store_path",
           "canonical_json", "open_store", "stored_or_computed", "stored_rows"]


_SQLITE_MAGIC = b"SQLite format 3\x00"
#: The SQLite ``application_id`` a results store carries ("SPRT"); a file with another nonzero one is foreign.
APPLICATION_ID = 0x53505254
#: Stores up to this size get a full ``PRAGMA quick_check`` when opened (larger ones: header and schema only).
QUICK_CHECK_LIMIT = 64 << 20


class StoreError(SpartitionError):
    """A results store file that cannot be used: not a store, damaged, read-only, or a directory."""


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
    status : Status
        ``OPTIMAL``, ``FEASIBLE``, ``INFEASIBLE``, ``UNKNOWN``, ``VALID`` (a
        replayed schedule), ``CLOSED_FORM`` (the trivial bound), ``SKIPPED``, ...
        (:class:`spartition.status.Status`; a name it does not know, from a
        later version, is kept as a string and is never final).
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

    def __post_init__(self):
        # a status read from a row, a record or a caller's string is the enum member of that name
        object.__setattr__(self, "status", Status.parse(self.status))

    def to_dict(self) -> dict:
        return {
            **self.key.to_dict(), "status": self.status, "value": self.value, "bound": self.bound,
            "proven": self.proven, "time_limit": self.time_limit, "wall_s": self.wall_s,
            "family": self.family, "family_params": self.family_params, "record": self.record,
            "created": self.created, "id": self.row_id,
        }

    def finding(self) -> Finding:
        """This row as a :class:`~spartition.finding.Finding` (:meth:`Finding.of_method <spartition.finding.Finding.of_method>`)."""
        limited = self.time_limit is not None
        return Finding.of_method(self.key.method, status=self.status, value=self.value, bound=self.bound,
                                 final=bool(self.proven), ran_with_limit=limited, game=self.key.variant)

    def satisfies(self, time_limit: float | None) -> bool:
        """Whether this row answers a request with ``time_limit`` (no recomputation needed).

        A final row answers every request. A non-final row answers only when
        it ran with a known, valid limit at least ``time_limit``; a missing
        limit (NULL: none recorded, or a NaN that SQLite stored as NULL) or a
        request without a limit is never answered by an unproven row.
        """
        if self.proven:
            return True
        tl = self.time_limit
        if tl is None or time_limit is None:
            return False
        if not (isinstance(tl, (int, float)) and math.isfinite(tl) and tl > 0):
            return False
        return tl >= time_limit


def _limit(x):
    # an unproven row without a usable limit is the least useful: it answers nothing
    if x is None or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
        return -math.inf
    return float(x)


def _better(new: StoredResult, old: StoredResult) -> bool:
    """Whether ``new`` should replace ``old`` (same key)."""
    if new.proven != old.proven:
        return new.proven
    if new.proven:
        return False  # both final: keep the first, rows are never rewritten needlessly
    if _limit(new.time_limit) != _limit(old.time_limit):
        return _limit(new.time_limit) > _limit(old.time_limit)
    return False


_COLUMNS = frozenset({
    "id", "dag_hash", "M", "variant", "method", "params", "version", "family", "family_params", "status", "value",
    "bound", "proven", "time_limit", "wall_s", "record", "certificate", "certificate_path", "created",
})


def _side_files(path: str) -> bool:
    """Whether a journal or a non-empty WAL sits beside ``path`` (a writer may be mid-transaction)."""
    for suffix in ("-wal", "-journal"):
        try:
            if os.path.getsize(path + suffix) > 0:
                return True
        except OSError:
            pass
    return False


def _check_header(path: str, size: int) -> None:
    """Refuse a file that is not SQLite, or is shorter than its header says (truncated)."""
    with open(path, "rb") as fh:
        head = fh.read(100)
    if not head.startswith(_SQLITE_MAGIC[: len(head)]) or len(head) < len(_SQLITE_MAGIC):
        raise StoreError(f"store {path} is not an SQLite database (not a spartition results store); "
                         "it was left untouched")
    if len(head) < 100:
        raise StoreError(f"store {path} is truncated ({size} bytes, shorter than an SQLite header); "
                         "it was left untouched")
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    if page < 512 or page & (page - 1):
        raise StoreError(f"store {path} is corrupted (bad page size {page} in its header); it was left untouched")
    if _side_files(path):
        return  # a live writer: the file may legitimately be mid-checkpoint
    pages = int.from_bytes(head[28:32], "big")
    size_valid = head[24:28] == head[92:96]  # "version-valid-for" equals the change counter
    if size % page or (size_valid and pages * page > size):
        raise StoreError(f"store {path} is truncated ({size} bytes, its header says {pages} pages of {page}); "
                         "it was left untouched")


def _check_schema(conn, path: str, size: int) -> bool:
    """Refuse SQLite that is not a results store; whether the store is still empty (no schema at all)."""
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    if app not in (0, APPLICATION_ID):
        raise StoreError(f"store {path} is an SQLite database of another program (application_id {app:#x}, "
                         f"a results store has {APPLICATION_ID:#x}); it was left untouched")
    objects = conn.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchall()
    tables = {name for kind, name in objects if kind == "table"}
    if not objects:
        user_version = conn.execute("PRAGMA user_version").fetchone()[0]
        if user_version:  # another program's file that has not created its tables yet
            raise StoreError(f"store {path} is an SQLite database of another program (no tables, user_version "
                             f"{user_version}); it was left untouched")
        return True
    if "results" not in tables:
        if not tables:
            listed = ", ".join(f"{kind} {name}" for kind, name in sorted(objects)[:8])
            raise StoreError(f"store {path} is an SQLite database of another program (no tables; {listed}); "
                             "it was left untouched")
        raise StoreError(f"store {path} is an SQLite database of another program (tables: "
                         f"{', '.join(sorted(tables))}; no 'results' table); it was left untouched")
    cols = {row[1] for row in conn.execute("PRAGMA table_info(results)")}
    if cols != _COLUMNS:
        extra, lack = sorted(cols - _COLUMNS), sorted(_COLUMNS - cols)
        what = "; ".join(x for x in (f"unexpected columns {', '.join(extra[:8])}" if extra else "",
                                     f"{len(lack)} columns missing, e.g. {', '.join(lack[:3])}" if lack else "") if x)
        raise StoreError(f"store {path} has a 'results' table that is not a spartition store ({what}); "
                         "it was left untouched")
    if size <= QUICK_CHECK_LIMIT:
        bad = [r[0] for r in conn.execute("PRAGMA quick_check(3)")]
        if bad != ["ok"]:
            detail = "; ".join(" ".join(str(b).split()) for b in bad)
            raise StoreError(f"store {path} is corrupted ({detail}); it was left untouched")
    return False


def _writable(path: str) -> bool:
    # permission bits too: root ignores them in os.access, but a chmod a-w store means "do not write"
    st = os.stat(path)
    return bool(st.st_mode & 0o222) and os.access(path, os.W_OK)


class ResultStore:
    """An SQLite results store (see the module docstring). A context manager.

    Parameters
    ----------
    path : str or Path
        The database file; its directory is created. ``":memory:"`` for a
        throw-away store.
    readonly : bool
        Open for reading only: nothing is created or written (a missing file
        reads as an empty store). What ``report`` does, so a read-only store
        can still be shown.

    Raises
    ------
    StoreError
        If ``path`` is empty, a directory, not SQLite, truncated, corrupted,
        SQLite with another schema, or read-only (unless ``readonly``).
        Such a file is never modified.

    Examples
    --------
    >>> with ResultStore(":memory:") as st:
    ...     k = ResultKey("abc", 3, "oneshot", "greedy")
    ...     st.put(StoredResult(k, "VALID", 4.0, None, True, None, 0.0, {"io": 4}))
    ...     st.get(k).value
    True
    4.0
    """

    def __init__(self, path, readonly: bool = False):
        self.path = str(path)
        self.readonly = bool(readonly)
        self._conn = None
        if not self.path.strip():
            raise StoreError("the store path is empty; give --store a file name (or omit it for the default)")
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreError(f"store {self.path} cannot be used: {exc}; it was left untouched") from None
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        memory = self.path == ":memory:"
        p = Path(self.path)
        fresh = True
        if not memory:
            if p.is_dir():
                raise StoreError(f"store {self.path} is a directory, not a results database")
            exists = p.exists()
            if exists and not p.is_file():
                raise StoreError(f"store {self.path} is not a regular file")
            size = p.stat().st_size if exists else 0
            if size:
                _check_header(self.path, size)
                probe = self._connect(readonly=True)
                try:
                    fresh = _check_schema(probe, self.path, size)
                finally:
                    probe.close()
            if self.readonly:
                if not exists or fresh:
                    memory = True  # nothing to read: an empty store, and no file is created
            else:
                if exists and not _writable(self.path):
                    raise StoreError(f"store {self.path} is read-only: `spartition report --store {self.path}` "
                                     "can read it; compare, sweep and regress need to write")
                try:
                    p.parent.mkdir(parents=True, exist_ok=True)
                except OSError as exc:
                    raise StoreError(f"cannot create the directory of store {self.path}: "
                                     f"{exc.strerror or exc}") from None
                if not os.access(p.parent, os.W_OK):
                    raise StoreError(f"store {self.path}: its directory {p.parent} is not writable")
        if memory:
            self._conn = sqlite3.connect(":memory:", isolation_level=None)
            self._create_schema()
            return
        self._conn = self._connect(readonly=self.readonly)
        if self.readonly:
            return
        self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # WAL persists in the file; switching to it takes an exclusive lock that
        # ignores the busy timeout, so writers opening a new store together retry.
        mode = self._retry(lambda: self._conn.execute("PRAGMA journal_mode").fetchone()[0])
        if mode.lower() != "wal":
            self._retry(lambda: self._conn.execute("PRAGMA journal_mode = WAL"))
        self._conn.execute("PRAGMA synchronous = NORMAL")
        self._create_schema()

    def _connect(self, readonly: bool):
        if not readonly:
            return sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        # immutable: no -shm/-wal files are created beside the store; safe when no writer is live
        flag = "mode=ro" if _side_files(self.path) or Path(self.path + "-shm").exists() else "immutable=1"
        uri = Path(self.path).absolute().as_uri() + "?" + flag
        return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)

    def _create_schema(self) -> None:
        for stmt in _SCHEMA.strip().split(";"):
            if stmt.strip():
                self._retry(lambda s=stmt: self._conn.execute(s))
        if self._conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
            self._retry(lambda: self._conn.execute(f"PRAGMA application_id = {APPLICATION_ID}"))

    # ------------------------------------------------------------ plumbing

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @contextmanager
    def _errors(self):
        """SQLite errors after opening (a file damaged under us) as a StoreError naming the file."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"store {self.path}: {exc}") from None

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
        # level 3, not gzip's 9: a schedule of a million moves compresses in 0.1 s instead of 1 s, 23% larger
        blob = gzip.compress(canonical_json(cert).encode(), compresslevel=3, mtime=0)
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
        transaction. The stored ``proven`` flag is the row's only if its
        status is one of :data:`PROVEN_STATUSES`: a row whose status proves
        nothing is never stored as final (:meth:`Status.is_proven`).

        Raises
        ------
        ValueError
            If the row's time limit is not None or a positive finite number
            (SQLite would store NaN as NULL, which reads as "no limit").
        StoreError
            If the store was opened read-only, or the file is damaged.
        """
        if self.readonly:
            raise StoreError(f"store {self.path} was opened read-only")
        check_time_limit(result.time_limit, "time_limit")
        proven = bool(result.proven) and is_proven(result.status)
        if proven != bool(result.proven):
            from dataclasses import replace

            result = replace(result, proven=proven)
        blob, cpath = self._encode_certificate(result.certificate)
        cols = result.key.columns()
        values = (
            *cols, result.family, canonical_json(result.family_params) if result.family_params is not None else None,
            result.status, _real(result.value), _real(result.bound), int(proven), result.time_limit,
            _real(result.wall_s), canonical_json(result.record), blob, cpath, time.time(),
        )
        with self._errors(), self._transaction():
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

        With ``any_limit`` the row is returned whatever its time limit
        (see :meth:`StoredResult.satisfies` otherwise).
        """
        with self._errors():
            rows = self._select("WHERE dag_hash=? AND M=? AND variant=? AND method=? AND params=? AND version=?",
                                key.columns())
        if not rows:
            return None
        row = rows[0]
        return row if any_limit or row.satisfies(time_limit) else None

    def certificate(self, row: StoredResult) -> dict | None:
        """The certificate JSON of ``row`` (schedule or partition), or None."""
        with self._errors():
            got = self._conn.execute("SELECT certificate, certificate_path FROM results WHERE id=?",
                                     (row.row_id,)).fetchone()
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
        with self._errors():
            return self._select(clause + " ORDER BY id", tuple(args))

    def count(self) -> int:
        """The number of rows."""
        with self._errors():
            return self._conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]

    def _select(self, clause: str, args: tuple) -> list[StoredResult]:
        cur = self._retry(lambda: self._conn.execute(
            "SELECT id, dag_hash, M, variant, method, params, version, family, family_params, status, value, bound, "
            "proven, time_limit, wall_s, record, created FROM results " + clause, args))
        out = []
        for (rid, h, M, variant, method, params, version, fam, fparams, status, value, bound, proven, tl, wall,
             record, created) in cur.fetchall():
            try:
                out.append(StoredResult(
                    key=ResultKey(h, M, variant, method, json.loads(params), version), status=status, value=value,
                    bound=bound, proven=bool(proven) and is_proven(status), time_limit=tl, wall_s=wall,
                    record=json.loads(record), family=fam, family_params=json.loads(fparams) if fparams else None,
                    created=created, row_id=rid,
                ))
            except (TypeError, ValueError) as exc:  # a row written by something else
                raise StoreError(f"store {self.path}: row {rid} is unreadable ({exc})") from None
        return out


def _real(x):
    """A float for a REAL column; NaN becomes NULL explicitly (SQLite would do it silently)."""
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def open_store(path=None, readonly: bool = False) -> ResultStore:
    """Open the store at ``path`` (default :func:`default_store_path`).

    Raises
    ------
    StoreError
        If the file is not a usable results store (see :class:`ResultStore`).
    """
    return ResultStore(default_store_path() if path is None else path, readonly=readonly)


def stored_rows(store, wanted):
    """The rows of ``wanted`` from ``store`` when it has every one of them, else None.

    Parameters
    ----------
    store : ResultStore or None
        None has no rows.
    wanted : iterable of (ResultKey, float or None)
        Each key with the time limit its row must have been computed under
        (see :meth:`ResultStore.get`).

    Returns
    -------
    list of StoredResult or None
        In the order of ``wanted``; None when a key is missing (a task is
        answered by the store whole or not at all).

    Examples
    --------
    >>> key = ResultKey("h", 3, "oneshot", "exact:brute", {}, "v1")
    >>> s = ResultStore(":memory:")
    >>> stored_rows(s, [(key, None)]) is None
    True
    >>> s.put(StoredResult(key, "OPTIMAL", 4.0, 4.0, True, None, 0.1, {}))
    True
    >>> [r.value for r in stored_rows(s, [(key, None)])]
    [4.0]
    """
    if store is None:
        return None
    got = [store.get(k, limit) for k, limit in wanted]
    return got if all(g is not None for g in got) else None


def stored_or_computed(store, wanted, compute) -> list:
    """The rows of ``wanted`` from ``store`` when it has every one, else ``compute()``'s rows, put into ``store``.

    Parameters
    ----------
    store : ResultStore or None
        None: always compute, keep nothing.
    wanted : iterable of (ResultKey, float or None)
        As for :func:`stored_rows`.
    compute : callable
        ``compute() -> list of StoredResult``, run only when some key is missing.

    Returns
    -------
    list of StoredResult
        The stored rows in the order of ``wanted``, else those of ``compute()``.

    Examples
    --------
    >>> key = ResultKey("h", 3, "oneshot", "exact:brute", {}, "v1")
    >>> row = StoredResult(key, "OPTIMAL", 4.0, 4.0, True, None, 0.1, {})
    >>> s = ResultStore(":memory:")
    >>> [r.value for r in stored_or_computed(s, [(key, None)], lambda: [row])]
    [4.0]
    >>> [r.value for r in stored_or_computed(s, [(key, None)], lambda: [])]  # now from the store
    [4.0]
    """
    got = stored_rows(store, wanted)
    if got is not None:
        return got
    rows = compute()
    if store is not None:
        for r in rows:
            store.put(r)
    return rows
