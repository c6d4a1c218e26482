"""``python -m spartition``: the command line (see :mod:`spartition.cli`)."""

import sys

try:
    from spartition.cli import main
except KeyboardInterrupt:  # Ctrl-C while importing: same exit as during a command
    print("spartition: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
