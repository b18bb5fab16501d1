# Hostile submission: the child can change later runs: rewrite grading/worker.py.
# lab: 11.2
# bwrap: ok
# plain: refused
try:
    with open("{{REPO}}/ctxlab/lab/grading/worker.py", "w", encoding="utf-8") as stream:
        stream.write('raise SystemExit\n')
except OSError:
    pass


def group_interactions(entries):
    return []
