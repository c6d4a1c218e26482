"""``python -m spartition``: the command line (see :mod:`spartition.cli.main`)."""

import sys

try:
    from spartition.cli.main import main
except KeyboardInterrupt:  # Ctrl-C while importing: the same exit as during a command
    if "--json" in sys.argv:
        print('{"error": "interrupted", "kind": "KeyboardInterrupt"}')
    print("spartition: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
