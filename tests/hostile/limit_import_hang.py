# Hostile submission: no limits: the import never ends.
# lab: 11.2
# bwrap: timeout
# plain: timeout
while True:
    pass


def group_interactions(entries):
    return []
