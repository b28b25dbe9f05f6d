"""``python -m app`` and the ``huichat`` command."""

import sys

from app.wiring import main

if __name__ == "__main__":
    sys.exit(main())
