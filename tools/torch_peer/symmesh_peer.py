"""symmesh's answer for one agreement case, from `symmesh.plan` (the same library call as
`symmesh plan --json`), in the oracle's terms: output placements, each input's placements
as the chosen strategy consumes them (aten's argument order), and the cost in µs."""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
try:
    import symmesh
except ImportError:
    sys.path.insert(0, os.path.join(SOURCE_DIR, "build", "python"))
    import symmesh


def _cost(value):
    return math.inf if isinstance(value, str) else float(value)


def answer(case, mode):
    """(output placements, [input placements...], cost_us) of symmesh's chosen strategy
    (the priority-queue search: its path's cost). Devices per host are the case's, or 1
    where torch's CPU default applies."""
    shapes, placements = case["shapes"], case["placements"]
    if case["aten"] in ("addmm", "baddbmm"):  # aten: bias, a, b
        bias, a, b = shapes
        bias_in, a_in, b_in = placements
    else:  # mm, bmm: a, b; linear: a, w[, bias]
        a, b = shapes[:2]
        a_in, b_in = placements[:2]
        bias = shapes[2] if len(shapes) == 3 else None
        bias_in = placements[2] if len(shapes) == 3 else None
    plan = symmesh.plan(case["aten"], a, b, case["mesh"], [a_in, b_in], bias=bias,
                        bias_in=bias_in, gpus_per_host=case["host_devices"] or 1,
                        placement_search=mode)
    chosen = plan["chosen"]
    search = plan.get("placement_search") or {}
    # The search's strategy costs its path (what torch's OpSpec holds), not the greedy
    # planner's steps that then run; without a goal it fell back to the full expansion.
    cost = search["path_cost_us"] if search.get("found") else chosen["cost_us"]
    return (tuple(chosen["output_placements"]),
            [tuple(p) for p in chosen["input_placements"]],
            _cost(cost))
