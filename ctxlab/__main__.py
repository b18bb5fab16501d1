"""``python -m ctxlab``: the command line (see :mod:`ctxlab.cli`)."""

from __future__ import annotations

import sys

from ctxlab.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
