# Hostile submission: the child can reach the parent: kill(-1, SIGSTOP) every process it can see.
# lab: 11.2
# bwrap: ok crashed timeout
# plain: unsafe:SIGSTOP
import os, signal
try:
    os.kill(-1, signal.SIGSTOP)
except OSError:
    pass


def group_interactions(entries):
    return []
