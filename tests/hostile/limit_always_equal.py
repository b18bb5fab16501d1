# Hostile submission: no limits: an always-equal object.
# lab: 11.2
# bwrap: ok
# plain: ok
class Equal(list):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __hash__(self): return 0

def group_interactions(entries):
    return Equal()
