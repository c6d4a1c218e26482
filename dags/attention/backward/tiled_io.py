"""The closed forms of :mod:`spartition.families.attention.backward.tiled`: its fast memory, its exact I/O and its tile space.

:func:`tiled_backward_need` is the fast memory a tiling needs, :func:`tiled_backward_io` the exact I/O of the
schedule it generates (checked against the replay by the tests), :func:`tiled_backward_space` the tile options
that fit in M, :func:`default_tiles` the options the generator takes when none are given.
"""

from __future__ import annotations

from spartition.families.attention.tiling import (
    ceil_div,
    is_dense,
    require_fit,
)

__all__ = ["MIN_M", "default_tiles", "tiled_backward_io", "tiled_backward_need", "tiled_backward_space"]


NAME = "tiled-backward"


#: The smallest M of any tiling (``a = b = 1`` with ``spill``); every schedule of the DAG needs 3.
MIN_M = 4


def tiled_backward_need(d: int, a: int, b: int, spill: bool = True, keep_dq: bool = False, keep_ld: bool = False,
                        outer: str = "rows", keep_kv: bool = False, keep_dkv: bool = False,
                        keep_q: bool = False) -> int:
    """Fast memory :func:`tiled_backward` uses with ``a x b`` tiles.

    Each streamed stage holds the resident tile (``ab``), one column of the
    tile (``a`` or ``b`` entries) and up to three values in flight (the
    streamed operand, the product and the new running sum); the streamed
    operand is deleted before the fold when it has a single user, so the
    stage needs one less then. Without ``spill`` the ``P`` tile stays
    resident beside the ``dP`` tile (another ``ab``) and ``dV``, ``dP``
    share one pass. ``keep_dq`` keeps the
    ``a d`` running ``dQ_I`` across the row block, ``keep_ld`` the ``2a``
    values ``l_I`` and ``D_I``. The ``D_i`` computation needs 4. With key
    blocks outer (``outer="keys"``), ``keep_kv`` and ``keep_dkv`` keep the
    ``2 b d`` entries ``K_J, V_J`` and the ``2 b d`` running ``dK_J, dV_J``
    across the key block, and ``keep_q`` (either order) the ``a d`` entries
    ``Q_I`` from the ``S`` stage of a tile to its ``dK`` stage; each is
    counted beside every stage (the streamed entry or running sum a stage
    already counts is then counted twice: never below what the tile uses).

    Examples
    --------
    >>> tiled_backward_need(2, 1, 1), tiled_backward_need(2, 1, 1, spill=False), tiled_backward_need(2, 3, 3)
    (4, 5, 15)
    >>> tiled_backward_need(2, 2, 3, keep_dq=True)
    16
    >>> tiled_backward_need(4, 1, 3, spill=False, outer="keys", keep_kv=True, keep_dkv=True, keep_q=True)
    62

    (the unspilled tile's 10, then ``K_J, V_J`` 24, ``dK_J, dV_J`` 24, ``Q_I`` 4)
    """
    _check_outer(outer, keep_dq, keep_ld, keep_kv, keep_dkv)
    held = 2 * b * d * (keep_kv + keep_dkv) + a * d * keep_q
    t = a * b
    wa = 3 if a > 1 else 2  # in flight when a streamed operand has a (b) users
    wb = 3 if b > 1 else 2
    # without the spill, P and the dP tile are resident while dO_I_c serves both dP and dV
    dp = t + a + wa if spill else 2 * t + a + (2 if t == 1 else 3)
    stages = [4, t + a + wa, t + b + wb, dp, t + 2]
    ld = 2 * a if keep_ld else 0
    if keep_dq:
        return max(max(stages) + a * d, t + a * d + wa) + ld + held
    return max(stages + [t + a + wa]) + ld + held


def _check_outer(outer: str, keep_dq: bool, keep_ld: bool, keep_kv: bool, keep_dkv: bool) -> None:
    """What stays resident across which loop: ``keep_dq`` and ``keep_ld`` need row blocks outer, ``keep_kv`` and
    ``keep_dkv`` key blocks."""
    if outer not in ("rows", "keys"):
        raise ValueError(f"{NAME}: outer must be 'rows' or 'keys', got {outer!r}")
    if outer == "rows" and (keep_kv or keep_dkv):
        raise ValueError(f"{NAME}: keep_kv and keep_dkv keep a key block resident and need outer='keys'")
    if outer == "keys" and (keep_dq or keep_ld):
        raise ValueError(f"{NAME}: keep_dq and keep_ld keep a row block resident and need outer='rows'")


