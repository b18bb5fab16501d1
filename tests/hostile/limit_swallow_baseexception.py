# Hostile submission: no limits: a loop that swallows BaseException.
# lab: 11.2
# bwrap: timeout
# plain: timeout
import time

def group_interactions(entries):
    while True:
        try:
            time.sleep(0.05)
        except BaseException:
            pass
