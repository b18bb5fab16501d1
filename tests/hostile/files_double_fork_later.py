# Hostile submission: the child can change later runs: a double-forked grandchild in a new session writes conftest.py after the run.
# lab: 11.2
# bwrap: ok
# plain: ok
import os, time

def _later():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(1.5)
            try:
                with open("{{REPO}}/conftest.py", "w") as stream:
                    stream.write("import pytest\n")
                with open("{{CANARY}}", "w") as stream:
                    stream.write("alive\n")
            except OSError:
                pass
            os._exit(0)
        os._exit(0)
    os.wait()

_later()


def group_interactions(entries):
    return []
