# Hostile submission: no limits: raw terminal escape sequences in output and messages.
# lab: 11.2
# bwrap: ok
# plain: ok
ESC = "\x1b]0;owned\x07\x1b[2J\x1b[31m\u202e"

def group_interactions(entries):
    print(ESC * 3)
    raise ValueError(ESC + "boom")
