"""An example plug-in of spartition: the family of n pairwise products ``z_i = x_i * y_i``.

Every pebbling loads the 2n inputs and stores the n outputs, and nothing else
is needed once M >= 3: the optimum is 3n. The package registers

* the family ``example-pairs`` (a :class:`~spartition.plugins.Family` record),
* the algorithm ``example-pairwise`` (load x_i, y_i, compute z_i, store it, free all three),
* the formula ``example-pairs-io`` (3n, explicit, a lower bound in every regime),
* the claim set ``example`` (the optimum meets the formula on a small grid),

each under its entry-point group in ``pyproject.toml``.
"""

from __future__ import annotations

import networkx as nx

from spartition.plugins import Algorithm, Claim, ClaimSet, Family, FamilyBounds, Formula, Schedule
from spartition.study.claims import formula, optimum

__all__ = ["CLAIMS", "PAIRS", "PAIRS_BOUNDS", "PAIRWISE", "pairs"]


def pairs(n: int = 2) -> nx.DiGraph:
    """``n`` products ``z_i = x_i * y_i`` of independent inputs; ``3n`` nodes.

    Examples
    --------
    >>> sorted(pairs(1).edges)
    [('x0', 'z0'), ('y0', 'z0')]
    """
    if n < 1:
        raise ValueError("example-pairs needs n >= 1")
    G = nx.DiGraph(family="example-pairs", params={"n": n})
    for i in range(n):
        G.add_node(f"x{i}", op="input", entry=("x", i))
        G.add_node(f"y{i}", op="input", entry=("y", i))
        G.add_node(f"z{i}", op="mul", entry=("z", i))
        G.add_edges_from([(f"x{i}", f"z{i}"), (f"y{i}", f"z{i}")])
    return G


PAIRS = Family(build=pairs, node_count=lambda n: 3 * n)


def pairwise(G, M: int, variant: str = "oneshot") -> Schedule:
    """One product at a time: load both operands, compute, store, free the three pebbles."""
    n = G.graph["params"]["n"]
    moves = []
    for i in range(n):
        x, y, z = f"x{i}", f"y{i}", f"z{i}"
        moves += [("load", x), ("load", y), ("compute", z), ("store", z), ("delete", x), ("delete", y),
                  ("delete", z)]
    return Schedule(M, variant, moves, meta={"method": "example-pairwise"})


PAIRWISE = Algorithm("example-pairwise", ("example-pairs",), pairwise, io_formula=lambda p, M: 3 * p["n"],
                     min_memory=lambda p: 3, source="the example plug-in")

PAIRS_BOUNDS = FamilyBounds(
    family="example-pairs",
    formulas=(Formula("example-pairs-io", ("example-pairs",), "lower", "3 n", "the example plug-in",
                      "every input loaded, every output stored", "explicit", "every M >= 3",
                      func=lambda p, M: 3 * p["n"], holds=lambda p, M: M >= 3),),
    paper_params=lambda params: {"n": params["n"]},
)

def CLAIMS() -> ClaimSet:
    """The claim set, built when ``spartition claims example`` asks for it (its formula is looked up by name)."""
    return ClaimSet(
        name="example", paper="the example plug-in",
        claims=(Claim("example-io", "the optimum is at least 3 n", "the example plug-in", "example-pairs",
                      {"n": [1, 2]}, optimum(), ">=", formula("example-pairs-io"), Ms=(3, 4), sanity=True),),
    )
