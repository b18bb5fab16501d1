"""Where the tests find the chapter's text (issue 35, item 6).

The chapter (``chapter-11-context-compaction.zh.txt``) is the course's, not ctxlab's: it lies
outside the repository. :func:`chapter_path` looks, in order, at the file the environment
variable ``CTXLAB_CHAPTER`` names, then at ``shared/seeds/<chapter>`` beside the repository
(or beside a folder above it: a git worktree kept in a subfolder). Where it is absent, a test
that needs it is skipped with a message saying where to put it -- unless
``CTXLAB_REQUIRE_CHAPTER=1`` (as ``.ci/run`` sets it: CI has the chapter), where it fails.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CHAPTER_NAME = "chapter-11-context-compaction.zh.txt"
#: A space between two Chinese (Han) characters: where the chapter file wrapped a printed line.
WRAP_SPACE = re.compile(r"(?<=[\u4e00-\u9fff]) +(?=[\u4e00-\u9fff])")


def find_chapter() -> Path | None:
    """The chapter's file, or ``None`` where it is not on this machine."""
    named = os.environ.get("CTXLAB_CHAPTER", "")
    if named:
        return Path(named) if Path(named).is_file() else None
    for folder in REPO.parents:
        candidate = folder / "shared" / "seeds" / CHAPTER_NAME
        if candidate.is_file():
            return candidate
    return None


def chapter_path() -> Path:
    """The chapter's file; skips the calling test when it is absent (fails when
    ``CTXLAB_REQUIRE_CHAPTER`` is set)."""
    found = find_chapter()
    if found is not None:
        return found
    named = os.environ.get("CTXLAB_CHAPTER", "")
    where = (
        f"CTXLAB_CHAPTER={named} is not a file"
        if named
        else f"the chapter's text is not at {REPO.parent / 'shared' / 'seeds' / CHAPTER_NAME}"
    )
    message = (
        f"{where}: put {CHAPTER_NAME} there, or set CTXLAB_CHAPTER to its path"
        " (the tests that quote the chapter need it)"
    )
    if os.environ.get("CTXLAB_REQUIRE_CHAPTER", "") not in ("", "0"):
        pytest.fail(f"{message}; CTXLAB_REQUIRE_CHAPTER is set", pytrace=False)
    pytest.skip(message)


def chapter_text() -> str:
    """The chapter's text (see :func:`chapter_path`), without the spaces its file has between
    two Chinese characters where a printed line was wrapped (「四个配置数值 和估算器」): a quote
    reads 「四个配置数值和估算器」."""
    text = chapter_path().read_text(encoding="utf-8")
    return WRAP_SPACE.sub("", text)


def chapter_text_if_here() -> str | None:
    """The chapter's text, or ``None`` where it is absent (a test that checks more with it);
    fails when ``CTXLAB_REQUIRE_CHAPTER`` is set and it is absent."""
    if find_chapter() is None and os.environ.get("CTXLAB_REQUIRE_CHAPTER", "") in ("", "0"):
        return None
    return chapter_text()
