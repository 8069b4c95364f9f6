"""Entry point for ``python -m alloclab``."""

import sys

from alloclab.cli import main

sys.exit(main())
