# Hostile submission: the child can change later runs: shadow the package with tests/ctxlab/__init__.py.
# lab: 11.2
# bwrap: ok
# plain: refused
import os
try:
    os.makedirs("{{REPO}}/tests/ctxlab", exist_ok=True)
    with open("{{REPO}}/tests/ctxlab/__init__.py", "w") as stream:
        stream.write("raise SystemExit\n")
except OSError:
    pass


def group_interactions(entries):
    return []
