# Hostile submission: the child reports its own honesty: watch.hit reset through gc.
# lab: 11.2
# bwrap: ok
# plain: ok
import gc, ctxlab

def group_interactions(entries):
    result = ctxlab.group_interactions(entries)
    for obj in gc.get_objects():
        if type(obj).__name__ == "_Watch":
            obj.hit = False
    return result
