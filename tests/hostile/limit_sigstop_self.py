# Hostile submission: no limits: the child stops itself.
# lab: 11.2
# bwrap: timeout crashed
# plain: timeout crashed
import os, signal

def group_interactions(entries):
    os.kill(os.getpid(), signal.SIGSTOP)
    return []
