# Hostile submission: the child reports its own honesty: a marshal clone of the reference.
# lab: 11.2
# bwrap: ok
# plain: ok
import marshal, types, ctxlab.interactions as mod

_clone = types.FunctionType(marshal.loads(marshal.dumps(mod.group_interactions.__code__)), mod.__dict__)

def group_interactions(entries):
    return _clone(entries)
