# Hostile submission: the child reports its own honesty: importlib.reload of the module.
# lab: 11.2
# bwrap: ok
# plain: ok
import importlib, ctxlab.interactions as mod

def group_interactions(entries):
    return importlib.reload(mod).group_interactions(entries)
