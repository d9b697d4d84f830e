"""The cases symmesh's strategy choice is compared with torch's on: ops, shapes, meshes and
every combination of input placements, and the fixed sample CI runs.

A case is a dict: op, shapes and placements in aten's argument order (addmm/baddbmm: bias,
a, b; linear: a, w[, bias]), mesh shape, devices per host (None: torch's CPU default of 1),
and a name. Placements per mesh dim range over Shard of every tensor dim, Replicate and
Partial(sum) (Partial(avg) as an input adds nothing new: the same rules with avg).

Bounds (each list is finite and small enough to run; `count()` gives the sizes): every
combination of every input (the bias included) where an (op, mesh) group has at most
GROUP_CAP[mesh dims] of them, else a fixed-seed sample of that many. So every combination
on the 1-D meshes (4), (1), and for mm, bmm, linear and linear 3d on the 2-D meshes
(2, 2), (1, 4), (4, 1) and (2, 2) with 2 devices per host; samples for addmm, baddbmm and
linear+bias there (a bias multiplies the combinations by 9) and for every op on the 3-D
meshes (2, 2, 2), (2, 1, 2) and (2, 2, 2) with 2 devices per host (bmm alone has 15,625
combinations there, each a 729-strategy torch expansion; torch's priority-queue search takes
up to a second on a 3-input op). SLOW_GROUP_CAP lowers the cap where torch takes seconds a
case.
"""

import itertools
import random

# Shapes divisible by 8 on every dim, so any placement is shardable on every mesh here, and
# distinct per dim, so a swapped dim cannot go unnoticed.
OPS = {
    "mm": [(64, 32), (32, 48)],
    "bmm": [(8, 16, 32), (8, 32, 24)],
    "addmm": [(48,), (64, 32), (32, 48)],
    "baddbmm": [(24,), (8, 16, 32), (8, 32, 24)],
    "linear": [(16, 32), (48, 32)],
    "linear+bias": [(16, 32), (48, 32), (48,)],
    "linear 3d": [(4, 8, 32), (16, 32)],
}
ONE_AND_TWO_D = [((4,), None), ((1,), None), ((2, 2), None), ((1, 4), None), ((4, 1), None),
                 ((2, 2), 2)]
THREE_D = [((2, 2, 2), None), ((2, 1, 2), None), ((2, 2, 2), 2)]
GROUP_CAP = {1: 10**6, 2: 400, 3: 80}
# Groups where torch itself is slow (seconds per case, measured on the 2-core CI machine,
# 2026-12-06): a 3-D linear on a 3-D mesh takes torch's expansion 15-35 s (the decomposed
# view's strategies), baddbmm's priority-queue search 3-7 s. Their caps, for the full run
# and for CI's sample.
SLOW_GROUP_CAP = {("linear 3d", 3): (3, 0), ("baddbmm", 3): (20, 1)}
SAMPLE_SEED = 2613


def aten_op(op):
    """The op symmesh and torch are asked for ('linear 3d' is linear)."""
    return op.split(" ")[0].split("+")[0]


def placements_for(rank, mesh_ndim):
    """Every placement list of a rank-`rank` tensor on a mesh of `mesh_ndim` dims."""
    one_dim = [f"S({d})" for d in range(rank)] + ["R", "P(sum)"]
    return [list(p) for p in itertools.product(one_dim, repeat=mesh_ndim)]


def _combinations(op, mesh_shape):
    per_input = [placements_for(len(s), len(mesh_shape)) for s in OPS[op]]
    return itertools.product(*per_input)


def _case(op, mesh_shape, host_devices, placements):
    host = f"{host_devices}/host" if host_devices else "1/host"
    text = " x ".join("[" + ",".join(p) + "]" for p in placements)
    return {"op": op, "aten": aten_op(op), "shapes": OPS[op], "placements": [list(p) for p in placements],
            "mesh": tuple(mesh_shape), "host_devices": host_devices,
            "name": f"{op} on {'x'.join(map(str, mesh_shape))} ({host}): {text}"}


def all_cases():
    """Every case of the bounds above, in a fixed order."""
    rng = random.Random(SAMPLE_SEED)
    for mesh_shape, host in ONE_AND_TWO_D + THREE_D:
        for op in OPS:
            combos = list(_combinations(op, mesh_shape))
            cap = SLOW_GROUP_CAP.get((op, len(mesh_shape)), (GROUP_CAP[len(mesh_shape)],))[0]
            if len(combos) > cap:
                combos = rng.sample(combos, cap)
            for placements in combos:
                yield _case(op, mesh_shape, host, placements)


def sample_cases(per_group=4, seed=SAMPLE_SEED):
    """CI's sample: `per_group` cases of each (op, mesh, host) group of all_cases(), drawn
    with a fixed seed."""
    groups = {}
    for case in all_cases():
        groups.setdefault((case["op"], case["mesh"], case["host_devices"]), []).append(case)
    rng = random.Random(seed)
    for (op, mesh_shape, host), cases in groups.items():
        n = SLOW_GROUP_CAP.get((op, len(mesh_shape)), (0, per_group))[1]
        yield from rng.sample(cases, min(n, len(cases)))


def count():
    sizes = {}
    for case in all_cases():
        key = (case["mesh"], case["host_devices"])
        sizes[key] = sizes.get(key, 0) + 1
    return sizes
