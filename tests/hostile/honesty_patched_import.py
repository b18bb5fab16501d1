# Hostile submission: the child reports its own honesty: builtins.__import__ patched.
# lab: 11.2
# bwrap: ok
# plain: ok
import builtins, ctxlab
_real = builtins.__import__
builtins.__import__ = lambda name, *a, **k: _real(name, *a, **k)

def group_interactions(entries):
    return ctxlab.group_interactions(entries)
