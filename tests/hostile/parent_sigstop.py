# Hostile submission: the child can reach the parent: SIGSTOP the grader.
# lab: 11.2
# bwrap: ok crashed timeout
# plain: unsafe:SIGSTOP
import os, signal
try:
    os.kill(os.getppid(), signal.SIGSTOP)
except OSError:
    pass


def group_interactions(entries):
    return []
