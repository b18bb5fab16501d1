# Hostile submission: the child can change later runs: a root conftest.py.
# lab: 11.2
# bwrap: ok
# plain: refused
try:
    with open("{{REPO}}/conftest.py", "w", encoding="utf-8") as stream:
        stream.write('import pytest\n')
except OSError:
    pass


def group_interactions(entries):
    return []
