# Hostile submission: the child can change later runs: a grandchild that re-executes itself with an empty environment.
# lab: 11.2
# bwrap: ok
# plain: ok
import os, sys

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        code = "import time; time.sleep(1.5); open('{{CANARY}}', 'w').write('alive')"
        try:
            os.execve(sys.executable, [sys.executable, "-I", "-S", "-c", code], {})
        except OSError:
            os._exit(0)
    os._exit(0)
os.wait()


def group_interactions(entries):
    return []
