"""One-page summary sheets, one per lab and language (issue 27): ``make handouts``.

A sheet holds the chapter's rules (quoted verbatim; the English sheet adds ctxlab's
rendering), the worked example's numbers (computed with ctxlab from the chapter's fixtures,
never copied), one figure of the teaching modules (as SVG) and the lab's test commands.
:func:`handout_html` makes one self-contained A4 page; :func:`build` writes them all and,
where Chromium is installed, prints each to PDF. Words and style: ``data/handouts.json``,
``data/handout.css``.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import ctxlab
from ctxlab import fixtures
from ctxlab.errors import CtxlabError
from ctxlab.lab.language import (
    Language,
    Texts,
    figure_language,
    get_language,
    set_figure_language,
    set_language,
    tr,
)
from ctxlab.lab.quizzes import reopened

say = Texts("handouts")

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "HANDOUTS",
    "LANGUAGES",
    "Handout",
    "build",
    "find_chromium",
    "handout_html",
    "main",
    "print_pdf",
]

#: Where the sheets' words and style are.
_DATA = Path(__file__).with_name("data")

LANGUAGES: tuple[Language, ...] = ("zh", "en")  # the course is Chinese first

#: (label, value) -- one row of a sheet's numbers table.
Row = tuple[str, str]


@dataclass(frozen=True)
class Handout:
    """One lab's sheet: the chapter's heading and rules (verbatim; ctxlab's English title and
    renderings), how to compute the numbers, and the picture's caption."""

    lab: str
    heading_zh: str
    title_en: str
    rules: tuple[tuple[str, str], ...]
    numbers: Callable[[], list[Row]]
    picture_en: str
    picture_zh: str


# ----------------------------------------------------------------------------- numbers


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(ids)


def _kept(result: ctxlab.ContextResult) -> str:
    return f"{_ids(result.kept_entry_ids)} ({result.reason}, total {result.tokens.total})"


def _numbers_11_1() -> list[Row]:
    path = fixtures.opening_path()
    price = fixtures.opening_estimator
    costs = ", ".join(f"{e.id} {price(e.message)}" for e in path if e.type == "message")
    compact = fixtures.compact1(path)
    wire = compact.to_json()
    back = reopened([*path, compact])
    return [
        (say("opening_path_entries_and_costs"), f"{len(path)}: {costs}"),
        (say("compact_1_parentid"), str(wire["parentId"])),
        (say("compact_1_firstkeptentryid"), wire["firstKeptEntryId"]),
        (say("compact_1_tokensbefore_the_caller"), str(wire["tokensBefore"])),
        (say("summary_its_fields"), f"{len(wire['summary'])}: " + ", ".join(wire["summary"])),
        (
            say("jsonl_store_reopened_entries_the"),
            f"{len(back)}, {back[-1].id} ({back[-1].type})",
        ),
    ]


def _numbers_11_2() -> list[Row]:
    from ctxlab.lab import lab11_2
    from ctxlab.lab.errors_zh import error_text
    from ctxlab.lab.ledger import budget_ledger

    groups = budget_ledger(fixtures.opening_path()).groups[::-1]  # oldest first
    rows = [
        (say("group_cost", number=g.number), f"[{_ids(g.interaction.entry_ids)}] = {g.cost}")
        for g in groups
    ]
    pairs = ", ".join(f"{call} → {result}" for call, result in groups[-1].interaction.tool_pairs)
    rows.append((say("group_3_call_result_by"), pairs))
    cuts = [cut.label for cut in lab11_2.cut_points() if cut.legal]
    rows.append((say("legal_cuts_between_groups_only"), _ids(cuts)))
    try:
        ctxlab.group_interactions(fixtures.unknown_call_path())
        refused = "—"
    except CtxlabError as error:
        refused = error_text(error)
    rows.append((say("r_test_unknown_1_is"), refused))
    return rows


def _numbers_11_3() -> list[Row]:
    from ctxlab.lab.ledger import Budget, budget_ledger

    view = budget_ledger()  # the opening path, 31/4/2
    result, t = view.result, view.result.tokens
    fixed = (
        f"maxTokens {t.max_tokens} − system {t.system} − reservedOutput {t.reserved_output}"
        f" − safetyMargin {t.safety_margin} = {t.available_for_messages}"
    )
    overflow = Budget(19).build(fixtures.opening_path())
    available = result.tokens.available_for_messages
    steps = []
    for g in view.groups:  # from the newest group backwards
        used = g.running_total - g.cost
        steps.append(f"{used} + {g.cost} = {g.running_total} {'✔' if g.kept else '✘'}")
        if not g.kept:
            break
    return [
        (say("the_fixed_costs_first"), fixed),
        (say("group_costs_oldest_first"), ", ".join(str(g.cost) for g in view.groups[::-1])),
        (say("from_the_newest_backwards_within", available=available), "; ".join(steps)),
        (say("keptentryids"), _ids(result.kept_entry_ids)),
        (say("reason_tokens_total"), f"{result.reason}, {result.tokens.total}"),
        (
            say("maxtokens_19_left_for_messages", overflow=overflow),
            f"{overflow.reason}, total {overflow.tokens.total} > 19",
        ),
    ]


