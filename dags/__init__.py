"""DAG families for spartition: classic kernels and attention, with their published algorithms.

Families are found by the engine through the ``spartition.families`` entry
points (see ``pyproject.toml``), never imported directly.
"""

if __name__ != "spartition.families":
    # imported by its folder name (the repository root on sys.path): a second copy of every
    # family module, with registries and record classes of its own, would follow
    raise ImportError(f"the folder dags/ is the package spartition.families; import that, not {__name__!r}")
