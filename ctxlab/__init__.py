"""ctxlab -- the Python edition of chapter 11 of the coding-agent course:
"历史不动，上下文按预算重建" (history stays put; the context is rebuilt under a budget).

The core is read in the order the chapter builds it:

========================  ==============================================================
:mod:`ctxlab.messages`     agent messages and the chapter 03 system replay
:mod:`ctxlab.entries`      session entries and the strict parser (Lab 11.1)
:mod:`ctxlab.store`        in-memory and JSONL stores (chapter 10)
:mod:`ctxlab.tree`         ``path_to``: the active path of the session tree
:mod:`ctxlab.interactions` whole user interactions (Lab 11.2)
:mod:`ctxlab.compaction`   creating a compaction, rendering its summary (Lab 11.4)
:mod:`ctxlab.context`      the budgeted context projection (Labs 11.3, 11.5)
:mod:`ctxlab.estimators`   token estimators (``chars_per_token``)
:mod:`ctxlab.window`       ``ContextWindow``: the same projection, kept up to date per append
:mod:`ctxlab.fixtures`     the chapter's worked examples
========================  ==============================================================

The teaching layer (:mod:`ctxlab.lab`: one module per lab) is imported separately; it is
the only part that needs pandas, matplotlib or ipywidgets.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ctxlab.compaction import create_compaction_entry, render_summary
from ctxlab.context import ContextResult, ContextTokens, build_context
from ctxlab.entries import (
    CompactionSessionEntry,
    CompactionSummary,
    MessageSessionEntry,
    MetadataSessionEntry,
    SessionEntry,
    parse_session_entry,
)
from ctxlab.errors import (
    CompactionError,
    ContextOptionError,
    CtxlabError,
    EntryParseError,
    EstimatorError,
    InteractionError,
    SessionStoreError,
    SessionTreeError,
)
from ctxlab.estimators import chars_per_token
from ctxlab.interactions import InteractionGroup, group_interactions
from ctxlab.messages import (
    ABSENT,
    AgentMessage,
    AssistantMessage,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    current_system_message,
    current_system_prompt,
    text_of,
)
from ctxlab.store import (
    InMemorySessionStore,
    JsonlSessionStore,
    SessionReadResult,
    StoreWarning,
)
from ctxlab.tree import path_to
from ctxlab.window import ContextWindow

if TYPE_CHECKING:
    from ctxlab import fixtures


def __getattr__(name: str) -> object:
    """Load :mod:`ctxlab.fixtures` on first use (``ctxlab.fixtures.opening_path()``): it
    builds the chapter's worked examples, which ``import ctxlab`` itself does not need."""
    if name == "fixtures":
        return importlib.import_module("ctxlab.fixtures")
    raise AttributeError(f"module 'ctxlab' has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "ABSENT",
    "AgentMessage",
    "AssistantMessage",
    "CompactionError",
    "CompactionSessionEntry",
    "CompactionSummary",
    "ContextOptionError",
    "ContextResult",
    "ContextTokens",
    "ContextWindow",
    "CtxlabError",
    "EntryParseError",
    "EstimatorError",
    "InMemorySessionStore",
    "InteractionError",
    "InteractionGroup",
    "JsonlSessionStore",
    "MessageSessionEntry",
    "MetadataSessionEntry",
    "SessionEntry",
    "SessionReadResult",
    "SessionStoreError",
    "SessionTreeError",
    "StoreWarning",
    "SystemMessage",
    "TextContent",
    "ToolCall",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "build_context",
    "chars_per_token",
    "create_compaction_entry",
    "current_system_message",
    "current_system_prompt",
    "fixtures",
    "group_interactions",
    "parse_session_entry",
    "path_to",
    "render_summary",
    "text_of",
]
