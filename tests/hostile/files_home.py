# Hostile submission: the child can change later runs: write ~/.bashrc and ~/.config.
# lab: 11.2
# bwrap: ok
# plain: ok
import os
for name in (".bashrc", ".pythonrc.py"):
    try:
        with open(os.path.join(os.path.expanduser("~"), name), "a") as stream:
            stream.write("echo owned\n")
    except OSError:
        pass


def group_interactions(entries):
    return []
