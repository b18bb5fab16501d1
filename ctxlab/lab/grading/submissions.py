"""Which student handed in what: the submissions of ``ctxlab grade`` and each lab's code.

:func:`collect` names the students: a folder of folders is a class, one folder per student;
any other file is named by its file name without the extension. :func:`lab_sources` finds the
labs of one notebook (``.ipynb``, either language and edition) by its *build-it* cells' tags
(``ctxlab-build-it``, ``ctxlab-lab-11.N``), else their ids (``11-3-b02``), else the cell
defining the lab's function; the imports the code takes from earlier cells come along and
IPython-only lines become comments. A ``.py`` is graded for ``--lab``. What cannot be graded
is a :class:`LabSource` with ``problem`` set. A symbolic link (or a Windows junction) handed
in is never followed: a student's folder holding one (outside hidden folders) is ``refused``.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import json
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

BUILD_IT_TAG: Final = "ctxlab-build-it"
#: The function each lab's build-it cell defines (as :func:`~ctxlab.lab.grading.lab_keyword`).
KEYWORDS: Final[dict[str, str]] = {
    "11.1": "parse_compaction_entry",
    "11.2": "group_interactions",
    "11.3": "build_context",
    "11.4": "create_compaction_entry",
    "11.5": "build_context",
}
#: Submissions larger than this are not read (a notebook of a lab is far smaller).
MAX_BYTES: Final = 20 * 1024 * 1024
SUFFIXES: Final = (".ipynb", ".py")


@dataclass(frozen=True)
class Submission:
    """One file a student handed in; ``refused``: why it is not graded (a link)."""

    student: str
    path: Path
    refused: str = ""


@dataclass(frozen=True)
class LabSource:
    """One lab of one submission: the code to grade, or the ``problem`` why there is none
    (``status``: ``invalid``, or ``refused`` for a link)."""

    student: str
    lab: str
    path: Path
    code: str = ""
    problem: str = ""
    status: str = "invalid"


#: IO_REPARSE_TAG_SYMLINK and IO_REPARSE_TAG_MOUNT_POINT (a junction); ``stat`` defines them
#: only on Windows.
_WINDOWS_LINKS: Final = (0xA000000C, 0xA0000003)


def _is_link(path: Path) -> bool:
    """Is ``path`` a symbolic link (or a Windows junction)? Never follows it."""
    try:
        info = path.lstat()
    except OSError:
        return False
    tag = getattr(info, "st_reparse_tag", 0)  # Windows only
    return stat.S_ISLNK(info.st_mode) or tag in _WINDOWS_LINKS


def _walk(entry: Path) -> tuple[list[Path], list[Path]]:
    """The submission files at or below ``entry`` and the links there, neither followed;
    hidden names (``.ipynb_checkpoints``) are not read."""
    files: list[Path] = []
    links: list[Path] = []
    waiting = [entry]
    while waiting:
        path = waiting.pop()
        if path.name.startswith("."):
            continue
        if _is_link(path):
            links.append(path)
        elif path.is_dir():
            with contextlib.suppress(OSError):
                waiting.extend(path.iterdir())
        elif path.is_file() and path.suffix.lower() in SUFFIXES:
            files.append(path)
    return sorted(files), sorted(links)


def _refusal(links: Sequence[Path]) -> str:
    more = f" (and {len(links) - 1} more)" if len(links) > 1 else ""
    return (
        f"{links[0]} is a symbolic link{more}: ctxlab grade grades only the files a student"
        " handed in and never follows a link"
    )


def collect(inputs: Sequence[Path]) -> list[Submission]:
    """The submissions in ``inputs`` (files and folders), each with its student's name
    (see the module); ``FileNotFoundError`` for an input that does not exist. An input
    itself is the lecturer's and may be a link."""
    found: list[Submission] = []
    for given in inputs:
        if not given.exists():
            raise FileNotFoundError(f"{given}: no such file or folder")
        if _is_link(given):  # named by the lecturer: theirs to point anywhere
            given = given.resolve()
        if given.is_file():
            found.append(Submission(given.stem, given))
            continue
        for entry in sorted(given.iterdir()):  # a file, or a folder of one student
            files, links = _walk(entry)
            folder = entry.is_dir() and not _is_link(entry)
            name = entry.name if folder or entry.suffix.lower() not in SUFFIXES else entry.stem
            if links:
                found.append(Submission(name, links[0], refused=_refusal(links)))
            else:
                found.extend(Submission(name, path) for path in files)
    return found


