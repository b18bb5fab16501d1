"""The one error of grading itself: a usage error (never a failed check)."""

from __future__ import annotations

from ctxlab.errors import CtxlabError


class GradingUsageError(CtxlabError):
    """``check_implementation`` or ``ctxlab grade`` called wrongly (``ctxlab grade`` exits
    2); ``option`` names what: ``lab``, a keyword, ``seconds``, ``--lab``, ``SUBMISSION``."""
