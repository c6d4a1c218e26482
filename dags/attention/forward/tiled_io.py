"""The closed forms of :mod:`spartition.families.attention.forward.tiled`: its fast memory, its exact I/O and its tile space.

:func:`tiled_forward_need` is the fast memory a tiling needs, :func:`tiled_forward_io` the exact I/O of the schedule
it generates (checked against the replay by the tests), :func:`tiled_forward_space` the tile options that fit in M,
:func:`default_tiles` the options the generator takes when none are given, :func:`phase2_tiles` the ``T`` tiles of
``two-pass`` phase 2.
"""

from __future__ import annotations

import math
from functools import lru_cache

from spartition.errors import ParameterError
from spartition.families.attention.tiling import blocks, ceil_div, is_dense, require_fit

__all__ = ["MIN_M", "MODES", "RSF_NAME", "check_mode", "check_row_sums_first", "default_tiles", "first_pass_need",
           "first_pass_rows", "in_flight", "phase2_tiles", "row_sums_first_defaults", "row_sums_first_io",
           "row_sums_first_need", "row_sums_first_space", "run_rows", "tiled_forward_io", "tiled_forward_need",
           "tiled_forward_space"]

FAMILY = "attention-forward"
NAME = "tiled-forward"
MODES = ("spill", "resident", "two-pass")
#: The smallest M of any tiling (``a = b = 1``, mode ``spill``: S_i_j, l_i, T_i_c, a product and a new sum).
MIN_M = 5


def tiled_forward_need(d: int, a: int, b: int, mode: str = "spill", keep_q: bool = False, a2: int = 1, c2: int = 1,
                       run: int = 0) -> int:
    """Fast memory :func:`tiled_forward` uses with these tiles.

    The score tile ``a b``, the running row sums ``a``, the ``Q`` column
    (``a``, or ``a d`` kept) and the values in flight: an operand, a product
    and the new running sum, three while the operand (``K_j_l``, ``V_j_c``)
    still has rows to serve, two with one row per tile (``a = 1``), which
    drops the operand before its only fold; in ``spill`` the ``a`` running
    ``T_I_c`` later take the place of the ``Q`` column; ``resident`` adds
    ``a d`` running ``T``; ``two-pass`` phase 2 needs ``a2 c2 + a2`` and its
    values in flight (two when ``a2 = 1``, three otherwise), or with tiles
    of ``run`` entries ``run`` plus the most rows such a tile spans
    (:func:`run_rows`, one ``A`` entry each) and its values in flight.

    Examples
    --------
    >>> tiled_forward_need(4, 2, 3), tiled_forward_need(4, 2, 3, "resident"), tiled_forward_need(4, 2, 3, "two-pass", a2=2, c2=4)
    (13, 21, 13)
    >>> tiled_forward_need(2, 1, 1, "resident", keep_q=True)  # Q_i, T_i (2 each), l_i, S_i_j, a product, a new sum
    8
    >>> tiled_forward_need(4, 2, 1, "two-pass", keep_q=True, run=10)  # phase 2: 10 T entries over 3 rows, 3 in flight
    16
    """
    check_mode(mode)
    q = a * d if keep_q else a
    flight = in_flight(a)
    if mode == "spill":
        # the running T_I_c (a) take the place of the Q column, not of a kept Q_I
        return a * b + 2 * a + flight + (a * d if keep_q else 0)
    if mode == "resident":
        return a * b + a + q + a * d + flight
    if run:
        rows = run_rows(d, run)
        return max(a * b + a + q + flight, run + rows + in_flight(rows))
    return max(a * b + a + q + flight, a2 * c2 + a2 + in_flight(a2))