@dataclass(frozen=True)
class _Cell:
    """A code cell of a notebook: where it stands, its id, tags and source."""

    index: int
    id: str
    tags: tuple[str, ...]
    text: str


def _code_cells(data: object) -> list[_Cell]:
    """The code cells of a notebook (every cell checked); ``ValueError`` when it is none."""
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise ValueError("it is not a Jupyter notebook (no list of cells)")
    cells = []
    for index, raw in enumerate(data["cells"]):
        if not isinstance(raw, dict) or not isinstance(raw.get("cell_type"), str):
            raise ValueError(f"cell {index + 1} is not a notebook cell")
        metadata = raw.get("metadata", {})
        tags = metadata.get("tags", []) if isinstance(metadata, dict) else []
        tags = tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else ()
        text = raw.get("source")
        if isinstance(text, list) and all(isinstance(line, str) for line in text):
            text = "".join(text)
        if not isinstance(text, str):
            raise ValueError("a cell's source is neither text nor a list of lines")
        if raw["cell_type"] == "code":
            cells.append(_Cell(index, str(raw.get("id", "")), tags, text))
    return cells


_LAB_TAG = re.compile(r"ctxlab-lab-(.+)")
_CELL_ID = re.compile(r"(\d+)-(\w+)-b02")


def _notebook_lab(data: dict[str, Any]) -> str | None:
    meta = data.get("metadata", {})
    ctx = meta.get("ctxlab") if isinstance(meta, dict) else None
    lab = ctx.get("lab") if isinstance(ctx, dict) else None
    return lab if isinstance(lab, str) else None


def _build_it(cells: list[_Cell], notebook_lab: str | None) -> dict[str, list[_Cell]]:
    """lab -> its build-it cells, in notebook order (by tags; else by ids; else by content)."""
    labs: dict[str, list[_Cell]] = {}
    for cell in cells:
        if BUILD_IT_TAG in cell.tags:
            named = [m.group(1) for t in cell.tags if (m := _LAB_TAG.fullmatch(t))]
            for lab in named or [notebook_lab or "?"]:
                labs.setdefault(lab, []).append(cell)
    if not labs:  # a notebook built before the tags: the build-it cell's id
        for cell in cells:
            if match := _CELL_ID.fullmatch(cell.id):
                labs.setdefault(f"{match.group(1)}.{match.group(2)}", []).append(cell)
    if labs or notebook_lab not in KEYWORDS:
        return labs
    keyword = KEYWORDS[notebook_lab]  # last: the code cell that defines the function
    defining = [cell for cell in cells if f"def {keyword}(" in cell.text]
    return {notebook_lab: defining[-1:]} if defining else {}


_MAGIC = re.compile(r"^(\s*)([%!].*)$")


def _plain_python(text: str) -> str:
    """IPython-only lines (``%time``, ``!pip``) kept as comments."""
    return "\n".join(_MAGIC.sub(r"\1# (IPython) \2", line) for line in text.split("\n"))


def _free_names(tree: ast.AST) -> set[str]:
    loaded: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return loaded - bound - set(dir(builtins))


