"""The ``spartition`` command line: one module per command group."""

from spartition.cli.main import main

__all__ = ["main"]
