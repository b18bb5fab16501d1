# Hostile submission: the child reports its own honesty: sys.setprofile(None) / sys.monitoring freed first.
# lab: 11.2
# bwrap: ok
# plain: ok
import sys, ctxlab

def group_interactions(entries):
    sys.setprofile(None)
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None:
        for tool in range(6):
            try:
                monitoring.free_tool_id(tool)
            except Exception:
                pass
    return ctxlab.group_interactions(entries)
