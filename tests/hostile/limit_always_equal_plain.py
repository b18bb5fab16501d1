# Hostile submission: no limits: an always-equal object that is not a list.
# lab: 11.2
# bwrap: ok
# plain: ok
class Equal:
    def __eq__(self, other): return True
    def __len__(self): return 3
    def __iter__(self): return iter(())

def group_interactions(entries):
    return Equal()
