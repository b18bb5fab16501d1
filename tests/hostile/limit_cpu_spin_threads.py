# Hostile submission: no limits: busy threads started at import.
# lab: 11.2
# bwrap: ok timeout crashed
# plain: ok timeout crashed
import threading

def _spin():
    while True:
        pass

for _ in range(8):
    threading.Thread(target=_spin, daemon=True).start()


def group_interactions(entries):
    return []
