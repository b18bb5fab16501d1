"""One source per lab, every edition built from it (issue 13: notebook sources that cannot drift).

Each lab notebook has ONE hand-edited source, ``notebooks/_src/<name>.md``. From it this tool
builds every edition of the notebook:

* two languages, ``en`` and ``zh`` (a source lists the ones it has in its header);
* two roles, ``student`` (stubs and placeholders, no answers) and ``instructor`` (the
  answer key, which lecturers present and ``make slides`` exports).

The edition of language ``L`` and role ``R`` is written to ``notebooks/L/R/<name>.ipynb``.

Source format
-------------
Plain text. A line that starts with ``:::`` is a directive; every other line is content
(a content line may not start with ``:::``)::

    :::notebook 11.2-interaction-groups lab=11.2 languages=en,zh
    :::cell 11-2-00 markdown slide=slide
    :::en
    # Lab 11.2 — ...
    :::zh
    # 实验 11.2 — ...
    :::cell 11-2-01 code
    import ctxlab
    :::cell 11-2-07 code tags=nbval-ignore-output only=instructor
    ...

``:::cell ID TYPE [slide=S] [tags=a,b] [only=student|instructor]`` starts a cell (TYPE is
``markdown`` or ``code``; S a RISE slide type, ``-`` by default). Its body is either shared
by every edition, or split into variants by ``:::KEY`` lines, KEY one of ``en``, ``zh``,
``student``, ``instructor`` or a pair such as ``student-zh``. An edition takes the most
specific variant: ``role-lang``, then ``role``, then ``lang``, then the shared body (text
before the first variant line). A body is stripped of leading and trailing blank lines.

Speaker notes are lecturer material (issue 17): they state exercise answers and talk to the
lecturer ("Ask the room…"), so every ``slide=notes`` cell must say ``only=instructor``, and
``parse_source`` refuses one that does not (a ``SourceError`` naming the file and line). The
student edition therefore holds no notes cell at all; ``harvest`` marks a cell that becomes a
notes cell in JupyterLab ``only=instructor`` by itself. Text a student may see says nothing
in the lecturer's voice either: give such a cell a ``:::student`` variant
(``tests/test_student_edition.py`` checks both rules and that no answer leaks).

Commands (run from the repository root)::

    python notebooks/_build/nbsource.py build              # write every edition (no outputs)
    python notebooks/_build/nbsource.py check              # exit 1 if any edition drifted
    python notebooks/_build/nbsource.py harvest NB.ipynb   # carry a JupyterLab edit back
    python notebooks/_build/nbsource.py stats              # share of Chinese in each edition

``make notebooks`` runs ``build`` and then executes the instructor editions in place; the
student editions are committed as ``build`` writes them, with no outputs (issue 27).

Why a harvest command rather than jupytext pairing: jupytext pairs one notebook with one
text file, but here one source makes four notebooks (two languages × two roles), so a pair
cannot express "this markdown cell has an English and a Chinese text" or "this code cell is
a stub for students and a solution for lecturers". ``harvest`` reads an edited edition,
finds each cell by its id, and writes the text back into exactly the variant that edition
was built from (a new cell goes where it stands in the notebook, a moved cell moves, a
deleted cell is removed).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
SOURCES = NOTEBOOKS / "_src"
LANGUAGES = ("en", "zh")
ROLES = ("student", "instructor")
SLIDE_TYPES = ("slide", "subslide", "fragment", "-", "notes", "skip")
CELL_TYPES = ("markdown", "code")
DIRECTIVE = ":::"


#: The tag of every build-it cell (the cell where the student writes the lab's function), and
#: the prefix of the tag naming its lab (``ctxlab-lab-11.3``): ``ctxlab grade`` finds a
#: student's code in a downloaded notebook by these tags. The build adds them to the cell
#: whose id is ``<lab with dashes>-b02`` (``11-3-b02``); ``harvest`` never writes them back.
BUILD_IT_TAG = "ctxlab-build-it"
LAB_TAG_PREFIX = "ctxlab-lab-"


def build_it_cell_id(lab: str) -> str:
    """The id of a lab's build-it cell: ``"11.3"`` -> ``"11-3-b02"``."""
    return f"{lab.replace('.', '-')}-b02"


