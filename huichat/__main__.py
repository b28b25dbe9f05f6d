"""``python -m huichat``: the same as the ``huichat`` command."""

import sys

from huichat.app.wiring import main

sys.exit(main())
