"""``import ctxlab`` stays light, and exposes every name of spec section 9."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import ctxlab

pytestmark = pytest.mark.packaging

# Spec section 9 (fixed names).
SPEC_NAMES = [
    "CtxlabError",
    "SystemMessage",
    "UserMessage",
    "AssistantMessage",
    "ToolResultMessage",
    "TextContent",
    "ToolCall",
    "Usage",
    "MessageSessionEntry",
    "MetadataSessionEntry",
    "CompactionSessionEntry",
    "CompactionSummary",
    "SessionEntry",
    "AgentMessage",
    "parse_session_entry",
    "InMemorySessionStore",
    "JsonlSessionStore",
    "SessionReadResult",
    "path_to",
    "current_system_message",
    "current_system_prompt",
    "text_of",
    "group_interactions",
    "InteractionGroup",
    "build_context",
    "ContextResult",
    "ContextTokens",
    "render_summary",
    "create_compaction_entry",
    "fixtures",
]

HEAVY = ["pandas", "matplotlib", "ipywidgets"]


def test_import_ctxlab_does_not_import_the_teaching_libraries() -> None:
    code = (
        "import json, sys\n"
        "import ctxlab\n"
        "import ctxlab.fixtures, ctxlab.estimators\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout) == []


def test_every_spec_name_is_importable_from_ctxlab() -> None:
    missing = [name for name in SPEC_NAMES if not hasattr(ctxlab, name)]
    assert missing == []
    assert set(SPEC_NAMES) <= set(ctxlab.__all__)
    assert issubclass(ctxlab.CtxlabError, ValueError)
    assert callable(ctxlab.JsonlSessionStore.open)
    assert callable(ctxlab.fixtures.opening_path)
    assert callable(ctxlab.fixtures.opening_estimator)


def test_every_error_class_is_a_ctxlab_error() -> None:
    errors = [
        getattr(ctxlab, name)
        for name in ctxlab.__all__
        if isinstance(getattr(ctxlab, name), type) and name.endswith("Error")
    ]
    assert len(errors) >= 7
    assert all(issubclass(error, ctxlab.CtxlabError) for error in errors)
