"""The ``ctxlab`` command, end to end in subprocesses (``python -m ctxlab``).

Exit codes: 0 success, 1 the data has problems, 2 usage error. Errors are one line,
``ctxlab: <message>`` on stderr, never a traceback. Includes the chapter's corrupted
records ("损坏记录在进入预算前就会被拒绝") and a file whose last line was torn.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxlab import fixtures
from ctxlab.store import encode_entry_line

pytestmark = pytest.mark.cli

BUDGET = ["--max-tokens", "31", "--reserved-output", "4", "--safety-margin", "2"]


def ctxlab(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "ctxlab", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=cwd,
        timeout=60,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def write(path: Path, entries: list[object], tail: bytes = b"") -> Path:
    lines = []
    for entry in entries:
        if isinstance(entry, dict):
            lines.append(json.dumps(entry).encode() + b"\n")
        else:
            lines.append(encode_entry_line(entry))  # type: ignore[arg-type]
    path.write_bytes(b"".join(lines) + tail)
    return path


@pytest.fixture
def opening(tmp_path: Path) -> Path:
    return write(tmp_path / "opening.jsonl", list(fixtures.opening_path()))


def test_check_a_clean_file(opening: Path) -> None:
    result = ctxlab("check", opening)
    assert result.returncode == 0
    assert result.stdout.strip() == f"{opening}: ok, 10 entries"


def test_check_reports_every_problem_with_its_line(tmp_path: Path) -> None:
    corrupt = fixtures.compaction_corruptions()["files instead of changedFiles"]
    path = write(tmp_path / "bad.jsonl", [*fixtures.opening_path(), corrupt])
    with open(path, "ab") as handle:
        handle.write(b'{"type":"metadata","id":"m","parentId":"a3","timestamp":NaN}\n')
        handle.write(b"\xff not utf-8\n")
        handle.write(encode_entry_line(fixtures.opening_path()[2]))  # a1 again
        handle.write(b'{"type":"message","id":"u9","par')  # torn
    result = ctxlab("check", path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert [line.split(": ")[0:2] for line in lines[:-1]] == [
        [f"{path}:11", "invalid_entry"],
        [f"{path}:12", "invalid_json"],
        [f"{path}:13", "invalid_utf8"],
        [f"{path}:14", "duplicate_id"],
        [f"{path}:15", "unterminated_tail"],
    ]
    assert "summary.files" in lines[0] and "compact-1" in lines[0]
    assert "NaN" in lines[1]
    assert lines[-1] == f"{path}: 5 problems; 10 valid entries"


def test_check_usage_errors_exit_2(tmp_path: Path) -> None:
    missing = ctxlab("check", tmp_path / "missing.jsonl")
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"ctxlab: {tmp_path / 'missing.jsonl'}: no such file"
    assert not (tmp_path / "missing.jsonl").exists()
    assert ctxlab("check").returncode == 2
    assert ctxlab("frobnicate", "x").returncode == 2
    nothing = ctxlab()
    assert nothing.returncode == 2 and "choose a command" in nothing.stderr
    assert ctxlab("check", tmp_path).returncode == 2  # a folder


def test_context_reproduces_the_chapter_example_as_json(opening: Path) -> None:
    result = ctxlab("context", opening, *BUDGET, "--estimator", "chapter", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["keptEntryIds"] == ["u2", "a2", "u3", "calls", "r-test", "r-read", "a3"]
    assert out["reason"] == "trimmed"
    assert out["tokens"] == {
        "maxTokens": 31,
        "system": 3,
        "messages": 22,
        "reservedOutput": 4,
        "safetyMargin": 2,
        "availableForMessages": 22,
        "total": 31,
    }
    assert [m["role"] for m in out["messages"]][:2] == ["system", "user"]
    assert out["messages"][0]["content"] == "sys"


def test_context_prints_a_readable_table(opening: Path) -> None:
    result = ctxlab("context", opening, *BUDGET, "--estimator", "chapter")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for heading in ("active path", "interaction groups", "ledger"):
        assert f"\n{heading}" in out
    assert "reason: trimmed" in out
    assert "kept ids: u2, a2, u3, calls, r-test, r-read, a3" in out
    group_lines = [line.split() for line in out.splitlines() if line.strip()[:1] in "123"]
    assert ["1", "u1", "a1", "2", "7", "dropped"] in group_lines
    assert ["3", "u3", "a3", "5", "15", "kept"] in group_lines
    assert any(line.split() == ["availableForMessages", "22"] for line in out.splitlines())


def test_context_with_the_default_estimator_and_a_leaf(opening: Path) -> None:
    result = ctxlab("context", opening, "--leaf", "a2", *BUDGET, "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert set(out["keptEntryIds"]) <= {"u1", "a1", "u2", "a2"}
    assert out["tokens"]["maxTokens"] == 31


def test_context_after_a_compaction_in_chinese(tmp_path: Path) -> None:
    path = write(tmp_path / "resumed.jsonl", list(fixtures.resumed_path()))
    result = ctxlab(
        "context", path, *BUDGET, "--estimator", "chapter", "--summary-language", "zh", "--json"
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["messages"][1]["content"][0]["text"].startswith("【会话压缩摘要】")
    assert "compact-1" not in out["keptEntryIds"]
    table = ctxlab("context", path, *BUDGET, "--estimator", "chapter")
    assert "summary of compact-1" in table.stdout
    assert "summarised by the latest compaction" in table.stdout


def test_context_renders_the_summary_in_chinese_by_default(tmp_path: Path) -> None:
    path = write(tmp_path / "resumed.jsonl", list(fixtures.resumed_path()))
    options = ["context", path, *BUDGET, "--estimator", "chapter", "--json"]
    default = ctxlab(*options)
    assert default.returncode == 0, default.stderr
    out = json.loads(default.stdout)
    assert out["messages"][1]["content"][0]["text"].startswith("【会话压缩摘要】\n目标：")
    assert out == json.loads(ctxlab(*options, "--summary-language", "zh").stdout)
    english = json.loads(ctxlab(*options, "--summary-language", "en").stdout)
    assert english["messages"][1]["content"][0]["text"].startswith("[Conversation summary]")


def test_context_help_names_the_default_summary_language() -> None:
    result = ctxlab("context", "--help")
    assert result.returncode == 0
    help_text = " ".join(result.stdout.split())
    assert "--summary-language {en,zh}" in help_text
    default = "(default: zh, the course's 【会话压缩摘要】 rendering; en: the English one)"
    assert default in help_text


def test_context_with_all_defaults_is_the_course_result(tmp_path: Path) -> None:
    """The issue's example: the course's own file at leaf u4, chars/4, budget 128/8/4 --
    the course says ``trimmed`` with total 116 (tests/data/interop has its results)."""
    data = Path(__file__).parent / "data" / "interop"
    path = tmp_path / "course-main.jsonl"
    shutil.copyfile(data / "course-main.jsonl", path)
    course = json.loads((data / "course-main.course.json").read_text(encoding="utf-8"))
    (case,) = [
        c
        for c in course["cases"]
        if (c["leaf"], c["estimator"], c["budget"]) == ("u4", "chars4", [128, 8, 4])
    ]
    budget = ["--max-tokens", "128", "--reserved-output", "8", "--safety-margin", "4"]
    result = ctxlab("context", path, "--leaf", "u4", *budget, "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert (out["reason"], out["tokens"]["total"]) == ("trimmed", 116)
    assert json.dumps(out, sort_keys=True) == json.dumps(case["ok"], sort_keys=True)


def test_context_on_the_chapter_unknown_call_path_fails_cleanly(tmp_path: Path) -> None:
    path = write(tmp_path / "unknown.jsonl", list(fixtures.unknown_call_path()))
    result = ctxlab("context", path, *BUDGET)
    assert result.returncode == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("ctxlab: ") and "unknown-1" in line and "r-test" in line


def test_context_on_the_chapter_corrupted_compaction_names_line_and_field(
    tmp_path: Path,
) -> None:
    corrupt = fixtures.compaction_corruptions()["files instead of changedFiles"]
    path = write(tmp_path / "c.jsonl", [*fixtures.opening_path(), corrupt])
    result = ctxlab("context", path, *BUDGET)
    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert "line 11" in line and "compact-1" in line and "summary.files" in line


def test_context_usage_errors(opening: Path, tmp_path: Path) -> None:
    for bad in ("nan", "inf", "-1", "many"):
        result = ctxlab("context", opening, "--max-tokens", bad, *BUDGET[2:])
        assert result.returncode == 2
        assert "--max-tokens" in result.stderr
    assert ctxlab("context", opening, "--max-tokens", "31").returncode == 2  # missing options
    assert ctxlab("context", opening, *BUDGET, "--estimator", "nope").returncode == 2
    missing = ctxlab("context", tmp_path / "nope.jsonl", *BUDGET)
    assert missing.returncode == 2 and "no such file" in missing.stderr
    unknown_leaf = ctxlab("context", opening, *BUDGET, "--leaf", "zz")
    assert unknown_leaf.returncode == 1 and "zz" in unknown_leaf.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert ctxlab("context", empty, *BUDGET).returncode == 1


def test_a_torn_last_line_check_context_repair_check(tmp_path: Path) -> None:
    torn = encode_entry_line(fixtures.compact1())[:37]
    path = write(tmp_path / "torn.jsonl", list(fixtures.opening_path()), tail=torn)
    original = path.read_bytes()

    check = ctxlab("check", path)
    assert check.returncode == 1 and f"{path}:11: unterminated_tail" in check.stdout

    context = ctxlab("context", path, *BUDGET, "--estimator", "chapter", "--json")
    assert context.returncode == 0  # the committed lines are fine: a warning only
    assert "warning" in context.stderr and "line 11" in context.stderr
    assert json.loads(context.stdout)["reason"] == "trimmed"

    repair = ctxlab("repair", path)
    assert repair.returncode == 0
    side = tmp_path / "torn.jsonl.tail-1"
    assert str(side) in repair.stdout and "37 bytes" in repair.stdout and "line 11" in repair.stdout
    assert path.read_bytes() + side.read_bytes() == original

    again = ctxlab("repair", path)
    assert again.returncode == 0 and "nothing to repair" in again.stdout
    assert ctxlab("check", path).returncode == 0
    assert ctxlab("repair", tmp_path / "missing.jsonl").returncode == 2


def test_the_installed_console_script(opening: Path) -> None:
    script = shutil.which("ctxlab", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the ctxlab console script is not installed next to this Python")
    result = subprocess.run([script, "check", str(opening)], capture_output=True, text=True)
    assert result.returncode == 0 and "ok, 10 entries" in result.stdout
