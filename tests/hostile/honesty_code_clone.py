# Hostile submission: the child reports its own honesty: a code clone with another co_firstlineno.
# lab: 11.2
# bwrap: ok
# plain: ok
import types, ctxlab.interactions as mod

_code = mod.group_interactions.__code__.replace(co_firstlineno=1)
_clone = types.FunctionType(_code, mod.__dict__)

def group_interactions(entries):
    return _clone(entries)