def edition_tags(source: Source, cell: SourceCell) -> tuple[str, ...]:
    """The tags a cell carries in every edition: its own, and for the build-it cell the
    build-it tags."""
    if cell.cell_type == "code" and cell.id == build_it_cell_id(source.lab):
        extra = (BUILD_IT_TAG, f"{LAB_TAG_PREFIX}{source.lab}")
        return cell.tags + tuple(tag for tag in extra if tag not in cell.tags)
    return cell.tags


def _source_tags(tags: tuple[str, ...]) -> tuple[str, ...]:
    """Tags as the source keeps them: without those the build adds."""
    return tuple(t for t in tags if t != BUILD_IT_TAG and not t.startswith(LAB_TAG_PREFIX))


class SourceError(Exception):
    """A notebook source is malformed (the message names the file and line)."""


@dataclass(frozen=True)
class Edition:
    language: str
    role: str

    def variant_keys(self) -> tuple[str, ...]:
        """Variant keys from the most to the least specific ("" is the shared body)."""
        return (f"{self.role}-{self.language}", self.role, self.language, "")


@dataclass(frozen=True)
class SourceCell:
    id: str
    cell_type: str
    slide: str = "-"
    tags: tuple[str, ...] = ()
    only: str | None = None
    #: variant key -> text, in source order; "" is the shared body.
    variants: tuple[tuple[str, str], ...] = ()

    def in_edition(self, edition: Edition) -> bool:
        return self.only is None or self.only == edition.role

    def key_for(self, edition: Edition) -> str | None:
        present = dict(self.variants)
        for key in edition.variant_keys():
            if key in present:
                return key
        return None

    def text_for(self, edition: Edition) -> str:
        key = self.key_for(edition)
        return "" if key is None else dict(self.variants)[key]

    def with_text(self, key: str, text: str) -> SourceCell:
        variants = dict(self.variants)
        variants[key] = text
        ordered = [(k, variants[k]) for k, _ in self.variants]
        if key not in dict(self.variants):
            ordered.append((key, text))
        return replace(self, variants=tuple(ordered))


@dataclass(frozen=True)
class Source:
    name: str
    lab: str
    languages: tuple[str, ...]
    cells: tuple[SourceCell, ...] = field(default=())
    path: Path | None = None

    def editions(self) -> list[Edition]:
        return [Edition(language, role) for language in self.languages for role in ROLES]

    def notebook_path(self, edition: Edition) -> Path:
        return NOTEBOOKS / edition.language / edition.role / f"{self.name}.ipynb"


# ----------------------------------------------------------------------------- parsing


def _attributes(words: Sequence[str], where: str) -> dict[str, str]:
    attributes: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not value:
            raise SourceError(f"{where}: expected key=value, got {word!r}")
        attributes[key] = value
    return attributes


