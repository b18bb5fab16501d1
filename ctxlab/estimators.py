"""Token estimators: functions that price one message (or a string) in tokens.

The chapter's budget uses "调用者提供的确定性估算器": a deterministic estimator the caller
supplies. Its worked example uses a table of costs (see :mod:`ctxlab.fixtures`); real
tokenizers are left to the provider layer. :func:`chars_per_token` is a ctxlab extension, a
simple deterministic rule that is not a real tokenizer and that the chapter does not
mention: ``ceil(characters / n)``, by default ``n = 4``.

What is counted (:func:`counted_characters`):

=====================  ==================================================================
a ``str``              its length
system message         its rendered prompt: content, then each section, joined by a blank
                       line (exactly the text :func:`~ctxlab.messages.text_of` gives)
user message           the length of each text block, summed (the synthetic summary
                       message of a compaction is a user message: its summary text)
assistant message      each text block, plus each tool call's ``name`` and its
                       ``arguments`` written as compact JSON (``{"path":"a.py"}``)
tool result            the length of each text block, summed
=====================  ==================================================================

Blocks are summed, not joined: no separator character is invented between two blocks.
Bookkeeping that is never sent to a model as text (ids, timestamps, ``usage``,
``details``, ``rawArguments``) is not counted. "Characters" are Python characters (code
points); the TypeScript course counts UTF-16 units, which differ only for characters
outside the Basic Multilingual Plane, such as most emoji.

Example: the chapter's ``calls`` message has the text (59 characters) and two tool
calls, ``read`` with ``{"path":"src/context.ts"}`` (4 + 25) and ``bash`` with
``{"command":"npm test -- context"}`` (4 + 33): 125 characters, ``ceil(125 / 4) = 32``
tokens.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from ctxlab.errors import ContextOptionError, EstimatorError, malformed
from ctxlab.json_values import thaw_json
from ctxlab.messages import (
    AssistantMessage,
    SystemMessage,
    TextContent,
    ToolResultMessage,
    UserMessage,
    text_of,
)

__all__ = ["chars_per_token", "counted_characters"]


def counted_characters(value: Any) -> int:
    """How many characters :func:`chars_per_token` counts for a message or a string.

    See the module docstring for the table. Anything that is neither a ``str`` nor one of
    the four messages is an :class:`~ctxlab.errors.EstimatorError`.
    """
    try:
        if isinstance(value, str):
            return len(value)
        if isinstance(value, SystemMessage):
            return len(text_of(value))
        if isinstance(value, (UserMessage, ToolResultMessage)):
            return sum(len(block.text) for block in value.content)
        if isinstance(value, AssistantMessage):
            total = 0
            for block in value.content:
                if isinstance(block, TextContent):
                    total += len(block.text)
                else:  # a tool call: its name and its arguments as compact JSON
                    arguments = json.dumps(
                        thaw_json(block.arguments), ensure_ascii=False, separators=(",", ":")
                    )
                    total += len(block.name) + len(arguments)
            return total
    except (AttributeError, TypeError) as exc:  # a message built by hand with a wrong field
        raise malformed(value, exc, where="chars_per_token") from exc
    kind = type(value).__name__
    raise EstimatorError(
        f"chars_per_token cannot price a {kind}; give it a message or a str", subject=kind
    )


def chars_per_token(n: int | float = 4) -> Callable[[Any], int]:
    """An estimator that prices ``ceil(characters / n)`` tokens.

    ``n`` is the number of characters per token: a finite number > 0 (a ``bool`` is
    refused), else :class:`~ctxlab.errors.ContextOptionError` naming ``n``. The returned
    function is deterministic and stateless, as the chapter's budget requires; its
    ``__name__`` is ``chars_per_token_4`` for ``n = 4``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, float)) or not math.isfinite(n) or n <= 0:
        raise ContextOptionError(
            f"n must be a finite number > 0, got {n!r}", where="chars_per_token", option="n"
        )

    def estimate(value: Any) -> int:
        return math.ceil(counted_characters(value) / n)

    estimate.__name__ = f"chars_per_token_{n:g}"
    estimate.__qualname__ = estimate.__name__
    return estimate
