"""The one error of grading itself: a usage error (never a failed check)."""

from __future__ import annotations

from ctxlab.errors import CtxlabError

__all__ = ["GradingUsageError"]


class GradingUsageError(CtxlabError):
    """``check_implementation`` was called wrongly (a usage error, not a failed check).

    ``option`` names what was wrong: ``lab``, a keyword such as ``build_context``, or
    ``seconds``.
    """
