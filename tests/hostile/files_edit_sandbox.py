# Hostile submission: the child can change later runs: rewrite grading/sandbox.py.
# lab: 11.2
# bwrap: ok
# plain: refused
try:
    with open("{{REPO}}/ctxlab/lab/grading/sandbox.py", "a", encoding="utf-8") as stream:
        stream.write('\ndef grade_file(*a, **k): pass\n')
except OSError:
    pass


def group_interactions(entries):
    return []
