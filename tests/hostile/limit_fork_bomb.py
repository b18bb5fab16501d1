# Hostile submission: no limits: a (bounded) fork bomb.
# lab: 11.2
# bwrap: ok crashed timeout
# plain: ok crashed timeout
import os, time

def group_interactions(entries):
    for _ in range(200):
        try:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
        except OSError:
            break
    return []
