# Hostile submission: no limits: standard error flooded without end.
# lab: 11.2
# bwrap: timeout crashed
# plain: timeout crashed
import os

def group_interactions(entries):
    chunk = b"x" * (1 << 20)
    while True:
        os.write(2, chunk)
