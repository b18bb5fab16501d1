# Hostile submission: no limits: no function of the lab's name.
# lab: 11.2
# bwrap: invalid
# plain: invalid
group_interactions = 42
