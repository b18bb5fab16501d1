# Hostile submission: the child can change later runs: sitecustomize.py in site-packages.
# lab: 11.2
# bwrap: ok
# plain: refused
try:
    with open("{{SITE}}/sitecustomize.py", "w", encoding="utf-8") as stream:
        stream.write("print('owned')\n")
except OSError:
    pass


def group_interactions(entries):
    return []
