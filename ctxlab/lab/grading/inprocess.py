"""The in-process caller: the student's function run in this process (issue 35, item 2).

One of the places a lab's rows can run (:class:`~.engine.Caller`): here, each row in a
daemon thread with a time limit, or under the trace-hook clock where no thread can start
(Pyodide; :mod:`.runner`, :mod:`.steps`). Only this caller needs the repairs below, since
only here does the student's code share the grader's process:

Each check sees ctxlab as grading found it (:class:`~.runner.Pristine`): a name of a ctxlab
module that the student's code rebound -- ``ctxlab.context.build_context``,
``ctxlab.fixtures.opening_path`` -- is put back before each check and when a lab's file
loads (:func:`as_found`), and the student's own binding is put back after the run. The
objects behind those names are kept too (:mod:`.kept`): what a student's code (or a thread
it left running) changed in them with ``object.__setattr__`` is put back before each check,
and the report names it. Every check runs with the grader's switch interval
(:class:`~.runner.Sealed`).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from types import CodeType, ModuleType
from typing import Any

from ctxlab import errors, fixtures
from ctxlab.lab.grading import child, misconceptions, report
from ctxlab.lab.grading.declare import Row
from ctxlab.lab.grading.kept import KeptObjects
from ctxlab.lab.grading.runner import Outcome, Pristine, Sealed, run_check

__all__ = ["InProcess", "as_found", "keep", "repair"]

#: Loaded now, with the ctxlab modules they load, so that all are kept as grading found them.
_LOADED = (errors, fixtures, child, misconceptions, report)

#: ctxlab's modules (not the teaching layer) as they were when grading loaded, and then
#: each lab's module as it was when it loaded.
_PRISTINE = Pristine()
for _name, _module in sorted(sys.modules.items()):
    if _name == "ctxlab" or (_name.startswith("ctxlab.") and not _name.startswith("ctxlab.lab")):
        _PRISTINE.keep(_module, tables=True)  # its private tables too (no caches there)
_PRISTINE.keep(time)  # a student's ``time.monotonic = ...`` lasts no longer than its run

#: The objects behind those names, and then behind each lab module's (see :mod:`.kept`).
_KEPT = KeptObjects()
for _name, _module in sorted(sys.modules.items()):
    if _name == "ctxlab" or (_name.startswith("ctxlab.") and not _name.startswith("ctxlab.lab")):
        _KEPT.keep(_module)


@contextlib.contextmanager
def as_found() -> Iterator[None]:
    """ctxlab's modules as grading found them, for as long as a lab's file loads (it binds
    ctxlab's functions as they were, whatever the notebook rebound)."""
    replaced = _PRISTINE.restore()
    try:
        yield
    finally:
        _PRISTINE.put_back(replaced)


def keep(*modules: ModuleType, objects: bool = True) -> None:
    """Keep ``modules`` (a lab's file and the grading modules it checks with) as they are
    now: their names put back before each check, like ctxlab's own, and (``objects``) what
    their objects hold too."""
    for module in modules:
        _PRISTINE.keep(module)
        if objects:
            _KEPT.keep(module)


def repair() -> list[str]:
    """Put back what was changed in ctxlab's objects; where, in plain words."""
    return _KEPT.repair()


class InProcess:
    """Runs each row here, on ``function``, with ctxlab as grading found it; ``repaired``
    collects where ctxlab's objects were put back. Use it in a ``with`` block: the student's
    own bindings and the notebook's switch interval are put back when it ends."""

    def __init__(
        self,
        function: Callable[..., Any],
        arg_names: tuple[str, ...],
        references: frozenset[CodeType],
        repaired: list[str],
    ) -> None:
        self.function = function
        self.arg_names = arg_names
        self.references = references
        self.repaired = repaired
        self._sealed = Sealed()
        self._students: list[tuple[ModuleType, str, object]] = []

    def __enter__(self) -> InProcess:
        self._students = _PRISTINE.restore()
        self._sealed.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._sealed.__exit__()
        _PRISTINE.restore()
        _PRISTINE.put_back(self._students)
        self._note(_KEPT.repair())

    def _note(self, where: list[str]) -> None:
        self.repaired.extend(w for w in where if w not in self.repaired)

    def run(self, row: Row, limit: float) -> Outcome:
        """One row, within ``limit`` seconds, after putting back what an earlier row's call
        rebound or changed."""
        _PRISTINE.restore()
        self._note(_KEPT.repair())
        self._sealed.reset()
        return run_check(
            row.run,
            self.function,
            self.arg_names,
            name=f"ctxlab-check-{row.key}",
            limit=limit,
            references=self.references,
        )
