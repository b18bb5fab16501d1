# Hostile submission: the child can change later runs: delete grading/sandbox.py and child.py.
# lab: 11.2
# bwrap: ok
# plain: refused
import os
for name in ("sandbox.py", "child.py"):
    try:
        os.unlink("{{REPO}}/ctxlab/lab/grading/" + name)
    except OSError:
        pass


def group_interactions(entries):
    return []
