"""pytest's collection of notebooks/ (issue 27).

``--nbval`` (pyproject.toml's addopts) compares the stored outputs of every notebook it
collects. The student editions are committed without outputs (``nbsource.py build`` writes
them so: no answer stands on the page before the student runs the cell), so nbval has
nothing to compare there: only the instructor editions are collected.
``tests/test_student_run.py`` executes every student edition top to bottom instead.
"""

import os

# The lab checks' random rows draw from this seed in nbval's kernels too (they inherit this
# process's environment), so the stored outputs, which show it, compare equal.
os.environ.setdefault("CTXLAB_SEED", "2026")

collect_ignore_glob = ["*/student/*.ipynb"]
