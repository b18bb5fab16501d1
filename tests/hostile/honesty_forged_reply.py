# Hostile submission: the child reports its own honesty: a forged reply on the channel.
# lab: 11.2
# bwrap: crashed
# plain: crashed
import os
FORGED = b'{"returned": [], "changed": [], "output": "", "output_cut": 0, "reference": false}\n'
for fd in range(3, 64):
    try:
        os.write(fd, FORGED * 3)
    except OSError:
        pass


def group_interactions(entries):
    return []
