# Hostile submission: the child can reach the parent: ptrace(PTRACE_ATTACH) the grader.
# lab: 11.2
# bwrap: ok crashed
# plain: unsafe:write its memory
import ctypes, os
try:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace(16, os.getppid(), 0, 0)  # PTRACE_ATTACH
except OSError:
    pass


def group_interactions(entries):
    return []
