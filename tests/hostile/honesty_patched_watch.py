# Hostile submission: the child reports its own honesty: a patched _Watch.
# lab: 11.2
# bwrap: ok
# plain: ok
import ctxlab
import ctxlab.lab.grading.perform as perform

class _Blind:
    def __init__(self, codes): self.hit = False
    def __enter__(self): return self
    def __exit__(self, *exc): return None

perform._Watch = _Blind

def group_interactions(entries):
    return ctxlab.group_interactions(entries)