def _numbers_11_4() -> list[Row]:
    from ctxlab.lab.lab11_4 import first_kept_costs, try_first_kept

    path = fixtures.opening_path()
    compact = fixtures.compact1(path)
    costs = first_kept_costs()
    splits = [
        f"{head}: {kept} / {summarised}" for head, kept, summarised in costs.itertuples(index=False)
    ]
    refused = [
        candidate
        for candidate in ("a2", "calls", "r-test")
        if isinstance(try_first_kept(path, candidate), CtxlabError)
    ]
    return [
        (say("compact_1_parentid_the_path"), f"{compact.parent_id} (= {path[-1].id})"),
        (
            say("compact_1_firstkeptentryid_tokensbefore"),
            f"{compact.first_kept_entry_id}, {compact.tokens_before}",
        ),
        (say("legal_first_kept_entries_group"), _ids(costs["first kept"])),
        (say("kept_summarised_tokens"), "; ".join(splits)),
        (say("refused_as_first_kept_inside"), _ids(refused)),
        (
            say("the_path_after_create"),
            tr(f"{len(path)} entries, unchanged", f"{len(path)} 条，没有改动"),
        ),
    ]


def _numbers_11_5() -> list[Row]:
    from ctxlab.lab.ledger import Budget, budget_ledger

    resumed = fixtures.resumed_path()
    at31 = Budget(31).build(resumed)
    view40 = budget_ledger(resumed, Budget(40))
    at40 = view40.result
    system_path = fixtures.system_patch_path()
    replayed = ctxlab.current_system_message(e.message for e in system_path if e.type == "message")
    assert replayed is not None
    sys_result = Budget(40).build(system_path)
    summary = tr("summary", "摘要")
    return [
        (say("resumed_path"), " → ".join(e.id for e in resumed[-4:])),
        (say("the_summary_message_s_cost"), str(view40.summary_cost)),
        (say("maxtokens_31_keptentryids"), _kept(at31)),
        (say("maxtokens_40_keptentryids"), _kept(at40)),
        (
            say("system_replay_across_compact_1"),
            f"content {replayed.content!r}, sections {dict(replayed.sections or {})!r},"
            f" timestamp {replayed.timestamp}",
        ),
        (
            say("system_patch_path_maxtokens_40"),
            f"[system, {summary}, {_ids(sys_result.kept_entry_ids)}]",
        ),
    ]


def _picture(lab: str) -> Figure:
    """The lab's one picture, from a teaching module (imported here: matplotlib loads late)."""
    from ctxlab.lab import lab11_2, lab11_3, lab11_4, lab11_5

    if lab == "11.1":
        path = fixtures.opening_path()
        return lab11_5.resume_diagram([*path, fixtures.compact1(path)])
    if lab == "11.5":
        return lab11_5.resume_diagram(fixtures.system_patch_path())
    draw = {"11.2": lab11_2.timeline_figure, "11.3": lab11_3.budget_figure}
    return draw.get(lab, lab11_4.first_kept_figure)()


def _load() -> dict[str, Handout]:
    """Every sheet: its words from ``data/handouts.json``, its numbers from ``_numbers_11_N``."""
    data = json.loads(_DATA.joinpath("handouts.json").read_text("utf-8"))
    return {
        lab: Handout(
            lab=lab,
            numbers=globals()[f"_numbers_{lab.replace('.', '_')}"],
            **{**sheet, "rules": tuple((zh, en) for zh, en in sheet["rules"])},
        )
        for lab, sheet in data.items()
    }


HANDOUTS: dict[str, Handout] = _load()

# ----------------------------------------------------------------------------- rendering

_CSS = _DATA.joinpath("handout.css").read_text("utf-8")


def _svg(figure: Figure) -> str:
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()


def _in_language(language: Language, make: Callable[[], str]) -> str:
    """``make()`` with ctxlab's report and figure language set to ``language``."""
    from ctxlab.lab import display

    before, figure_before = get_language(), figure_language()
    set_language(language)
    display.use_course_style(language, notice=io.StringIO())
    try:
        return make()
    finally:
        set_language(before)
        set_figure_language(figure_before)


def handout_html(lab: str, language: Language) -> str:
    """The one-page summary sheet of ``lab`` in ``language``, as a self-contained HTML page."""
    if lab not in HANDOUTS or language not in LANGUAGES:
        raise CtxlabError(
            f"handout: lab must be one of {', '.join(HANDOUTS)} and language one of "
            f"{', '.join(LANGUAGES)}; got {lab!r}, {language!r}"
        )
    return _in_language(language, lambda: _page(HANDOUTS[lab]))


