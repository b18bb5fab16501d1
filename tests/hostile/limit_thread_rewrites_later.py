# Hostile submission: no limits: a thread that outlives its call and changes shared objects.
# lab: 11.2
# bwrap: ok
# plain: ok
import threading, time
import ctxlab.lab.grading.plain as plain

def _later():
    time.sleep(0.2)
    plain.encode = lambda value: []

def group_interactions(entries):
    threading.Thread(target=_later, daemon=True).start()
    return []
