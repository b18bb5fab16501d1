# Hostile submission: no limits: disk flood in the working folder.
# lab: 11.2
# bwrap: ok crashed timeout
# plain: ok crashed timeout
import os, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

def group_interactions(entries):
    chunk = b"z" * (1 << 20)
    for n in range(12):
        try:
            with open(f"flood-{n}", "wb") as stream:
                for _ in range(40):
                    stream.write(chunk)
        except OSError:
            pass
    return []
