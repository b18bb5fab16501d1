# Hostile submission: no limits: a syntax error.
# lab: 11.2
# bwrap: invalid
# plain: invalid
def group_interactions(entries)
    return []