def parse_source(text: str, path: Path | None = None) -> Source:
    """Parse a source file's text (see the module docstring for the format)."""
    name = str(path) if path else "<source>"
    lines = text.split("\n")
    if not lines or not lines[0].startswith(f"{DIRECTIVE}notebook "):
        raise SourceError(f"{name}:1: a source starts with ':::notebook NAME lab=… languages=…'")
    head = lines[0][len(DIRECTIVE) :].split()
    header = _attributes(head[2:], f"{name}:1")
    languages = tuple(header.get("languages", "en").split(","))
    for language in languages:
        if language not in LANGUAGES:
            raise SourceError(f"{name}:1: unknown language {language!r}")
    cells: list[SourceCell] = []
    current: dict[str, Any] | None = None
    key = ""
    buffer: list[str] = []

    def flush_variant() -> None:
        if current is None:
            if any(line.strip() for line in buffer):
                raise SourceError(f"{name}: text before the first ':::cell'")
            return
        body = "\n".join(buffer).strip("\n")
        if key or body:
            current["variants"].append((key, body))

    def flush_cell() -> None:
        if current is not None:
            cells.append(
                SourceCell(
                    id=current["id"],
                    cell_type=current["cell_type"],
                    slide=current["slide"],
                    tags=current["tags"],
                    only=current["only"],
                    variants=tuple(current["variants"]),
                )
            )

    for number, line in enumerate(lines[1:], start=2):
        where = f"{name}:{number}"
        if not line.startswith(DIRECTIVE):
            buffer.append(line)
            continue
        words = line[len(DIRECTIVE) :].split()
        if words and words[0] == "cell":
            flush_variant()
            flush_cell()
            if len(words) < 3 or words[2] not in CELL_TYPES:
                raise SourceError(f"{where}: expected ':::cell ID markdown|code [key=value…]'")
            attributes = _attributes(words[3:], where)
            unknown = set(attributes) - {"slide", "tags", "only"}
            if unknown:
                raise SourceError(f"{where}: unknown cell attribute(s) {sorted(unknown)}")
            slide = attributes.get("slide", "-")
            if slide not in SLIDE_TYPES:
                raise SourceError(f"{where}: unknown slide type {slide!r}")
            only = attributes.get("only")
            if only is not None and only not in ROLES:
                raise SourceError(f"{where}: only= must be one of {ROLES}")
            if slide == "notes" and only != "instructor":
                raise SourceError(
                    f"{where}: speaker notes are lecturer material (they hold answers): "
                    "a slide=notes cell needs only=instructor"
                )
            if any(cell.id == words[1] for cell in cells):
                raise SourceError(f"{where}: duplicate cell id {words[1]!r}")
            current = {
                "id": words[1],
                "cell_type": words[2],
                "slide": slide,
                "tags": tuple(t for t in attributes.get("tags", "").split(",") if t),
                "only": only,
                "variants": [],
            }
            key, buffer = "", []
        elif len(words) == 1 and _valid_key(words[0]):
            flush_variant()
            if current is None:
                raise SourceError(f"{where}: a variant outside a cell")
            if any(k == words[0] for k, _ in current["variants"]):
                raise SourceError(f"{where}: variant {words[0]!r} given twice")
            key, buffer = words[0], []
        else:
            raise SourceError(f"{where}: unknown directive {line!r}")
    flush_variant()
    flush_cell()
    source = Source(head[1] if len(head) > 1 else "", header.get("lab", ""), languages,
                    tuple(cells), path)  # fmt: skip
    _validate(source, name)
    return source


def _valid_key(word: str) -> bool:
    role, _, language = word.partition("-")
    if not language:
        return word in LANGUAGES or word in ROLES
    return role in ROLES and language in LANGUAGES


def _validate(source: Source, name: str) -> None:
    if not source.name or not source.lab:
        raise SourceError(f"{name}:1: the header needs a notebook name and lab=")
    for cell in source.cells:
        keys = [key for key, _ in cell.variants]
        for key in keys:
            language = key.rpartition("-")[2] if "-" in key else key
            if language in LANGUAGES and language not in source.languages:
                raise SourceError(
                    f"{name}: cell {cell.id} has a {key!r} text, "
                    f"but the notebook's languages are {source.languages}"
                )
        for edition in source.editions():
            if cell.in_edition(edition) and cell.key_for(edition) is None:
                raise SourceError(
                    f"{name}: cell {cell.id} has no text for the "
                    f"{edition.language}/{edition.role} edition"
                )
        # A markdown cell shared by both languages would leave one of them untranslated.
        shared = cell.cell_type == "markdown" and len(source.languages) > 1 and "" in keys
        if shared and not all(k in keys for k in source.languages) and not _language_neutral(cell):
            raise SourceError(f"{name}: markdown cell {cell.id} needs one text per language")


def _language_neutral(cell: SourceCell) -> bool:
    return "language-neutral" in cell.tags


