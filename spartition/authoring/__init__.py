"""The authoring toolkit: what a DAG family and a schedule generator are written with.

The built-in kernels (the package ``spartition.families``) are written with
these helpers, and a kernel of one's own should be too, so that its node
names, attributes and summation trees follow the conventions every command
reads (docs/definitions.md sections 1 and 4, docs/plugins.md):

* :func:`new_dag` -- an empty DAG that remembers its family and parameters;
* :func:`add_node`, :func:`add_inputs` -- a node with its ``op``, ``entry`` and
  predecessors; an input matrix ``{name}_{row}_{col}``;
* :func:`add_sum`, :func:`add_named_sum`, :func:`chain_name`,
  :func:`value_node` -- sums as chains or balanced trees of binary ``add``
  nodes, and the names of their partial sums; :func:`with_sums` -- a
  family's ``sums="node"`` build (every sum one node, for the partial game);
* :class:`MoveRecorder` -- a schedule generator says what it needs red and
  what it keeps in slow memory, and only the moves the rules require are
  written; the schedule is then replayed by :func:`spartition.replay`.

Examples
--------
>>> from spartition.authoring import add_inputs, add_node, add_sum, new_dag
>>> G = new_dag("dot", {"n": 2})
>>> add_inputs(G, "x", 1, 2); add_inputs(G, "y", 1, 2)
>>> terms = [add_node(G, f"p_{i}", "mul", ("p", i), [f"x_0_{i}", f"y_0_{i}"]) for i in range(2)]
>>> add_sum(G, terms, "z", ("z",))
'z'
>>> sorted(G.predecessors("z")), G.number_of_nodes()
(['p_0', 'p_1'], 7)
"""

from spartition.authoring.moves import MoveRecorder
from spartition.authoring.nodes import add_inputs, add_node, paper_params
from spartition.authoring.sums import (
    SHAPES,
    SUMS,
    add_named_sum,
    add_sum,
    chain_name,
    chain_prefixes,
    check_shape,
    check_sums,
    sum_node_count,
    sums_saved,
    value_node,
    with_sums,
)
from spartition.core.dag import new_dag

__all__ = [
    "SHAPES",
    "SUMS",
    "MoveRecorder",
    "add_inputs",
    "add_named_sum",
    "add_node",
    "add_sum",
    "chain_name",
    "chain_prefixes",
    "check_shape",
    "check_sums",
    "new_dag",
    "paper_params",
    "sum_node_count",
    "sums_saved",
    "value_node",
    "with_sums",
]