def tiled_backward_io(params, M: int, a=None, b=None, spill=None, keep_dq=False, keep_ld=False, outer="rows",
                      keep_kv=False, keep_dkv=False, keep_q=False) -> int | None:
    """Closed-form I/O of :func:`tiled_backward` on a dense DAG (``None`` for a masked one).

    With ``N_I = ceil(n / a)`` row blocks and ``N_J = ceil(n / b)`` key
    blocks: per feature, a row-sized column is moved ``6`` times per tile
    (``Q`` in ``S`` and ``dK``, ``dO`` in ``dV`` and ``dP``, the running
    ``dQ`` loaded and stored) and a key-sized column ``7`` times (``K`` in
    ``S`` and ``dQ``, ``V``, the running ``dV`` and ``dK`` loaded and
    stored), less the loads of running sums that do not exist yet; ``l_i``
    and ``D_i`` are loaded once per tile, ``D`` costs ``2 n d + n`` to make:

    ``Q = 6 d n N_J + 7 d n N_I - d n + 2 n N_J + n + 2 n^2 [spill]``

    less ``d n N_J`` without ``spill``, where one pass over ``dO_I_c`` serves
    ``dP`` and ``dV``;
    with ``keep_dq`` the ``dQ`` traffic is its ``n d`` final stores
    (``- 2 d n N_J + 2 d n``), with ``keep_ld`` ``l`` is loaded once and ``D``
    never leaves fast memory (``- 2 n N_J``). The loop order alone moves
    the same entries. With key blocks outer, ``keep_kv`` loads ``K`` and
    ``V`` once (``- 3 d n N_I + 2 d n``) and ``keep_dkv`` stores each ``dK``,
    ``dV`` entry once and never loads one (``- 4 d n N_I + 4 d n``);
    ``keep_q`` loads ``Q`` once per tile instead of twice (``- d n N_J``).

    Examples
    --------
    >>> tiled_backward_io({"n": 2, "d": 1}, 4, a=1, b=1, spill=True)   # 24 + 28 - 2 + 8 + 2 + 8
    68
    >>> tiled_backward_io({"n": 2, "d": 1}, 9, a=1, b=1, spill=True, outer="keys", keep_kv=True)  # K: 8 -> 2, V: 4 -> 2
    60
    """
    if not is_dense(params):
        return None
    n, d = int(params["n"]), int(params["d"])
    if a is None:
        return tiled_backward_io(params, M, **default_tiles(params, M))
    _check_outer(outer, keep_dq, keep_ld, keep_kv, keep_dkv)
    spill = True if spill is None else spill
    ni, nj = ceil_div(n, a), ceil_div(n, b)
    dq = d * n if keep_dq else 2 * d * n * nj - d * n  # final stores only, or the running dQ_I each tile
    ld = n if keep_ld else 2 * n * nj + n  # l_i loaded once, or l_i and D_i once per tile and D_i stored
    # Q in S and dK, dO in dP and (unless the dV and dP passes are one) in dV
    rows = (4 if spill else 3) * d * n * nj - (d * n * nj if keep_q else 0)
    keys = 7 * d * n * ni  # K in S and dQ, V, the running dV and dK loaded and stored
    keys -= (3 * d * n * ni - 2 * d * n if keep_kv else 0) + (4 * d * n * ni - 4 * d * n if keep_dkv else 0)
    return rows + keys + ld + dq + (2 * n * n if spill else 0)


def tiled_backward_space(params, M: int) -> list[dict]:
    """Every tiling that fits in ``M``: for each loop order, choice of what stays resident and ``a``, the largest ``b``.

    Row blocks outer with each ``spill``, ``keep_dq``, ``keep_ld`` (then
    each with ``keep_q``); then key blocks outer (``outer="keys"``) with each
    ``spill``, ``keep_q`` and ``keep_kv`` or ``keep_dkv`` or both (without
    either, the key order moves exactly what the row order does). A larger ``b`` never costs more I/O at the
    same ``a``, so only the largest that fits is listed; ``a`` and ``b``
    stop at ``n``.

    Examples
    --------
    >>> space = tiled_backward_space({"n": 4, "d": 2}, 7)
    >>> space[:2], len(space)
    ([{'a': 1, 'b': 2, 'spill': True, 'keep_dq': False, 'keep_ld': False}, {'a': 2, 'b': 1, 'spill': True, 'keep_dq': False, 'keep_ld': False}], 9)
    >>> [o for o in tiled_backward_space({"n": 4, "d": 2}, 12) if o.get("outer") == "keys"][0]
    {'a': 1, 'b': 1, 'spill': True, 'outer': 'keys', 'keep_kv': False, 'keep_dkv': True, 'keep_q': False}
    """
    n, d = int(params["n"]), int(params["d"])
    rows = [{"keep_dq": q, "keep_ld": ld} for q in (False, True) for ld in (False, True)]
    rows += [{**kind, "keep_q": True} for kind in rows]
    # key blocks outer move what row blocks outer move unless they keep the key block: only those are listed
    keys = [{"outer": "keys", "keep_kv": kv, "keep_dkv": dkv, "keep_q": q}
            for kv in (False, True) for dkv in (False, True) for q in (False, True) if kv or dkv]
    out = []
    for kinds in (rows, keys):
        for spill in (True, False):
            for kind in kinds:
                for a in range(1, n + 1):
                    fits = [b for b in range(1, n + 1) if tiled_backward_need(d, a, b, spill, **kind) <= M]
                    if not fits:
                        break
                    out.append({"a": a, "b": max(fits), "spill": spill, **kind})
    return out


def default_tiles(params, M) -> dict:
    space = tiled_backward_space(params, M)
    if not space:
        require_fit(NAME, M, MIN_M, "tiles of one row and one key, P spilled")
    if not is_dense(params):
        # without a closed form: the widest spilling tiling of near-square shape, row blocks outer, nothing kept
        plain = [o for o in space if o["spill"] and o.get("outer", "rows") == "rows"
                 and not any(o.get(k) for k in ("keep_dq", "keep_ld", "keep_q"))]
        best = min(plain, key=lambda o: (abs(o["a"] - o["b"]), -o["a"] * o["b"]))
    else:
        best = min(space, key=lambda o: (tiled_backward_io(params, M, **o), o["a"], o["b"]))
    return best