def write_source(source: Source) -> str:
    """The text of ``source`` in the source format (``parse_source`` reads it back equal)."""
    out = [f"{DIRECTIVE}notebook {source.name} lab={source.lab} "
           f"languages={','.join(source.languages)}"]  # fmt: skip
    for cell in source.cells:
        words = [f"{DIRECTIVE}cell", cell.id, cell.cell_type]
        if cell.slide != "-":
            words.append(f"slide={cell.slide}")
        if cell.tags:
            words.append(f"tags={','.join(cell.tags)}")
        if cell.only:
            words.append(f"only={cell.only}")
        out.append(" ".join(words))
        for key, text in cell.variants:
            if key:
                out.append(f"{DIRECTIVE}{key}")
            for line in text.split("\n"):
                if line.startswith(DIRECTIVE):
                    raise SourceError(f"cell {cell.id}: a line may not start with {DIRECTIVE!r}")
            if text:
                out.append(text)
    return "\n".join(out) + "\n"


def load_sources(names: Iterable[str] = ()) -> list[Source]:
    wanted = set(names)
    sources = []
    for path in sorted(SOURCES.glob("*.md")):
        source = parse_source(path.read_text(encoding="utf-8"), path)
        if not wanted or source.name in wanted or source.lab in wanted:
            sources.append(source)
    return sources


# ----------------------------------------------------------------------------- building


