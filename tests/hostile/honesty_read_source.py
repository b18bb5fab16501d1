# Hostile submission: the child reports its own honesty: ctxlab's source read from the grader's disk.
# lab: 11.2
# bwrap: ok
# plain: plagiarism
import ctxlab

def group_interactions(entries):
    namespace = {"__name__": "ctxlab.interactions"}
    with open("{{REPO}}/ctxlab/interactions.py", encoding="utf-8") as stream:
        exec(compile(stream.read(), "interactions.py", "exec"), namespace)
    return namespace["group_interactions"](entries)
