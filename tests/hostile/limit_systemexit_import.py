# Hostile submission: no limits: SystemExit at import.
# lab: 11.2
# bwrap: invalid
# plain: invalid
raise SystemExit(0)
