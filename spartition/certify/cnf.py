"""A plain clause container and its DIMACS form.

Clauses are tuples of non-zero integers (DIMACS literals). The container
refuses tautologies and repeated literals, and it writes no unit clause: the
LRAT checker numbers the clauses of the file 1, 2, ... exactly as written,
and the proof must use the same numbers. CaDiCaL numbers original clauses in
the order they are added, but it propagates a unit clause as soon as it is
added and gives the clauses it derives from it ids in between, so an original
clause added after a unit would get a later id than its position in the file
(measured: a unit among 20 clauses shifted the last two). A unit ``(x)`` is
therefore written as the pair ``(x, a)``, ``(x, -a)`` with one shared
``anchor`` variable ``a``: the pair holds exactly when ``x`` does, whatever
``a`` is, so the formula has a model exactly when the one with units has.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from spartition.errors import SpartitionError

__all__ = ["CNF", "CNFError", "read_dimacs", "read_file_text"]


class CNFError(SpartitionError):
    """A malformed DIMACS file, or a clause the container refuses."""


@dataclass
class CNF:
    """A CNF formula under construction.

    Attributes
    ----------
    num_vars : int
        Variables are ``1 .. num_vars``.
    clauses : list of tuple of int
    comments : list of str
        Written as ``c`` lines at the top of the DIMACS file; not part of the formula.
    anchor : int or None
        The variable that turns unit clauses into pairs (module docstring).

    Examples
    --------
    >>> f = CNF()
    >>> a, b = f.new_var(), f.new_var()
    >>> f.add(a, -b); f.add(b)
    >>> print(f.to_dimacs(), end="")
    p cnf 3 3
    1 -2 0
    2 3 0
    2 -3 0
    """

    num_vars: int = 0
    clauses: list = field(default_factory=list)
    comments: list = field(default_factory=list)
    anchor: int | None = None

    def new_var(self) -> int:
        """A fresh variable."""
        self.num_vars += 1
        return self.num_vars

    def add(self, *lits: int) -> None:
        """Add the clause ``lits`` (at least one literal, no repeats, no complementary pair)."""
        if not lits:
            raise CNFError("empty clause")
        if len(set(lits)) != len(lits):
            raise CNFError(f"repeated literal in clause {lits}")
        if any(-x in lits for x in lits):
            raise CNFError(f"tautological clause {lits}")
        if any(x == 0 or abs(x) > self.num_vars for x in lits):
            raise CNFError(f"literal out of range in clause {lits}")
        if len(lits) == 1:
            if self.anchor is None:
                self.anchor = self.new_var()
            self.clauses.append((lits[0], self.anchor))
            self.clauses.append((lits[0], -self.anchor))
            return
        self.clauses.append(tuple(lits))

    def to_dimacs(self) -> str:
        """The DIMACS text: comments, the ``p cnf`` header, one clause per line."""
        lines = [f"c {c}" for c in self.comments]
        lines.append(f"p cnf {self.num_vars} {len(self.clauses)}")
        lines.extend(" ".join(map(str, c)) + " 0" for c in self.clauses)
        return "\n".join(lines) + "\n"

    def write(self, path) -> None:
        """Write the DIMACS file."""
        Path(path).write_text(self.to_dimacs())

    def digest(self) -> str:
        """SHA-256 of the formula (header and clauses, without comments)."""
        h = hashlib.sha256(f"p cnf {self.num_vars} {len(self.clauses)}\n".encode())
        for c in self.clauses:
            h.update((" ".join(map(str, c)) + " 0\n").encode())
        return h.hexdigest()


def read_file_text(path, error: type[Exception], what: str) -> str:
    """The text of the regular file ``path``; a device, FIFO or directory (``/dev/zero`` would never end),
    an unreadable file or one that is not UTF-8 raises ``error`` naming it."""
    p = Path(path)
    if not p.is_file():
        raise error(f"{what} {path} is not a regular file" if p.exists() else f"{what} {path} does not exist")
    try:
        return p.read_text()
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise error(f"cannot read {what} {path}: not UTF-8 text (byte {exc.start})") from None


def read_dimacs(path_or_text, *, is_text: bool = False) -> CNF:
    """Parse a DIMACS CNF file (clauses may span lines; ``c`` lines are comments).

    Raises
    ------
    CNFError
        On a missing or malformed header, a literal out of range, or a clause
        count that differs from the header, naming the line.
    """
    text = path_or_text if is_text else read_file_text(path_or_text, CNFError, "CNF file")
    f, header, current = CNF(), None, []
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("c"):
            if s.startswith("c ") and header is None:
                f.comments.append(s[2:])
            continue
        if s.startswith("p"):
            parts = s.split()
            if header is not None or len(parts) != 4 or parts[1] != "cnf":
                raise CNFError(f"line {lineno}: bad header {s!r}")
            try:
                header = (int(parts[2]), int(parts[3]))
            except ValueError:
                raise CNFError(f"line {lineno}: bad header {s!r}") from None
            f.num_vars = header[0]
            continue
        if header is None:
            raise CNFError(f"line {lineno}: clause before the 'p cnf' header")
        for tok in s.split():
            try:
                x = int(tok)
            except ValueError:
                raise CNFError(f"line {lineno}: not a literal: {tok!r}") from None
            if x == 0:
                f.clauses.append(tuple(current))
                current = []
            elif abs(x) > header[0]:
                raise CNFError(f"line {lineno}: literal {x} exceeds the {header[0]} variables of the header")
            else:
                current.append(x)
    if header is None:
        raise CNFError("no 'p cnf' header")
    if current:
        raise CNFError("the last clause is not terminated by 0")
    if len(f.clauses) != header[1]:
        raise CNFError(f"header announces {header[1]} clauses, the file has {len(f.clauses)}")
    return f
