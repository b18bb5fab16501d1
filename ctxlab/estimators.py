"""Token estimators: functions that price one message (or a string) in tokens.

The chapter's budget uses "调用者提供的确定性估算器": a deterministic estimator the caller
supplies. Its worked example uses a table of costs (see :mod:`ctxlab.fixtures`); a real
agent uses a rule of thumb instead. :func:`chars_per_token` is that rule: about four
characters per token, rounded up.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from ctxlab.errors import ContextOptionError, EstimatorError
from ctxlab.json_values import thaw_json
from ctxlab.messages import (
    AssistantMessage,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    text_of,
)

__all__ = ["chars_per_token", "counted_characters"]


def counted_characters(value: Any) -> int:
    """How many characters :func:`chars_per_token` counts for a message or a string.

    * a string: its length;
    * a system message: its rendered prompt (content, then sections);
    * a user message (also the synthetic summary message) or a tool result: its text;
    * an assistant message: its text, plus each tool call's name and its arguments as
      compact JSON.
    """
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (SystemMessage, UserMessage, ToolResultMessage)):
        return len(text_of(value))
    if isinstance(value, AssistantMessage):
        total = 0
        for block in value.content:
            if isinstance(block, TextContent):
                total += len(block.text)
            elif isinstance(block, ToolCall):
                arguments = json.dumps(
                    thaw_json(block.arguments), ensure_ascii=False, separators=(",", ":")
                )
                total += len(block.name) + len(arguments)
        return total
    kind = type(value).__name__
    raise EstimatorError(kind, f"chars_per_token cannot price a {kind}; give it a message or a str")


def chars_per_token(n: int | float = 4) -> Callable[[Any], int]:
    """An estimator that prices ``ceil(characters / n)`` tokens (see
    :func:`counted_characters` for what is counted)."""
    if isinstance(n, bool) or not isinstance(n, (int, float)) or not math.isfinite(n) or n <= 0:
        raise ContextOptionError("n", f"chars_per_token: n must be a finite number > 0, got {n!r}")

    def estimate(value: Any) -> int:
        return math.ceil(counted_characters(value) / n)

    estimate.__name__ = f"chars_per_token_{n:g}"
    estimate.__qualname__ = estimate.__name__
    return estimate
