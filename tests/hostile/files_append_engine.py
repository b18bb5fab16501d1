# Hostile submission: the child can change later runs: append to grading/engine.py.
# lab: 11.2
# bwrap: ok
# plain: refused
try:
    with open("{{REPO}}/ctxlab/lab/grading/engine.py", "a", encoding="utf-8") as stream:
        stream.write('\nVerdict.passed = True\n')
except OSError:
    pass


def group_interactions(entries):
    return []
