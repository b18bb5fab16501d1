# Hostile submission: no limits: the channel closed from inside.
# lab: 11.2
# bwrap: crashed
# plain: crashed
import os

def group_interactions(entries):
    for fd in range(0, 64):
        try:
            os.close(fd)
        except OSError:
            pass
    return []
