"""What the schedules of the published attention-forward algorithms share: the index and the move steps.

Three generators, each a function ``G, M -> Schedule`` that walks the
family's index space (never the networkx graph: only the names of the
``A_i_j`` nodes are looked up, to find the mask), and each documenting its
exact I/O in closed form:

* :func:`standard_forward` -- the textbook three-kernel algorithm that
  materialises S and A in slow memory, computing every entry from
  streamed operands (no reuse between entries);
* :func:`square_tiling_forward` -- Saha & Ye's small-cache algorithm: square
  tiles of side ``floor(sqrt(M / 4))``, A written to slow memory, then a
  tiled ``A V`` with the row scaling;
* :func:`flash_forward` -- FlashAttention's blocks ``B_c = ceil(M / 4d)``,
  ``B_r = min(B_c, d)``: K/V blocks outer, Q blocks inner, the running
  sums ``l_i`` and ``T_i_c`` stored and reloaded between K/V blocks.

On a masked (sparse) DAG every generator skips the block pairs with no
allowed ``(i, j)`` and loads only the rows a block uses: the dense
formulas are the special case of the masked ones. Every schedule computes
each node exactly once, so it is valid in both game variants.

Node names follow :mod:`spartition.families.attention.forward.dag`; sums must be chains (the order
parameters ``order`` and ``jorder`` are followed).

References
----------
Saha & Ye, "I/O Complexity of Attention, or How Optimal is FlashAttention?"
(ICML 2024): square tiling for M < d^2, Theta(min(n^2 d / sqrt(M), n^2 d^2 / M)).
Dao et al., "FlashAttention" (NeurIPS 2022), Algorithm 1 (block sizes) and
Algorithm 0 (standard attention).
"""

from __future__ import annotations

from spartition.families.attention.tiling import (
    AttentionIndex,
    chain_name,
    index_from_dag,
    index_from_params,
)

__all__ = ["ForwardIndex", "a_step", "finish_o", "finish_r", "forward_index", "forward_index_of", "mask_counts", "s_steps"]


FAMILY = "attention-forward"


class ForwardIndex(AttentionIndex):
    """The index structure of an attention-forward DAG with the names of its running sums."""

    __slots__ = ()

    def s(self, i, j, p):
        """Running value of S_i_j after the products at positions 0..p of the l order."""
        return chain_name(f"S_{i}_{j}", f"QK_{i}_{j}_{self.fseq[0]}", p, self.d)

    def l(self, i, t):
        """Running value of l_i after t + 1 allowed j."""
        r = self.rows[i]
        return chain_name(f"l_{i}", f"A_{i}_{r[0]}", t, len(r))

    def t(self, i, c, t):
        """Running value of T_i_c after t + 1 allowed j."""
        r = self.rows[i]
        return chain_name(f"T_{i}_{c}", f"AV_{i}_{r[0]}_{c}", t, len(r))


def forward_index(G, algorithm) -> ForwardIndex:
    return index_from_dag(G, FAMILY, algorithm, cls=ForwardIndex)


def forward_index_of(params) -> ForwardIndex:
    return index_from_params(params, cls=ForwardIndex)


def s_steps(rec, F, i, j, ps):
    """Compute the products QK_i_j_l at l-positions ``ps`` and fold them into S_i_j."""
    name, first, lseq = f"S_{i}_{j}", f"QK_{i}_{j}_{F.fseq[0]}", F.fseq
    for p in ps:
        rec.add_term(name, first, p, F.d, f"QK_{i}_{j}_{lseq[p]}")


def a_step(rec, F, i, j):
    """From the red S_i_j: compute A_i_j, store it and fold it into l_i."""
    A = f"A_{i}_{j}"
    rec.compute(A)
    rec.delete(F.s(i, j, F.d - 1))
    rec.store(A)
    t = F.rpos[i][j]
    if t:
        rec.fold(F.l(i, t), F.l(i, t - 1), A)


def finish_r(rec, F, i, store=True):
    """From the finished l_i: compute r_i (and write it to slow memory unless ``store`` is false)."""
    rec.compute(f"r_{i}")
    rec.delete(F.l(i, len(F.rows[i]) - 1))
    if store:
        rec.evict(f"r_{i}")


def finish_o(rec, F, i, cs):
    """From the red r_i and the finished T_i_c: compute and write O_i_c for ``c`` in ``cs``."""
    last = len(F.rows[i]) - 1
    for c in cs:
        rec.compute(f"O_{i}_{c}")
        rec.delete(F.t(i, c, last))
        rec.evict(f"O_{i}_{c}")


def mask_counts(F) -> tuple[int, int]:
    """The number of allowed pairs and of non-empty rows."""
    return sum(len(r) for r in F.rows), sum(1 for r in F.rows if r)
