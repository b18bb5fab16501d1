# Hostile submission: no limits: sys.setswitchinterval(1000) and a busy thread.
# lab: 11.2
# bwrap: ok timeout crashed
# plain: ok timeout crashed
import sys, threading
sys.setswitchinterval(1000)

def group_interactions(entries):
    threading.Thread(target=lambda: [0 for _ in iter(int, 1)], daemon=True).start()
    return []