def build_notebook(source: Source, edition: Edition) -> Any:
    """The notebook of one edition, without outputs (nbformat object)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    cells = []
    for cell in source.cells:
        if not cell.in_edition(edition):
            continue
        text = cell.text_for(edition)
        made = new_markdown_cell(text) if cell.cell_type == "markdown" else new_code_cell(text)
        made["id"] = cell.id
        made.metadata["slideshow"] = {"slide_type": cell.slide}
        tags = edition_tags(source, cell)
        if tags:
            made.metadata["tags"] = list(tags)
        cells.append(made)
    notebook = new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    }
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.metadata["rise"] = {"scroll": True, "enable_chalkboard": False}
    notebook.metadata["ctxlab"] = {
        "lab": source.lab,
        "language": edition.language,
        "edition": edition.role,
        "source": f"notebooks/_src/{source.name}.md",
    }
    nbformat.validate(notebook)
    return notebook


def _cell_key(cell: dict[str, Any]) -> tuple[str, str, str, str, tuple[str, ...]]:
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else str(source)
    metadata = cell.get("metadata", {})
    return (
        str(cell.get("id")),
        str(cell["cell_type"]),
        text,
        str(metadata.get("slideshow", {}).get("slide_type", "-")),
        tuple(metadata.get("tags", [])),
    )


def drift(source: Source, edition: Edition) -> list[str]:
    """How the committed notebook of ``edition`` differs from what the source builds
    (cell ids, types, sources, slide types and tags; outputs are not compared)."""
    path = source.notebook_path(edition)
    if not path.is_file():
        return [f"{path.relative_to(REPO)} is missing: run `make notebooks`"]
    committed = json.loads(path.read_text(encoding="utf-8"))
    built = build_notebook(source, edition)
    problems = []
    have = [_cell_key(cell) for cell in committed["cells"]]
    want = [_cell_key(cell) for cell in built.cells]
    if [h[0] for h in have] != [w[0] for w in want]:
        problems.append(f"{path.relative_to(REPO)}: cell ids differ from the source")
    for h, w in zip(have, want, strict=False):
        if h != w:
            problems.append(f"{path.relative_to(REPO)}: cell {w[0]} differs from the source")
    if committed.get("metadata", {}).get("ctxlab") != built.metadata["ctxlab"]:
        problems.append(f"{path.relative_to(REPO)}: notebook metadata 'ctxlab' differs")
    return problems


def orphans(sources: Sequence[Source]) -> list[Path]:
    """Committed edition notebooks that no source builds."""
    made = {source.notebook_path(e) for source in sources for e in source.editions()}
    found = {p for language in LANGUAGES for p in (NOTEBOOKS / language).glob("*/*.ipynb")}
    return sorted(found - made)


def build_all(sources: Sequence[Source]) -> list[Path]:
    import nbformat

    written = []
    for source in sources:
        for edition in source.editions():
            path = source.notebook_path(edition)
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(build_notebook(source, edition), path)
            written.append(path)
    return written


# ----------------------------------------------------------------------------- harvest


def harvest(notebook_path: Path, repo: Path = REPO) -> list[str]:
    """Carry the cells of an edited edition back into its source; returns what changed.

    The source is the file the notebook's ``ctxlab.source`` metadata names, below ``repo``.
    """
    notebook = json.loads(notebook_path.read_text(encoding="utf-8"))
    meta = notebook.get("metadata", {}).get("ctxlab")
    if not meta:
        raise SourceError(f"{notebook_path}: no 'ctxlab' metadata: not built by nbsource.py")
    source_path = repo / meta["source"]
    source = parse_source(source_path.read_text(encoding="utf-8"), source_path)
    edition = Edition(meta["language"], meta["edition"])
    by_id = {cell.id: cell for cell in source.cells}
    seen: set[str] = set()
    changes: list[str] = []
    new_cells: list[SourceCell] = []
    new_by_id: dict[str, SourceCell] = {}
    for raw in notebook["cells"]:
        cell_id, cell_type, text, slide, tags = _cell_key(raw)
        tags = _source_tags(tags)
        old = by_id.get(cell_id)
        if old is None:
            if cell_type == "markdown" and len(source.languages) > 1:
                # Every language gets the new text; the others still need translating.
                variants = tuple((language, text) for language in source.languages)
                note = f"copied into {', '.join(source.languages)}: translate it"
            else:
                variants, note = (("", text),), "shared by every edition"
            made = SourceCell(cell_id, cell_type, slide, tags, _only_for(slide), variants)
            new_by_id[cell_id] = made
            changes.append(f"cell {cell_id}: new {cell_type} cell ({note})")
            continue
        seen.add(cell_id)
        updated = old
        key = old.key_for(edition)
        assert key is not None
        if old.text_for(edition) != text:
            updated = updated.with_text(key, text)
            what = f"the {key!r} variant" if key else "the shared text (every edition)"
            changes.append(f"cell {cell_id}: {what} updated")
        if (old.slide, old.tags) != (slide, tags):
            updated = replace(updated, slide=slide, tags=tags)
            if slide == "notes":
                updated = replace(updated, only="instructor")  # notes are lecturer material
            changes.append(f"cell {cell_id}: slide type / tags updated")
        by_id[cell_id] = updated
    # The edition's cells take the notebook's order (a cell moved in JupyterLab moves in the
    # source); a cell of the other role's edition stays after its source predecessor.
    notebook_order = [str(raw.get("id")) for raw in notebook["cells"]]
    attached: dict[str | None, list[SourceCell]] = {}
    anchor: str | None = None
    for cell in source.cells:
        if not cell.in_edition(edition):
            attached.setdefault(anchor, []).append(by_id[cell.id])
        elif cell.id in seen:
            anchor = cell.id
        else:
            changes.append(f"cell {cell.id}: deleted (from every edition)")
    kept_order = [cell.id for cell in source.cells if cell.id in seen]
    if [i for i in notebook_order if i in seen] != kept_order:
        changes.append("cells reordered as in the notebook")
    new_cells.extend(attached.get(None, []))
    for cell_id in notebook_order:
        new_cells.append(by_id[cell_id] if cell_id in seen else new_by_id[cell_id])
        new_cells.extend(attached.get(cell_id, []))
    if changes:
        result = replace(source, cells=tuple(new_cells))
        source_path.write_text(write_source(result), encoding="utf-8")
    return changes


def _only_for(slide: str) -> str | None:
    """The ``only=`` of a cell harvested with this slide type: notes are instructor-only."""
    return "instructor" if slide == "notes" else None


# ----------------------------------------------------------------------------- stats

#: Han (Chinese) characters: the CJK Unified Ideographs, their extensions A to H, and the
#: compatibility ideographs. Chinese punctuation (，。：) is not Han, but it is counted among
#: all non-space characters.
_HAN_RANGES = (
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2EE5F),
    (0x2F800, 0x2FA1F),
    (0x30000, 0x323AF),
)


def is_han(char: str) -> bool:
    """Whether ``char`` is a Han (Chinese) character."""
    code = ord(char)
    return any(low <= code <= high for low, high in _HAN_RANGES)


@dataclass(frozen=True)
class HanCount:
    """Han characters among all non-space characters of some text."""

    han: int = 0
    characters: int = 0

    @property
    def share(self) -> float:
        """Han characters / all non-space characters (0.0 for text with none)."""
        return self.han / self.characters if self.characters else 0.0

    def __add__(self, other: HanCount) -> HanCount:
        return HanCount(self.han + other.han, self.characters + other.characters)


def han_count(text: str) -> HanCount:
    """Count the Han characters and all non-space characters of ``text`` (Markdown included:
    the whole text of a cell, headings, tables and code spans alike)."""
    characters = [char for char in text if not char.isspace()]
    return HanCount(sum(1 for char in characters if is_han(char)), len(characters))


def prose_count(source: Source, edition: Edition) -> HanCount:
    """The :class:`HanCount` of the markdown cells (the prose) of one edition of a source."""
    total = HanCount()
    for cell in source.cells:
        if cell.cell_type == "markdown" and cell.in_edition(edition):
            total += han_count(cell.text_for(edition))
    return total


def stats(sources: Sequence[Source], per_notebook: bool = False) -> list[str]:
    """Lines of a table: per edition (language × role), the share of Han characters in the
    prose of every notebook of that edition; with ``per_notebook``, one line per notebook
    too. Only the languages the sources have appear."""
    editions = [Edition(language, role) for language in LANGUAGES for role in ROLES]
    lines = [f"{'edition':<16} {'notebooks':>9} {'Han':>7} {'non-space':>10} {'share':>7}"]
    for edition in editions:
        having = [source for source in sources if edition.language in source.languages]
        if not having:
            continue
        counts = [(source, prose_count(source, edition)) for source in having]
        total = sum((count for _, count in counts), HanCount())
        name = f"{edition.language}/{edition.role}"
        lines.append(
            f"{name:<16} {len(having):>9} {total.han:>7} {total.characters:>10} {total.share:>7.1%}"
        )
        if per_notebook:
            for source, count in counts:
                lines.append(
                    f"  {source.lab:<14} {'':>9} {count.han:>7} {count.characters:>10}"
                    f" {count.share:>7.1%}"
                )
    return lines


# ----------------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="write every edition of the given labs (default: all)")
    build.add_argument("labs", nargs="*", help="lab numbers or names, e.g. 11.3")
    sub.add_parser("check", help="exit 1 when a committed edition differs from its source")
    harvest_cmd = sub.add_parser("harvest", help="carry edits of an edition back to its source")
    harvest_cmd.add_argument("notebooks", nargs="+", type=Path)
    stats_cmd = sub.add_parser(
        "stats",
        help="per edition: Han characters / all non-space characters of the markdown cells",
    )
    stats_cmd.add_argument("labs", nargs="*", help="lab numbers or names (default: all)")
    stats_cmd.add_argument("--per-notebook", action="store_true", help="also one line per notebook")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            for path in build_all(load_sources(args.labs)):
                print(f"wrote {path.relative_to(REPO)}")
            return 0
        if args.command == "stats":
            for line in stats(load_sources(args.labs), per_notebook=args.per_notebook):
                print(line)
            return 0
        if args.command == "check":
            sources = load_sources()
            problems = [p for s in sources for e in s.editions() for p in drift(s, e)]
            problems += [f"{p.relative_to(REPO)}: no source builds it" for p in orphans(sources)]
            for problem in problems:
                print(problem)
            return 1 if problems else 0
        for path in args.notebooks:
            changes = harvest(path)
            for change in changes or ["nothing to carry back"]:
                print(f"{path}: {change}")
        if any(True for _ in args.notebooks):
            print("now run `make notebooks` to rebuild and re-execute every edition")
        return 0
    except SourceError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
