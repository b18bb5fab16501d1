# Hostile submission: the child reports its own honesty: the grader's modules patched, frames peeked.
# lab: 11.2
# bwrap: ok
# plain: ok
import sys
import ctxlab.lab.grading.calls as calls
import ctxlab.lab.grading.report as report
calls.Trial.returns = lambda self, *a, **k: None
calls.fail = lambda *a, **k: None

def group_interactions(entries):
    frame = sys._getframe(1)
    while frame is not None:
        if "expected" in frame.f_locals:
            return frame.f_locals["expected"]
        frame = frame.f_back
    return []
