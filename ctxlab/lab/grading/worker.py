"""The child process's side: answer a student's function's calls for the grader.

A spawned child (:func:`main`, on ``PATH.py KEYWORD LAB``) imports the student's file; a
forked one already has the function (:func:`serve`). Its standard input and output become a
private channel (:func:`channel`: ``print`` goes to standard error). It answers
``{"ready": true}`` (or ``import_error``, ``missing``), then each request, a pickle from
the trusted grader, with the call's plain-JSON record on one ASCII line (the grader never
unpickles what it sends). It exits when the grader closes the channel.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import struct
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any, BinaryIO, Final

__all__ = ["HEADER", "MODULE_NAME", "channel", "main", "pack", "serve"]

#: A request's header: the length of the pickle that follows (8 bytes, big-endian).
HEADER: Final = struct.Struct(">Q")
#: The name the student's file is imported as (in the child only).
MODULE_NAME: Final = "ctxlab_student_impl"


def pack(payload: object) -> bytes:
    """One request, as the grader writes it: header + pickle."""
    blob = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(blob)) + blob


def channel() -> tuple[BinaryIO, BinaryIO]:
    """(requests, replies): the original fds 0 and 1, moved out of the student's way."""
    private = os.dup(0), os.dup(1)  # not inherited by processes the student's code starts
    if sys.platform == "win32":  # no newline translation on the channel
        import msvcrt

        for fd in private:
            msvcrt.setmode(fd, os.O_BINARY)
    requests = os.fdopen(private[0], "rb", buffering=0)
    replies = os.fdopen(private[1], "wb", buffering=0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)  # C-level writes and subprocesses' stdout go to standard error
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as we do
    sys.stdout = sys.stderr
    return requests, replies


def _reply(replies: BinaryIO, message: dict[str, Any]) -> None:
    try:
        line = json.dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as error:
        line = json.dumps({"worker_error": f"the reply could not be written as JSON: {error}"})
    replies.write(line.encode("ascii") + b"\n")


def _read_exactly(stream: BinaryIO, count: int) -> bytes | None:
    chunks: list[bytes] = []
    while count > 0:
        chunk = stream.read(count)
        if not chunk:
            return None
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def _request(stream: BinaryIO) -> Any:
    """The next request; when the grader has closed the channel, exit."""
    header = _read_exactly(stream, HEADER.size)
    blob = None if header is None else _read_exactly(stream, HEADER.unpack(header)[0])
    if blob is None:
        os._exit(0)
    return pickle.loads(blob)


def _exit_on_hangup(stream: BinaryIO) -> None:
    """Exit as soon as the grader closes the channel, even during a call (Windows has no
    ``poll``: there the grader ends the child)."""
    import select

    if not hasattr(select, "poll"):
        return
    hangup = select.poll()
    hangup.register(stream.fileno(), 0)  # no event asked for: a hang-up or an error only

    def wait() -> None:
        hangup.poll()
        os._exit(0)

    threading.Thread(target=wait, name="ctxlab-hangup", daemon=True).start()


def _import(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module
    spec.loader.exec_module(module)
    return module


def _kind(value: object) -> str:
    from ctxlab.lab.grading.plain import type_name

    return "None" if value is None else f"a {type_name(value)}"


def serve(
    function: Callable[..., Any],
    requests: BinaryIO,
    replies: BinaryIO,
    references: frozenset[CodeType] = frozenset(),
) -> None:
    """Answer ``function``'s calls, watched for ``references``; never returns."""
    from ctxlab.lab.grading.perform import perform

    _reply(replies, {"ready": True})
    _exit_on_hangup(requests)
    while True:
        args, kwargs, arg_names = _request(requests)
        try:
            record = perform(function, args, kwargs, arg_names=arg_names, references=references)
        except BaseException as error:  # pragma: no cover - perform catches the student's
            record = {"worker_error": f"{type(error).__name__}: {error}"}
        _reply(replies, record)


def main(argv: list[str] | None = None) -> int:
    """Serve the calls of the function of one student's file."""
    path_text, keyword, _lab = sys.argv[1:] if argv is None else argv
    requests, replies = channel()
    from ctxlab.lab.grading.perform import safe_message

    path = Path(path_text)
    sys.path.insert(0, str(path.parent))
    try:
        module = _import(path)
    except BaseException as error:  # whatever the file raises at import, SystemExit too
        _reply(replies, {"import_error": f"{type(error).__name__}: {safe_message(error)}"})
        return 0
    function: Callable[..., Any] | None = getattr(module, keyword, None)
    if not callable(function):
        _reply(replies, {"missing": keyword, "got": _kind(function)})
        return 0
    serve(function, requests, replies)
    return 0
