# Hostile submission: the child can change later runs: rewrite grading/child.py (the child's side).
# lab: 11.2
# bwrap: ok
# plain: refused
try:
    with open("{{REPO}}/ctxlab/lab/grading/child.py", "w", encoding="utf-8") as stream:
        stream.write('raise SystemExit\n')
except OSError:
    pass


def group_interactions(entries):
    return []
