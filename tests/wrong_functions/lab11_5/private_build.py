"""Lab 11.5, wrong: computes its answer with ctxlab's private ctxlab.context._build.

fails: uses ctxlab's solution (the report's notice; not passed)
"""

from ctxlab.context import _build, check_options


def build_context(active_path, *, max_tokens, reserved_output, safety_margin, estimate_tokens):
    budget = check_options(max_tokens, reserved_output, safety_margin)
    return _build(active_path, budget, estimate_tokens, "zh")
