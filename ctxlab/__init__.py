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
from ctxlab.tree import path_to
from ctxlab.window import ContextWindow

if TYPE_CHECKING:
    from ctxlab import fixtures
    from ctxlab.store import (
        InMemorySessionStore,
        JsonlSessionStore,
        SessionReadResult,
        StoreWarning,
    )

#: Public names loaded on first use, and the module each comes from. ``import ctxlab``
#: does not need them: :mod:`ctxlab.fixtures` builds the chapter's worked examples, and
#: :mod:`ctxlab.store` (six dataclasses, :mod:`pathlib`, :mod:`threading`) is needed only
#: once a store is made. ``from ctxlab import JsonlSessionStore`` and
#: ``ctxlab.JsonlSessionStore`` work as before (issue 19: ``import ctxlab`` <= 50 ms).
_LAZY = {
    "fixtures": "ctxlab.fixtures",
    "InMemorySessionStore": "ctxlab.store",
    "JsonlSessionStore": "ctxlab.store",
    "SessionReadResult": "ctxlab.store",
    "StoreWarning": "ctxlab.store",
}


def __getattr__(name: str) -> object:
    """Load a name of :data:`_LAZY` on first use (PEP 562), then keep it in the module."""
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'ctxlab' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(module_name)
    value = module if module_name == f"ctxlab.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
