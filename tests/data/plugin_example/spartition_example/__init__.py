"""An example kernel of spartition: the family of n pairwise products ``z_i = x_i * y_i``.

Every pebbling loads the 2n inputs and stores the n outputs, and nothing else
is needed once M >= 3: the optimum is 3n. The package registers one
:class:`~spartition.plugins.Kernel` record holding

* the family ``example-pairs`` (a :class:`~spartition.plugins.Family` record),
* the algorithm ``example-pairwise`` (load x_i, y_i, compute z_i, store it, free all three),
* the formula ``example-pairs-io`` (3n, explicit, a lower bound in every regime),
* the claim set ``example`` (the optimum meets the formula on a small grid),

behind the one entry point of its ``pyproject.toml``. The DAG and the
schedule are written with the authoring toolkit (:mod:`spartition.authoring`).
"""

from __future__ import annotations

from spartition.authoring import MoveRecorder, add_inputs, add_node, new_dag
from spartition.plugins import Algorithm, Claim, ClaimSet, Family, FamilyBounds, Formula, Kernel, Schedule
from spartition.study.claims import formula, optimum

__all__ = ["KERNEL", "pairs", "pairwise"]


def pairs(n: int = 2):
    """``n`` products ``z_i = x_i * y_i`` of independent inputs; ``3n`` nodes.

    Examples
    --------
    >>> sorted(pairs(1).edges)
    [('x_0_0', 'z_0'), ('y_0_0', 'z_0')]
    """
    if n < 1:
        raise ValueError("example-pairs needs n >= 1")
    G = new_dag("example-pairs", {"n": n})
    add_inputs(G, "x", 1, n)
    add_inputs(G, "y", 1, n)
    for i in range(n):
        add_node(G, f"z_{i}", "mul", ("z", i), [f"x_0_{i}", f"y_0_{i}"])
    return G


def pairwise(G, M: int, variant: str = "oneshot") -> Schedule:
    """One product at a time: load both operands, compute, store, free the three pebbles."""
    n = G.graph["params"]["n"]
    rec = MoveRecorder(M, [f"{m}_0_{i}" for m in "xy" for i in range(n)], variant)
    for i in range(n):
        x, y, z = f"x_0_{i}", f"y_0_{i}", f"z_{i}"
        rec.load_all((x, y))
        rec.compute(z)
        rec.store(z)
        rec.delete_all((x, y, z))
    return rec.schedule(method="example-pairwise")


def claims() -> ClaimSet:
    """The claim set, built when ``spartition claims example`` asks for it (its formula is looked up by name)."""
    return ClaimSet(
        name="example", paper="the example plug-in",
        claims=(Claim("example-io", "the optimum is at least 3 n", "the example plug-in", "example-pairs",
                      {"n": [1, 2]}, optimum(), ">=", formula("example-pairs-io"), Ms=(3, 4), sanity=True),),
    )


KERNEL = Kernel(
    name="example",
    families={"example-pairs": Family(build=pairs, node_count=lambda n: 3 * n)},
    algorithms=(Algorithm(name="example-pairwise", families=("example-pairs",), generate=pairwise,
                          io_formula=lambda p, M: 3 * p["n"], min_memory=lambda p: 3,
                          source="the example plug-in"),),
    formulas=(FamilyBounds(
        family="example-pairs",
        formulas=(Formula(name="example-pairs-io", families=("example-pairs",), kind="lower", expression="3 n",
                          source="the example plug-in", where="every input loaded, every output stored",
                          constants="explicit", regime="every M >= 3",
                          func=lambda p, M: 3 * p["n"], holds=lambda p, M: M >= 3),),
        paper_params=lambda params: {"n": params["n"]},
    ),),
    claims={"example": claims},
)
