"""S-partitions: certificates and their checker, the minimum partition and the class capacity, and the I/O lower bounds they yield.

Where things are (each module imports only those above it in this list):

- :mod:`~spartition.partition.dominators`: smallest dominators, minimum sets, paths avoiding a set (node indices);
- :mod:`~spartition.partition.certificate`: the :class:`~spartition.partition.certificate.Partition` certificate and
  :func:`~spartition.partition.certificate.check_partition`;
- :mod:`~spartition.partition.weights`: the DAG partitions are computed on, and node weights by selector;
- :mod:`~spartition.partition.sets`: one candidate class: :class:`~spartition.partition.sets.CapacityResult`, the
  ``restrict`` relaxation, the check of a found set;
- :mod:`~spartition.partition.encoding`, :mod:`~spartition.partition.cuts`: the CP-SAT model steps (no solver);
- :mod:`~spartition.partition.product_shape`, :mod:`~spartition.partition.product`: the exact matrix-product
  decomposition of the capacity;
- :mod:`~spartition.partition.capacity`: the class capacity U(X) (:func:`~spartition.partition.capacity.class_capacity`);
- :mod:`~spartition.partition.minimum`: the minimum partition P(S) (:func:`~spartition.partition.minimum.min_partition`);
- :mod:`~spartition.partition.brute`: both by exhaustive enumeration, for tiny DAGs;
- :mod:`~spartition.partition.lower_bounds`: the I/O lower bounds;
- :mod:`~spartition.partition.designation`: the designated compute events of a schedule with recomputation and the
  designation lemma that segment counts valid in the standard game rest on (imports only the game).
"""
