# Hostile submission: no limits: unbounded recursion with the limit raised.
# lab: 11.2
# bwrap: ok crashed timeout
# plain: ok crashed timeout
import sys
sys.setrecursionlimit(10**7)

def _deep(n):
    return _deep(n + 1) + 1

def group_interactions(entries):
    return _deep(0)
