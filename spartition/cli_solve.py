"""Command-line commands (placeholder until the feature lands)."""


def register(sub) -> None:
    """Add this module's commands to the ``spartition`` parser."""
