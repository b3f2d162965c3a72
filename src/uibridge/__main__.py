"""`python -m uibridge serve [MODULE:AGENT] [--store URL] [--host H] [--port P]`: the development server."""

from __future__ import annotations

import sys

from .server.cli import main

if __name__ == '__main__':
    sys.exit(main())
