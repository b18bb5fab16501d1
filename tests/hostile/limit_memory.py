# Hostile submission: no limits: memory flood.
# lab: 11.2
# bwrap: ok crashed
# plain: ok crashed
def group_interactions(entries):
    hoard = []
    while True:
        hoard.append(bytearray(64 * 1024 * 1024))
