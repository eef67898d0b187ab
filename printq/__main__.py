"""Allow ``python -m printq``."""

import sys

from printq.cli import main

sys.exit(main())
