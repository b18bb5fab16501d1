"""The one error of grading itself: a usage error (never a failed check)."""

from __future__ import annotations

from ctxlab.errors import CtxlabError

__all__ = ["GradingUsageError"]


class GradingUsageError(CtxlabError):
    """``check_implementation`` or ``ctxlab grade`` was called wrongly (a usage error, not a
    failed check; ``ctxlab grade`` exits 2).

    ``option`` names what was wrong: ``lab``, a keyword such as ``build_context``,
    ``seconds``, or an option of ``ctxlab grade`` (``--jobs``, ``SUBMISSION``).
    """
