"""Write the misconception catalogue's evidence from its buggy files (issue 33).

    python tests/misconception_evidence.py          # rewrite ctxlab/lab/grading/catalogue/*.json
    python tests/misconception_evidence.py --check  # exit 1 when a file is not what it writes

For each lab, the candidate inputs are every call its checks make (recorded on ctxlab's
reference) whose arguments are plain data or one of ctxlab's own functions (an estimator),
and a few crafted ones. Each misconception's buggy file,
``tests/misconceptions/lab11_N/<slug>.py``, goes through the lab's checks: the rows it
fails are its ``signature`` (the rows the mistake explains; its ``rule`` is the chapter's
when one of them is a chapter row). It and the reference are then called on every
candidate; the evidence is the fewest inputs (at most :data:`MOST`, the smallest first)
that tell the buggy answer apart from the reference's and, together, from every other
entry's buggy answer and from each of :data:`PLACEHOLDERS` where the candidates allow it
(an answer that is not a crash of one of Python's exceptions first). The first input is
one where the buggy answer differs from the reference's; a later one is too where such an
input still tells another entry apart, else one where the buggy file answers as the
reference does. Then, up to :data:`AT_LEAST` inputs, more where the mistake shows, each made
by a row none of the others comes from where one is (one input can be a coincidence: a path
where two ids happen to agree). A mistake on the chapter's rules is asked only inputs where
``tests/chapter_only`` answers as the reference does, and its answers are compared as the
chapter decides them (:func:`~ctxlab.lab.grading.misconceptions.canonical`): there every
refusal is alike, so a refusal is poor evidence and counts not towards :data:`AT_LEAST`; a
mistake that shows only as refusals takes them from up to :data:`REFUSALS` rows. Only the
signature, the rule, the evidence and the inputs it names are written; the rest of each
entry (title, hint, quote, ...) is the catalogue's own text.
``tests/test_misconception_evidence.py`` runs ``--check``.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import importlib
import json
import runpy
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ctxlab.lab.grading import drawn, engine, set_isolation
from ctxlab.lab.grading.calls import Trial
from ctxlab.lab.grading.labs import LABS, load
from ctxlab.lab.grading.misconceptions import FOLDER, canonical, probe_call
from ctxlab.lab.grading.perform import CallRecord, perform
from ctxlab.lab.grading.plain import encode

ROOT = Path(__file__).resolve().parent.parent
EVIDENCE = ROOT / "tests" / "misconceptions"
CHAPTER_ONLY = ROOT / "tests" / "chapter_only"
#: At most this many inputs per misconception tell it apart from the others.
MOST = 3
#: At least this many inputs where the mistake shows, where the candidates have them.
AT_LEAST = 2
#: A mistake that shows only as refusals (every refusal looks alike on the chapter's rules)
#: takes refusals from up to this many rows.
REFUSALS = 5


def _draft(value: object) -> Callable[..., Any]:
    return lambda *args, **kwargs: value


#: What a first draft returns before it is written (``pass``, ``return []``, its input
#: unchanged): the evidence of every misconception must tell it apart from each of these, so
#: an unwritten function gets no hint about a mistake it never made.
PLACEHOLDERS: tuple[Callable[..., Any], ...] = (
    *map(_draft, (None, [], (), "", {}, 0)),
    lambda *args, **kwargs: args[0],
)
#: The seed the random rows draw from when a buggy file's signature is taken (the inputs
#: chosen as evidence never come from a random row).
SEED = 2026


def _plain(value: object) -> Any:
    """``value`` as plain data, or None when part of it is not (an opaque object)."""
    data = encode(value)
    text = json.dumps(data)
    return None if '"opaque"' in text else data


def _function_name(value: object) -> str | None:
    """``module:name`` of one of ctxlab's own functions or module-level callables (an
    estimator such as ``ctxlab.fixtures:opening_estimator``), found again by that name."""
    module, qualname = getattr(value, "__module__", ""), getattr(value, "__qualname__", "")
    if str(module).startswith("ctxlab.") and "<" not in str(qualname):
        found: Any = importlib.import_module(str(module))
        for part in str(qualname).split("."):
            found = getattr(found, part, None)
        if found is value:
            return f"{module}:{qualname}"
    for name, loaded in sorted(sys.modules.items()):
        if name.startswith("ctxlab."):
            for attribute, item in sorted(vars(loaded).items()):
                if item is value and not attribute.startswith("__"):
                    return f"{name}:{attribute}"
    return None


def _as_input(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
    plain_args = [_plain(item) for item in args]
    if any(item is None and arg is not None for item, arg in zip(plain_args, args, strict=True)):
        return None
    plain_kwargs: dict[str, Any] = {}
    for name, value in sorted(kwargs.items()):
        if callable(value):
            named = _function_name(value)
            if named is None:
                return None
            plain_kwargs[name] = {"function": named}
        else:
            plain_kwargs[name] = _plain(value)
            if plain_kwargs[name] is None and value is not None:
                return None
    return {"args": plain_args, "kwargs": plain_kwargs}


def _key(data: dict[str, Any]) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _crafted() -> dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]]:
    """Inputs beyond the checks' own, where a mistake shows that no check input reveals
    with plain data (the checks' bad estimators are made per call)."""
    from ctxlab import fixtures as fx
    from ctxlab.lab.grading import lab11_3

    bad = lab11_3.budget(31, estimate_tokens=lab11_3.negative_for_user)
    return {"11.3": [((fx.opening_path(),), bad)]}


def candidates(lab: str) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Every plain-data call the lab's checks make, and the crafted ones, by key; and the
    row that first makes each (``crafted`` for the crafted ones)."""
    spec = load(lab)
    found: dict[str, dict[str, Any]] = {}
    rows: dict[str, str] = {}
    for args, kwargs in _crafted().get(lab, []):
        data = _as_input(args, kwargs)
        assert data is not None, lab
        found[_key(data)] = data
        rows[_key(data)] = "crafted"
    row = ""

    def recorder(*args: Any, **kwargs: Any) -> Any:
        data = _as_input(args, kwargs)
        if data is not None:
            found.setdefault(_key(data), data)
            rows.setdefault(_key(data), row)
        return spec.reference(*args, **kwargs)

    def unsent(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> CallRecord:
        return perform(recorder, args, kwargs, arg_names=spec.arg_names)

    for check in spec.checks:
        if drawn.is_random(check.key):  # its inputs depend on a seed: evidence must not
            continue
        row = check.key
        with contextlib.suppress(Exception):  # a check of the reference passes anyway
            # the checks' own arguments, not the copies sent to the call (their estimators
            # are found again by identity)
            check.run(Trial(recorder, spec.arg_names, caller=unsent))
    return found, rows


def _record(function: Callable[..., Any], data: dict[str, Any], names: tuple[str, ...]) -> Any:
    args, kwargs = probe_call(data)
    return perform(function, args, kwargs, arg_names=names)


def evidence(
    lab: str,
) -> tuple[dict[str, Any], dict[str, list[list[Any]]], dict[str, list[str]]]:
    """(the inputs named, each misconception's evidence, the rows its buggy file fails)."""
    spec = load(lab)
    inputs, made_by = candidates(lab)
    order = sorted(inputs, key=lambda key: (len(json.dumps(inputs[key])), key))

    def records(function: Callable[..., Any]) -> dict[str, Any]:
        return {key: _record(function, inputs[key], spec.arg_names) for key in order}

    reference = records(spec.reference)
    # The chapter-only version takes the other side of every choice the chapter leaves open:
    # where it and the reference differ, the chapter does not decide the answer.
    chapter_only = runpy.run_path(str(CHAPTER_ONLY / f"lab11_{lab.split('.')[1]}.py"))
    decided = [
        key
        for key, record in records(chapter_only[spec.keyword]).items()
        if canonical(record, "chapter") == canonical(reference[key], "chapter")
    ]
    folder = EVIDENCE / f"lab11_{lab.split('.')[1]}"
    raw: dict[str, dict[str, Any]] = {}
    failed: dict[str, list[str]] = {}
    rule: dict[str, str] = {}
    for item in spec.catalogue:
        function = runpy.run_path(str(folder / f"{item.slug}.py"), run_name="evidence")
        buggy = function[spec.keyword]
        raw[item.id] = records(buggy)
        with drawn.seeded(SEED):  # the random rows' part of a signature, reproducibly
            rows = engine._run_checks(spec, spec.checks, buggy)[0]
        failed[item.id] = [row.key for row in rows if not row.passed]
        kinds = {spec.row(key).source for key in failed[item.id]}
        rule[item.id] = "chapter" if "chapter" in kinds else "ctxlab"
    for index, placeholder in enumerate(PLACEHOLDERS):
        raw[f"placeholder-{index}"] = records(placeholder)
    # A function that refuses every input with one of the errors the reference raises (an
    # over-strict check that refuses the chapter's own example) makes no mistake of the
    # catalogue's that shows as a refusal: the evidence must tell those apart too.
    refusals = {
        str(record["raised"]["base"]) for record in reference.values() if "raised" in record
    }
    for error in sorted(refusals):
        raw[f"refuses-all-{error}"] = {key: {"raised": {"base": error}} for key in order}
    # Nor does a function that is right but refuses every path holding a compaction (one it
    # cannot find again: ids compared with `is`, say).
    raw["refuses-compactions"] = {
        key: {"raised": {"base": "ValueError"}} if _compacted(inputs[key]) else reference[key]
        for key in order
    }
    # Each answer as each rule compares it (misconceptions.canonical).
    views = {
        view: {
            name: {key: canonical(answer[key], view) for key in order}
            for name, answer in [("reference", reference), *raw.items()]
        }
        for view in ("chapter", "ctxlab")
    }
    chosen: dict[str, list[list[Any]]] = {}
    for item in spec.catalogue:
        view = rule[item.id]
        answers = views[view]
        own, reference_answers = answers[item.id], answers["reference"]
        asked = decided if view == "chapter" else order
        revealing = [key for key in asked if own[key] != reference_answers[key]]
        agreeing = [key for key in asked if own[key] == reference_answers[key]]
        others = [other for other in answers if other not in (item.id, "reference")]

        def telling(key: str, own: dict[str, Any] = own, view: str = view) -> bool:
            """Is the answer good evidence? A crash is not (any bug crashes), nor is a refusal
            where every refusal looks alike (on the chapter's rules: a ValueError)."""
            return not _crash(own[key], view) and (view != "chapter" or "raised" not in own[key])

        picked: list[str] = []
        while revealing and len(picked) < MOST:
            alike = [o for o in others if all(answers[o][k] == own[k] for k in picked)]
            if picked and not alike:
                break

            def left(
                key: str,
                alike: list[str] = alike,
                own: dict[str, Any] = own,
                answers: dict[str, dict[str, Any]] = answers,
            ) -> int:
                return sum(answers[o][key] == own[key] for o in alike)

            def rank(key: str, left: Callable[[str], int] = left) -> tuple[int, bool]:
                return left(key), not telling(key)

            best = min((k for k in revealing if k not in picked), key=rank, default=None)
            if picked and (best is None or left(best) == len(alike)):
                # No input where the mistake shows tells the rest apart: one where the buggy
                # file answers as the reference does may (it refuses what the other accepts).
                best = min((k for k in agreeing if k not in picked), key=rank, default=None)
            if best is None or (picked and left(best) == len(alike)):
                break
            picked.append(best)
        # A coincidence is no evidence: the mistake shows also on inputs of other rows, and
        # on the chapter's rules not only as refusals.
        while sum(map(telling, picked)) < AT_LEAST:
            seen = {made_by[key] for key in picked}
            more = [k for k in revealing if k not in picked and telling(k)]
            fresh = [k for k in more if made_by[k] not in seen] or more
            if not fresh and len(picked) < REFUSALS:
                # A mistake that shows only as refusals: more refusals (made by other rows
                # first), so that another mistake that refuses some of the same inputs is not
                # taken for it.
                refused = [k for k in revealing if k not in picked and not _crash(own[k], view)]
                fresh = [k for k in refused if made_by[k] not in seen] or refused
            if not fresh:
                break
            picked.append(fresh[0])
        chosen[item.id] = [[key, own[key]] for key in picked]
    named = sorted({key for pairs in chosen.values() for key, _ in pairs})
    return {key: inputs[key] for key in named}, chosen, failed


def _compacted(data: dict[str, Any]) -> bool:
    """Does the input's path (its first argument, as plain data) hold a compaction entry?"""
    path = data["args"][0] if data["args"] else None
    return isinstance(path, list) and any(
        isinstance(item, dict) and item.get("t") == "CompactionSessionEntry" for item in path
    )


def _crash(answer: Any, rule: str) -> bool:
    """Is ``answer`` a raise of one of Python's own exceptions (not a ctxlab error; on the
    chapter's rules, not a ValueError: a refusal)?"""
    raised = answer.get("raised") if isinstance(answer, dict) else None
    refusal = "ValueError" if rule == "chapter" else None
    return isinstance(getattr(builtins, str(raised), None), type) and raised != refusal


def _path(lab: str) -> Path:
    return FOLDER / f"lab11_{lab.split('.')[1]}.json"


def written(lab: str) -> str:
    """The lab's catalogue file with its evidence as the buggy files give it now."""
    data = json.loads(_path(lab).read_text(encoding="utf-8"))
    inputs, chosen, failed = evidence(lab)
    compact: dict[str, str] = {}

    def one_line(value: Any) -> str:  # each input and answer on one line of its own
        marker = f"@{len(compact)}@"
        compact[marker] = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        return marker

    for entry in data["misconceptions"]:
        entry["signature"] = failed[entry["id"]]
        kinds = {load(lab).row(key).source for key in failed[entry["id"]]}
        entry["rule"] = "chapter" if "chapter" in kinds else "ctxlab"  # as evidence() has it
        entry["evidence"] = [[key, one_line(answer)] for key, answer in chosen[entry["id"]]]
    data["inputs"] = {key: one_line(value) for key, value in inputs.items()}
    text = json.dumps(data, ensure_ascii=False, indent=1)
    for marker, value in compact.items():
        text = text.replace(f'"{marker}"', value)
    return text + "\n"


def main(argv: list[str]) -> int:
    set_isolation("in-process")
    stale = []
    for lab in LABS:
        text = written(lab)
        if "--check" in argv:
            if _path(lab).read_text(encoding="utf-8") != text:
                stale.append(lab)
        else:
            _path(lab).write_text(text, encoding="utf-8")
    if stale:
        print(f"stale evidence for {', '.join(stale)}: run python tests/misconception_evidence.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
