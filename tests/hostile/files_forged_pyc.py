# Hostile submission: the child can change later runs: a forged __pycache__ .pyc with the source's mtime and size.
# lab: 11.2
# bwrap: ok
# plain: refused
import os, sys, importlib.util
try:
    source = "{{REPO}}/ctxlab/lab/grading/engine.py"
    cache = importlib.util.cache_from_source(source)
    st = os.stat(source)
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    code = compile("passed = True\n", source, "exec")
    import marshal
    data = importlib.util.MAGIC_NUMBER + b"\0\0\0\0" + int(st.st_mtime).to_bytes(4, "little") + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little") + marshal.dumps(code)
    with open(cache, "wb") as stream:
        stream.write(data)
    os.utime(cache, ns=(st.st_atime_ns, st.st_mtime_ns))
except OSError:
    pass


def group_interactions(entries):
    return []
