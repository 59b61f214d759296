"""``python -m dpledger``: the same command line as the ``dpledger`` script."""

import sys

from .cli import main

sys.exit(main())
