"""``python -m crew.cli``: the ``crew`` command."""

import sys

from crew.cli import main

sys.exit(main())
