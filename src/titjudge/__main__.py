"""`python -m titjudge`: the same command line as the `titjudge` script."""

import sys

from titjudge.cli import main

sys.exit(main())
