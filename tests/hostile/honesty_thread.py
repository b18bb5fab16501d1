# Hostile submission: the child reports its own honesty: the reference called from another thread.
# lab: 11.2
# bwrap: ok
# plain: ok
import threading, ctxlab

def group_interactions(entries):
    box = []
    thread = threading.Thread(target=lambda: box.append(ctxlab.group_interactions(entries)))
    thread.start(); thread.join()
    return box[0] if box else []
