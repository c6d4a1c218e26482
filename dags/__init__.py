"""DAG families for spartition: classic kernels and attention, with their published algorithms.

Families are found by the engine through the ``spartition.families`` entry
points (see ``pyproject.toml``), never imported directly.
"""