def run_rows(d: int, run: int) -> int:
    """The most rows of ``T`` (``d`` columns) that a tile of ``run`` consecutive row-major entries spans.

    Tiles start at the multiples of ``run``, so a tile starts at a column
    that is a multiple of ``gcd(run, d)``.

    Examples
    --------
    >>> run_rows(4, 10), run_rows(4, 11), run_rows(4, 8)  # starts at columns 0, 2 / 0, 1, 2, 3 / 0
    (3, 4, 2)
    """
    return max((s + run - 1) // d + 1 for s in range(0, d, math.gcd(run, d)))


def phase2_tiles(n: int, d: int, a2: int = 1, c2: int = 1, run: int = 0) -> list[list[tuple[int, int]]]:
    """The ``T`` tiles of ``two-pass`` phase 2, each a list of ``(i, c)`` in the order they are made.

    ``a2 x c2`` rectangles (row blocks outer), or with ``run > 0`` the runs
    of ``run`` consecutive entries of ``T`` in row-major order. A run that
    covers whole rows and part of the next (``d < run``, ``run`` not a
    multiple of ``d``) loads ``A`` for one more row than a rectangle of
    whole rows and ``V`` for the same columns, and fits where the next
    rectangle does not: at ``d = 4, M = 16`` the ``2 x 4`` rectangles load
    ``6`` operand entries per key for ``8`` entries of ``T``, runs of ``10``
    load ``7`` for ``10``.

    Examples
    --------
    >>> phase2_tiles(2, 2, a2=1, c2=2)
    [[(0, 0), (0, 1)], [(1, 0), (1, 1)]]
    >>> [len(t) for t in phase2_tiles(5, 4, run=10)], phase2_tiles(5, 4, run=10)[1][:3]
    ([10, 10], [(2, 2), (2, 3), (3, 0)])
    """
    if run:
        cells = [(i, c) for i in range(n) for c in range(d)]
        return [cells[k:k + run] for k in range(0, len(cells), run)]
    return [[(i, c) for i in I for c in C] for I in blocks(range(n), a2) for C in blocks(range(d), c2)]


def in_flight(rows: int) -> int:
    """Values in flight beside a tile of ``rows`` rows: operand, product and new sum, or two when one row reads the operand."""
    return 3 if rows > 1 else 2


def check_mode(mode: str) -> None:
    """Raise ValueError on a mode not in :data:`MODES`."""
    if mode not in MODES:
        raise ValueError(f"{NAME}: unknown mode {mode!r}; expected one of {MODES}")


def tiled_forward_io(params, M: int, a=None, b=None, mode=None, keep_q=False, a2=1, c2=1, run=0) -> int | None:
    """Closed-form I/O of :func:`tiled_forward` on a dense DAG (``None`` for a masked one).

    With ``N_I = ceil(n / a)``, ``N_J = ceil(n / b)``:

    * ``Q``: ``n d`` if kept, else ``n d N_J``; ``K``: ``n d N_I``; ``O``: ``n d``;
    * ``spill`` / ``resident``: ``V`` ``n d N_I``; ``spill`` adds
      ``2 n d (N_J - 1)`` loads and stores of the running ``T``;
    * ``two-pass``: ``A`` stored (``n^2``) and ``r`` stored (``n``); each
      phase-2 tile (:func:`phase2_tiles`) of ``R`` rows and ``C`` columns
      loads ``n R`` entries of ``A``, ``R`` of ``r`` and ``n C`` of ``V``: with
      ``a2 x c2`` rectangles ``A`` and ``r`` are loaded ``ceil(d / c2)``
      times and ``V`` ``ceil(n / a2)`` times.

    Without tile options the defaults of :func:`tiled_forward` are used.

    Examples
    --------
    >>> tiled_forward_io({"n": 4, "d": 2}, 13, a=2, b=3)   # 8*2 + 8*2 + 8*2 + 2*8*1 + 8
    72
    >>> two = dict(a=2, b=1, mode="two-pass", keep_q=True)
    >>> tiled_forward_io({"n": 32, "d": 4}, 16, **two, a2=2, c2=4), tiled_forward_io({"n": 32, "d": 4}, 16, **two, run=10)
    (6464, 6278)
    """
    if not is_dense(params):
        return None
    n, d = int(params["n"]), int(params["d"])
    if a is None:
        a, b, mode, keep_q, a2, c2, run = default_tiles(params, M)
    mode = mode or "spill"
    ni, nj = ceil_div(n, a), ceil_div(n, b)
    q = n * d if keep_q else n * d * nj
    io = q + n * d * ni + n * d
    if mode == "spill":
        return io + n * d * ni + 2 * n * d * (nj - 1)
    if mode == "resident":
        return io + n * d * ni
    return io + n * n + n + _phase2_loads(n, d, a2, c2, run)


def _phase2_loads(n, d, a2, c2, run):
    """Loads of dense phase 2: ``(n + 1) R + n C`` for each tile of :func:`phase2_tiles` (``R`` rows, ``C`` columns).

    A run of ``E`` entries covers ``min(d, E)`` columns; without the lists of
    cells, since the tile searches rank thousands of options.
    """
    if not run:
        return (n + 1) * n * ceil_div(d, c2) + n * d * ceil_div(n, a2)
    out = 0
    for start in range(0, n * d, run):
        end = min(start + run, n * d)
        out += (n + 1) * ((end - 1) // d - start // d + 1) + n * min(d, end - start)
    return out


def tiled_forward_space(params, M: int) -> list[dict]:
    """Every tiling that fits in ``M``: for each mode, ``keep_q`` and ``a``, the largest ``b`` (and phase-2 tiles).

    A larger ``b`` (``a2``) never costs more I/O at the same ``a`` (``c2``),
    so only the largest that fits is listed; ``b`` and ``a2`` stop at ``n``.
    Phase-2 runs (:func:`phase2_tiles`) are listed for the ``d`` longest
    runs that fit, except multiples of ``d`` (rectangles of whole rows).

    Examples
    --------
    >>> space = tiled_forward_space({"n": 4, "d": 2}, 8)
    >>> space[0], len(space)
    ({'a': 1, 'b': 4, 'mode': 'spill', 'keep_q': False, 'a2': 1, 'c2': 1}, 10)
    """
    n, d = int(params["n"]), int(params["d"])
    out = []
    phase2 = []
    for c2 in range(1, d + 1):
        a2 = min(n, (M - 3) // (c2 + 1))
        if a2 < 2 and c2 + 1 + in_flight(1) <= M:
            a2 = 1
        if a2 >= 1:
            phase2.append({"a2": a2, "c2": c2})
    fitting = [r for r in range(2, min(n * d, M) + 1) if r + run_rows(d, r) + in_flight(run_rows(d, r)) <= M]
    if fitting:
        phase2.extend({"a2": 1, "c2": 1, "run": r} for r in range(max(2, fitting[-1] - d + 1), fitting[-1] + 1)
                      if r % d and r in fitting)
    for mode in MODES:
        for keep_q in (False, True):
            for a in range(1, n + 1):
                fixed = (tiled_forward_need(d, a, 0, mode, keep_q) if mode != "two-pass"
                         else a + (a * d if keep_q else a) + in_flight(a))
                b = min(n, (M - fixed) // a)
                if b < 1:
                    break
                if mode == "two-pass":
                    out.extend({"a": a, "b": b, "mode": mode, "keep_q": keep_q, **p2} for p2 in phase2)
                else:
                    out.append({"a": a, "b": b, "mode": mode, "keep_q": keep_q, "a2": 1, "c2": 1})
    return out


def default_tiles(params, M) -> tuple:
    """The options :func:`~spartition.families.attention.forward.tiled.tiled_forward` takes when given none: on a dense DAG the
    least closed-form I/O, on a masked one the widest near-square ``spill`` tiling."""
    space = tiled_forward_space(params, M)
    if not space:
        require_fit(NAME, M, MIN_M, "tiles of one row and one key")
    if not is_dense(params):
        # without a closed form: the widest spill tiling of near-square shape
        best = min((o for o in space if o["mode"] == "spill" and not o["keep_q"]), key=lambda o: (abs(o["a"] - o["b"]), -o["a"] * o["b"]))
    else:
        best = min(space, key=lambda o: (tiled_forward_io(params, M, **o), o["a"], o["b"]))
    return best["a"], best["b"], best["mode"], best["keep_q"], best["a2"], best["c2"], best.get("run", 0)


RSF_NAME = "row-sums-first-forward"


def first_pass_rows(n: int, a: int, h: int) -> list[int]:
    """The rows whose row sums :func:`~spartition.families.attention.forward.tiled.row_sums_first_forward` makes first:
    every row of a block of ``a`` but its first ``h``.

    >>> first_pass_rows(8, 3, 2)
    [2, 5]
    """
    return [i for I in blocks(range(n), a) for i in I[h:]]


def check_row_sums_first(a, b, h, a0, b0, keep_q0=True, keep_k0=False) -> None:
    """Raise :class:`ParameterError` unless the tiles are whole numbers with ``a, b, a0, b0 >= 1`` and ``0 <= h < a``
    (``b`` and ``h`` must come with ``a``: options given without ``a`` would be replaced by the defaults), and a
    first pass that keeps a row of ``K`` (``keep_k0``) has ``b0 = 1`` and keeps ``Q``."""
    if keep_k0 and (b0 != 1 or not keep_q0):
        raise ParameterError(f"{RSF_NAME}: keep_k0 makes one score at a time from kept rows of Q and K, so it needs "
                             f"b0 = 1 and keep_q0 (got b0={b0}, keep_q0={keep_q0})")
    if a is None:
        if b is not None or h is not None:
            raise ParameterError(f"{RSF_NAME}: b and h need a (got b={b}, h={h} without a)")
        return
    if b is None or h is None:
        raise ParameterError(f"{RSF_NAME}: a needs b and h (got a={a}, b={b}, h={h})")
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (a, b, h, a0, b0)) or min(a, b, a0, b0) < 1 \
            or not 0 <= h < a:
        raise ParameterError(f"{RSF_NAME}: tile sizes must be integers >= 1 and 0 <= h < a, "
                             f"got a={a}, b={b}, h={h}, a0={a0}, b0={b0}")


def first_pass_need(d: int, a0: int, b0: int, keep_q0: bool, keep_k0: bool = False) -> int:
    """Fast memory of the first pass: its score tile, running row sums, ``Q`` column or kept rows, values in flight.

    With ``keep_k0`` the tile is one score at a time, made whole from the
    kept rows ``Q_i`` and ``K_j``: ``a0`` running sums, ``a0 d + d`` kept
    entries, and 3 in flight (a running score, a product, the next running
    score; then ``A`` and a new running sum).

    >>> first_pass_need(4, 4, 2, True)   # 8 S + 4 l + 16 Q + 3
    31
    >>> first_pass_need(4, 5, 1, True, keep_k0=True)   # 5 l + 20 Q + 4 K + 3: five rows where streaming K fits four
    32
    """
    if keep_k0:
        return a0 + a0 * d + d + 3
    return a0 * b0 + a0 + (a0 * d if keep_q0 else a0) + in_flight(a0)


def row_sums_first_need(d: int, a: int, b: int, h: int, keep_q: bool = True, a0: int = 1, b0: int = 1,
                        keep_q0: bool = True, has_first_pass: bool = True, keep_k0: bool = False) -> int:
    """Fast memory of :func:`~spartition.families.attention.forward.tiled.row_sums_first_forward`.

    The fused pass holds what ``tiled-forward``'s ``resident`` mode holds,
    except the running row sums of the rows whose sums the first pass made:
    ``a b + h + (a d or a) + a d`` and the values in flight (3, or 2 when
    ``a = 1``). The first pass, where it has rows, needs
    :func:`first_pass_need`, as ``two-pass`` phase 1 does.

    Examples
    --------
    >>> row_sums_first_need(4, 3, 1, 2, a0=4)   # 3 S + 2 l + 12 Q + 12 T + 3; first pass 4 S + 4 l + 16 Q + 3
    32
    >>> tiled_forward_need(4, 3, 1, "resident", keep_q=True)   # every row's sum in the fused pass: one more
    33
    """
    fused = a * b + h + (a * d if keep_q else a) + a * d + in_flight(a)
    return max(fused, first_pass_need(d, a0, b0, keep_q0, keep_k0)) if has_first_pass else fused


def row_sums_first_io(params, M: int, a=None, b=None, h=None, keep_q=True, a0=1, b0=1, keep_q0=True,
                      keep_k0=False) -> int | None:
    """Closed-form I/O of :func:`~spartition.families.attention.forward.tiled.row_sums_first_forward` (dense only).

    With ``n_0`` rows in the first pass (:func:`first_pass_rows`) and ``N_I =
    ceil(n / a)``: the first pass loads ``Q`` of its rows (``n_0 d``, times
    ``ceil(n / b0)`` unless kept) and all of ``K`` once per row block
    (``n d ceil(n_0 / a0)``) and stores ``n_0`` entries of ``r``; the fused pass
    loads ``Q`` (``n d``, times ``ceil(n / b)`` unless kept), ``K`` and ``V``
    once per row block (``2 n d N_I``) and the ``n_0`` entries of ``r``, and
    stores ``O`` (``n d``). ``keep_k0`` changes no I/O: each entry of ``K``
    is still loaded once per first-pass block.

    Examples
    --------
    >>> # n = 32, d = 4, M = 32: 10 rows first in 3 blocks (40 + 3 * 128 + 10), 11 fused blocks (128 + 2 * 11 * 128 + 10 + 128)
    >>> row_sums_first_io({"n": 32, "d": 4}, 32, a=3, b=1, h=2, a0=4, b0=1)
    3516
    >>> # the same with rows of K kept in the first pass: blocks of 5 rows, 2 reads of K (40 + 2 * 128 + 10)
    >>> row_sums_first_io({"n": 32, "d": 4}, 32, a=3, b=1, h=2, a0=5, b0=1, keep_k0=True)
    3388
    """
    check_row_sums_first(a, b, h, a0, b0, keep_q0, keep_k0)
    if not is_dense(params):
        return None
    n, d = int(params["n"]), int(params["d"])
    if a is None:
        a, b, h, keep_q, a0, b0, keep_q0, keep_k0 = row_sums_first_defaults(params, M)
    n0 = len(first_pass_rows(n, a, h))
    first_pass = (n0 * d * (1 if keep_q0 else ceil_div(n, b0)) + n * d * ceil_div(n0, a0) + n0) if n0 else 0
    fused = n * d * (1 if keep_q else ceil_div(n, b)) + 2 * n * d * ceil_div(n, a) + n0 + n * d
    return first_pass + fused


def row_sums_first_space(params, M: int) -> list[dict]:
    """Every tiling of :func:`~spartition.families.attention.forward.tiled.row_sums_first_forward` worth trying in ``M``.

    For each ``a`` and ``keep_q``: with ``Q`` kept (``b`` then changes no
    I/O) the most rows ``h`` folding their sums that fit with ``b = 1``;
    without, every ``h`` with its largest ``b``. ``h < a`` (``h = a`` is
    ``tiled-forward``'s ``resident`` mode). Each with the first pass's
    tiling of least I/O for its rows. Dense DAGs only (none for a masked one).

    Examples
    --------
    >>> space = row_sums_first_space({"n": 32, "d": 4}, 32)
    >>> min(space, key=lambda o: row_sums_first_io({"n": 32, "d": 4}, 32, **o))
    {'a': 3, 'b': 1, 'h': 2, 'keep_q': True, 'a0': 5, 'b0': 1, 'keep_q0': True, 'keep_k0': True}
    """
    if not is_dense(params):
        return []
    n, d = int(params["n"]), int(params["d"])
    out = []
    for keep_q in (True, False):
        for a in range(1, n + 1):
            fits = [(h, b) for h in range(a - 1, -1, -1)
                    if (b := min(n, (M - row_sums_first_need(d, a, 0, h, keep_q, has_first_pass=False)) // a)) >= 1]
            if not fits:
                break  # the need grows with a
            for h, b in fits[:1] if keep_q else fits:
                tiles = _first_pass_tiles(n, d, M, len(first_pass_rows(n, a, h)))
                if tiles is not None:
                    out.append({"a": a, "b": b, "h": h, "keep_q": keep_q,
                                **dict(zip(("a0", "b0", "keep_q0", "keep_k0"), tiles))})
    return out


@lru_cache(maxsize=1 << 12)
def _first_pass_tiles(n, d, M, n0):
    """The first pass's tiling ``(a0, b0, keep_q0, keep_k0)`` of least I/O for ``n0`` rows (``None`` if none fits)."""
    best = None
    for keep_q0 in (True, False):
        for a0 in range(1, max(n0, 1) + 1):
            b0 = min(n, (M - first_pass_need(d, a0, 0, keep_q0)) // a0)
            if b0 < 1:
                break
            io = n0 * d * (1 if keep_q0 else ceil_div(n, b0)) + n * d * ceil_div(n0, a0)
            if best is None or io < best[0]:
                best = (io, (a0, b0, keep_q0, False))
    # rows of K kept: the same I/O as streaming K with Q kept, taken where it fits more rows
    for a0 in range(1, max(n0, 1) + 1):
        if first_pass_need(d, a0, 1, True, keep_k0=True) > M:
            break
        io = n0 * d + n * d * ceil_div(n0, a0)
        if best is None or io < best[0]:
            best = (io, (a0, 1, True, True))
    return None if best is None else best[1]


def row_sums_first_defaults(params, M) -> tuple:
    """The options of least closed-form I/O on the dense DAG of ``params``'s ``n`` and ``d`` (a masked DAG takes the
    dense DAG's tiling)."""
    dense = {"n": params["n"], "d": params["d"]}
    space = row_sums_first_space(dense, M)
    if not space:
        require_fit(RSF_NAME, M, max(MIN_M, int(params["d"]) + 4), "a fused row block of one row and one key")
    best = min(space, key=lambda o: (row_sums_first_io(dense, M, **o), o["a"], o["b"]))
    return (best["a"], best["b"], best["h"], best["keep_q"], best["a0"], best["b0"], best["keep_q0"],
            best["keep_k0"])
