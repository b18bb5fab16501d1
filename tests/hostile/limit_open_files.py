# Hostile submission: no limits: open files without end.
# lab: 11.2
# bwrap: ok
# plain: ok
def group_interactions(entries):
    kept = []
    try:
        while True:
            kept.append(open("/dev/null"))
    except OSError:
        pass
    return []
