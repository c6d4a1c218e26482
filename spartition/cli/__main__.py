import sys

from spartition.cli.main import main

sys.exit(main())