def _imports_for(names: set[str], earlier: Iterable[_Cell]) -> list[str]:
    """Import statements of ``earlier`` cells that bind ``names`` (one name each)."""
    lines: list[str] = []
    wanted = set(names)
    for cell in earlier:
        try:
            tree = ast.parse(_plain_python(cell.text))
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                head = "import "
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                head = f"from {node.module} import "
            else:
                continue
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                if name in wanted and alias.name != "*":
                    rename = f" as {alias.asname}" if alias.asname else ""
                    lines.append(f"{head}{alias.name}{rename}")
                    wanted.discard(name)
    return lines


def _module(student: str, lab: str, path: Path, cells: list[_Cell], before: list[_Cell]) -> str:
    body = "\n\n".join(_plain_python(cell.text) for cell in cells)
    tree = ast.parse(body)  # SyntaxError: the caller's problem line
    imports = _imports_for(_free_names(tree), before)
    ids = ", ".join(cell.id or f"#{cell.index + 1}" for cell in cells)
    head = [f"# ctxlab grade: Lab {lab} of {path.name} ({student}), cells {ids}"]
    if imports:
        head += ["# imported by earlier cells of the notebook:", *imports]
    return "\n".join(head) + "\n\n" + body + "\n"


def _syntax(error: SyntaxError) -> str:
    where = f"line {error.lineno}" if error.lineno else "somewhere"
    return f"syntax error in the build-it code, {where}: {error.msg}"


def _read(path: Path) -> bytes:
    """The file's bytes, never through a link (``O_NOFOLLOW`` where the platform has it)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    with os.fdopen(os.open(path, flags), "rb") as stream:
        if os.fstat(stream.fileno()).st_size > MAX_BYTES:
            raise ValueError(f"it is larger than {MAX_BYTES // (1024 * 1024)} MB")
        return stream.read()


def lab_sources(submission: Submission, only_lab: str | None = None) -> list[LabSource]:
    """The labs found in ``submission`` (only ``only_lab`` when given), each with its code or
    the reason it cannot be graded."""
    student, path = submission.student, submission.path
    wanted = only_lab or "?"

    def problem(reason: str, lab: str = wanted, status: str = "invalid") -> list[LabSource]:
        return [LabSource(student, lab, path, problem=reason, status=status)]

    def source(lab: str, lab_cells: list[_Cell]) -> LabSource:
        if lab not in KEYWORDS:
            return LabSource(student, lab, path, problem=f"unknown lab {lab!r} in a build-it tag")
        before = [cell for cell in cells if cell.index < lab_cells[0].index]
        try:
            return LabSource(student, lab, path, _module(student, lab, path, lab_cells, before))
        except SyntaxError as error:
            return LabSource(student, lab, path, problem=_syntax(error))

    if submission.refused or _is_link(path):
        return problem(submission.refused or _refusal([path]), status="refused")
    try:
        raw = _read(path)
    except (OSError, ValueError) as error:
        return problem(f"cannot read the file: {error}")
    if path.suffix.lower() == ".py":
        if only_lab is None:
            return problem("a .py file is graded for the lab given with --lab")
        try:
            code = raw.decode("utf-8")
            ast.parse(code)
        except UnicodeDecodeError:
            return problem("the file is not UTF-8 text")
        except SyntaxError as error:
            return problem(_syntax(error).replace("build-it code", "file"))
        return [LabSource(student, only_lab, path, code)]
    try:
        data = json.loads(raw.decode("utf-8"))
        cells = _code_cells(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        return problem(f"malformed notebook: {error}")
    notebook_lab = _notebook_lab(data)
    found = _build_it(cells, notebook_lab)
    if only_lab is not None:
        found = {lab: c for lab, c in found.items() if lab == only_lab}
    if not found:
        lab = only_lab or notebook_lab or "?"
        if lab not in KEYWORDS:
            known = ", ".join(KEYWORDS)
            return problem(f"unknown lab {lab!r} (no build-it cell of the labs {known})", lab)
        return problem(
            f"missing build-it cell: no code cell tagged {BUILD_IT_TAG!r} for Lab {lab}", lab
        )
    return [source(lab, lab_cells) for lab, lab_cells in sorted(found.items())]
