# Hostile submission: the child can change later runs: a .pth file in site-packages.
# lab: 11.2
# bwrap: ok
# plain: refused
try:
    with open("{{SITE}}/zzz_owned.pth", "w", encoding="utf-8") as stream:
        stream.write("import os; os.environ['OWNED'] = '1'\n")
except OSError:
    pass


def group_interactions(entries):
    return []
