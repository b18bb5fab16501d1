# Hostile submission: the child can change later runs: append to tests/conftest.py.
# lab: 11.2
# bwrap: ok
# plain: refused
try:
    with open("{{REPO}}/tests/conftest.py", "a", encoding="utf-8") as stream:
        stream.write('\npytest_collection_modifyitems = None\n')
except OSError:
    pass


def group_interactions(entries):
    return []