def _page(sheet: Handout) -> str:
    zh = get_language() == "zh"
    e = html.escape
    lab = sheet.lab
    title = f"实验 {lab} — {sheet.heading_zh}" if zh else f"Lab {lab} — {sheet.title_en}"
    sub = (
        "第 11 章《历史不动，上下文按预算重建》· 一页小结（ctxlab）"
        if zh
        else f"Chapter 11 · § {sheet.heading_zh} · one-page summary (ctxlab)"
    )
    rules = []
    for quote, gloss in sheet.rules:
        item = f"「{e(quote)}」"
        if not zh:
            item += f'<br><span class="gloss">{e(gloss)}</span>'
        rules.append(f"<li>{item}</li>")
    rows = "".join(
        f'<tr><td class="label">{e(label)}</td><td class="value">{e(value)}</td></tr>'
        for label, value in sheet.numbers()
    )
    svg = _svg(_picture(lab))
    src = "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
    caption = sheet.picture_zh if zh else sheet.picture_en
    heads = (say("the_chapter_s_rules_quoted"), say("the_worked_example_s_numbers"))
    pattern = f'node --test --test-name-pattern="Lab {lab}"'
    foot = say("the_chapter_s_tests", pattern=e(pattern), number=lab.replace(".", "_"))
    language_tag = "zh-CN" if zh else "en"
    return (
        f'<!doctype html>\n<html lang="{language_tag}"><head><meta charset="utf-8">'
        f"<title>{e(title)}</title><style>{_CSS}</style></head><body>"
        f'<main class="ctxlab-handout" data-lab="{e(lab)}">'
        f'<h1>{e(title)}</h1><p class="sub">{e(sub)}</p>'
        f"<h2>{e(heads[0])}</h2><ol>{''.join(rules)}</ol>"
        f"<h2>{e(heads[1])}</h2><table>{rows}</table>"
        f'<h2>{e(say("the_picture"))}</h2><figure><img src="{src}" alt="{e(caption)}">'
        f"<figcaption>{e(caption)}</figcaption></figure>"
        f"<footer>{foot}</footer></main></body></html>\n"
    )


# ----------------------------------------------------------------------------- building


def find_chromium() -> Path | None:
    """Chromium to print PDFs with: ``CTXLAB_CHROMIUM``, else ``chromium`` (Debian's name) or
    ``chromium-browser`` on PATH."""
    named = os.environ.get("CTXLAB_CHROMIUM")
    if named:
        return Path(named) if Path(named).is_file() else None
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return Path(found) if found else None


def print_pdf(page: Path, pdf: Path, chromium: Path, timeout: float = 120) -> None:
    """Print the HTML file ``page`` to ``pdf`` with headless Chromium (A4, from the page's
    ``@page`` rule, without the browser's header and footer)."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                str(chromium),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--no-pdf-header-footer",
                f"--print-to-pdf={pdf}",
                page.resolve().as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=timeout,
        )


def build(out: Path, labs: Sequence[str] = tuple(HANDOUTS), pdf: bool | None = None) -> list[Path]:
    """Write every sheet of ``labs`` in both languages to ``out/<language>/<lab>.html`` (and
    an ``index.html``); ``pdf``: also print each to PDF (``None``: when Chromium is found)."""
    chromium = find_chromium() if pdf is not False else None
    if pdf and chromium is None:
        raise CtxlabError("handouts: --pdf needs Chromium (apt-get install chromium)")
    written: list[Path] = []
    links = []
    for language in LANGUAGES:
        folder = out / language
        folder.mkdir(parents=True, exist_ok=True)
        for lab in labs:
            page = folder / f"{lab}.html"
            page.write_text(handout_html(lab, language), encoding="utf-8")
            written.append(page)
            links.append(f'<li><a href="{language}/{lab}.html">{language} · {lab}</a>')
            if chromium is not None:
                target = page.with_suffix(".pdf")
                print_pdf(page, target, chromium)
                written.append(target)
                links[-1] += f' · <a href="{language}/{lab}.pdf">PDF</a>'
    index = out / "index.html"
    index.write_text(
        '<!doctype html><html><head><meta charset="utf-8"><title>ctxlab handouts</title>'
        f"</head><body><h1>ctxlab · handouts</h1><ul>{''.join(links)}</ul></body></html>\n",
        encoding="utf-8",
    )
    written.append(index)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ctxlab.lab.handouts",
        description="One-page summary sheet per lab, zh and en: printable HTML (and PDF).",
    )
    parser.add_argument("--out", type=Path, default=Path("handouts"), help="output folder")
    parser.add_argument("labs", nargs="*", help="labs, e.g. 11.3 (default: 11.1-11.5)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--pdf", action="store_true", default=None, help="require PDFs")
    group.add_argument("--no-pdf", dest="pdf", action="store_false", help="HTML only")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    labs = tuple(args.labs) or tuple(HANDOUTS)
    for path in build(args.out, labs, args.pdf):
        print(f"wrote {path}")
    if args.pdf is None and find_chromium() is None:
        print("no Chromium found: HTML only (apt-get install chromium for PDFs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
