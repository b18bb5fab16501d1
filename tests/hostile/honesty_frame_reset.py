# Hostile submission: the child reports its own honesty: watch.hit reset through the frames.
# lab: 11.2
# bwrap: ok
# plain: ok
import sys, ctxlab

def group_interactions(entries):
    result = ctxlab.group_interactions(entries)
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if type(value).__name__ == "_Watch":
                value.hit = False
        frame = frame.f_back
    return result
