# Hostile submission: no limits: a slow import, then os._exit in every call.
# lab: 11.2
# bwrap: crashed timeout
# plain: crashed timeout
import os, time
time.sleep(1.2)

def group_interactions(entries):
    os._exit(0)
