# Hostile submission: the child reports its own honesty: a decoy bound before the watch starts.
# lab: 11.2
# bwrap: ok
# plain: ok
from ctxlab import group_interactions as _decoy

def group_interactions(entries):
    return _decoy(entries)
