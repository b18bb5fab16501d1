"""Lab 11.1 "摘要先成为 session 中的一条普通事实": the teaching layer of notebook
``11.1-summary-is-a-fact.ipynb``. The notebook's cells call the core (:mod:`ctxlab.entries`);
this module holds the self-check of exercise 11.1-B.
"""

from __future__ import annotations

from ctxlab import fixtures
from ctxlab.entries import parse_session_entry
from ctxlab.errors import CtxlabError
from ctxlab.lab.checks import Verdict, as_mapping, exercise
from ctxlab.lab.errors_zh import error_text
from ctxlab.lab.language import Texts, tr

say = Texts("lab11_1")

__all__ = ["check_my_summary"]


def _refused(error: CtxlabError) -> Verdict:
    """The verdict when the parser refuses the answer: ``friendly``'s, worded for the parser."""
    return Verdict(
        False,
        tr("ctxlab rejected the answer", "parser 拒绝了这个答案"),
        f"{type(error).__name__}: {error_text(error)}",
        say("read_the_message_it_names"),
    )


@exercise("my summary", "你写的摘要 my_summary")
def check_my_summary(answer: object) -> Verdict:
    """Exercise 11.1-B: write a seven-field summary of your own that the parser accepts."""
    summary = as_mapping(answer, tr("your summary", "你的摘要"))
    wire = fixtures.compact1().to_json()
    wire["summary"] = dict(summary)
    try:
        entry = parse_session_entry(wire)
    except CtxlabError as error:
        return _refused(error)
    assert entry.type == "compaction"
    if dict(summary) == fixtures.compact1_summary().to_json():
        return Verdict(
            False,
            tr("that is compact-1's own summary", "这是 compact-1 自己的摘要"),
            hint=say("write_a_summary_of_your"),
        )
    items = sum(len(v) for v in summary.values() if isinstance(v, list))
    return Verdict(
        True,
        tr("the parser accepts your seven-field summary", "parser 接受了你的七字段摘要"),
        say("goal_list_items_in_six", entry=entry, items=items),
    )
