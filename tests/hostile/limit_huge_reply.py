# Hostile submission: no limits: a result far too large.
# lab: 11.2
# bwrap: ok timeout
# plain: ok timeout
def group_interactions(entries):
    return [[n] * 1000 for n in range(100_000)]
