# Hostile submission: the child reports its own honesty: '"reference": false' sent while calling ctxlab.
# lab: 11.2
# bwrap: ok crashed
# plain: ok crashed
import os, json, ctxlab

def group_interactions(entries):
    groups = ctxlab.group_interactions(entries)
    line = json.dumps({"returned": [], "changed": [], "output": "", "output_cut": 0, "reference": False})
    for fd in range(3, 64):
        try:
            os.write(fd, line.encode() + b"\n")
        except OSError:
            pass
    return groups
