"""``python -m conformance.cli``: the ``thousand`` command."""

import sys

from conformance.cli import main

sys.exit(main())
