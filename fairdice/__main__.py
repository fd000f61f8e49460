"""`python -m fairdice`: the `fairdice` command."""

import sys

from .edges.cli import main

sys.exit(main())
