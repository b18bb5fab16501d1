#!/usr/bin/env bash
# Gradescope autograder setup for ctxlab (written by `ctxlab grade --gradescope-bundle DIR`).
# Gradescope runs this once, as root, when it builds the autograder image.
# A ctxlab wheel or sdist zipped beside this file (ctxlab-*.whl / ctxlab-*.tar.gz) is
# installed; otherwise ctxlab==@CTXLAB_VERSION@ from the package index. Jinja2 makes the
# class report (report.html); the lab extra would bring it with all of JupyterLab.
set -euo pipefail
AUTOGRADER="${AUTOGRADER:-/autograder}"
apt-get install -y --no-install-recommends python3 python3-venv >/dev/null
python3 -m venv "$AUTOGRADER/ctxlab-venv"
shopt -s nullglob
packages=("$AUTOGRADER"/source/ctxlab-*.whl "$AUTOGRADER"/source/ctxlab-*.tar.gz)
if [ ${#packages[@]} -gt 0 ]; then
    "$AUTOGRADER/ctxlab-venv/bin/pip" install --quiet "${packages[0]}" jinja2
else
    "$AUTOGRADER/ctxlab-venv/bin/pip" install --quiet "ctxlab==@CTXLAB_VERSION@" jinja2
fi
"$AUTOGRADER/ctxlab-venv/bin/python" -c "import ctxlab.lab.grading.batch"
