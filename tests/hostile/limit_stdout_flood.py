# Hostile submission: no limits: a huge print in every call.
# lab: 11.2
# bwrap: ok crashed timeout
# plain: ok crashed timeout
def group_interactions(entries):
    print("y" * 50_000_000)
    return []
