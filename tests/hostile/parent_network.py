# Hostile submission: the child can reach the parent: a socket to the grader's machine.
# lab: 11.2
# bwrap: ok
# plain: ok
import socket
try:
    socket.create_connection(("127.0.0.1", 22), timeout=0.5).close()
except OSError:
    pass
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 9))
except OSError:
    pass


def group_interactions(entries):
    return []
