"""The installed kernel answers every request of a burst, as Run All sends them.

ipykernel 7.0-7.3 now and then leave a shell request unread (ipython/ipykernel#1554): the
reply to one request is sent raw on the shell socket and eats the wake-up of a request that
arrives meanwhile, which then waits until some new connection reaches the kernel. In
JupyterLab that is a cell stuck at ``[*]`` with the kernel idle; in the browser tests it was
a Run All that never ended. constraints.txt pins ipykernel 6.31.0, which sends replies
through the stream that reads requests. This test fails on the kernels with the bug: one
client sends bursts of small execute requests with short random gaps, so that requests keep
arriving while replies go out, and no new connection is ever made to wake a stalled kernel.
Measured with this test's own client: ipykernel 7.3.0 stalled in the first burst or two of
every run, 6.31.0 and 7.4.0 answered every request.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from queue import Empty
from typing import Any

import pytest

pytestmark = pytest.mark.packaging

BURSTS = 12
REQUESTS_PER_BURST = 100
#: A kernel with the bug never answers a stranded request; a slow machine answers late.
REPLY_TIMEOUT_S = 60.0


@pytest.fixture
def kernel_client(tmp_path: Path) -> Iterator[Any]:
    """The installed ipykernel in its own process, and a client talking to it over TCP."""
    from jupyter_client import BlockingKernelClient
    from jupyter_client.connect import write_connection_file

    connection_file, _ = write_connection_file(str(tmp_path / "kernel.json"))
    kernel = subprocess.Popen(
        [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    client = BlockingKernelClient(connection_file=connection_file)
    client.load_connection_file()
    client.start_channels()
    try:
        client.kernel_info()
        client.get_shell_msg(timeout=REPLY_TIMEOUT_S)
        yield client
    finally:
        client.stop_channels()
        kernel.kill()
        kernel.wait(timeout=30)


def test_every_request_of_a_burst_gets_its_reply(kernel_client: Any) -> None:
    shuffle = random.Random(11)  # the same gaps on every run
    for burst in range(BURSTS):
        waiting = set()
        for number in range(REQUESTS_PER_BURST):
            waiting.add(kernel_client.execute(f"x = {number}", store_history=False))
            time.sleep(shuffle.random() * 0.002)
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        while waiting and time.monotonic() < deadline:
            try:
                reply = kernel_client.get_shell_msg(timeout=0.5)
            except Empty:
                continue
            waiting.discard(reply["parent_header"].get("msg_id"))
        assert not waiting, (
            f"burst {burst}: {len(waiting)} of {REQUESTS_PER_BURST} execute requests got no"
            f" reply in {REPLY_TIMEOUT_S:.0f} s: the kernel left them unread"
            " (ipython/ipykernel#1554, ipykernel 7.0-7.3; constraints.txt pins 6.31.0)"
        )
