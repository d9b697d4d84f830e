"""torch 2.13's own sharding propagation, asked live on fake-process-group CPU meshes.

Nothing here restates torch's algorithm: every answer comes from torch's
`ShardingPropagator.propagate_op_sharding_non_cached` (the dispatcher's own entry point) or,
for `linear`, which torch has no strategy for and decomposes (`t`, `view`, `mm`/`addmm`), from
running `torch.nn.functional.linear` on DTensors. Two module-level names of
torch/distributed/tensor/_sharding_prop.py are wrapped, not replaced:

- `_select_min_cost_strategy`: recorded, to read the chosen OpSpec's redistribute cost
  (torch's `propagate` returns placements only);
- `_expand_single_dim_strategy_to_mesh`: in "priority-queue" mode it is swapped for torch's
  own `_dijkstra_expand_single_dim_strategy_to_mesh` (single_dim_strategy.py), falling back to
  the full expansion where that returns None, which is how PyTorch PR 177799 wires the
  search in; torch 2.13 ships the search but does not call it.

Devices per host: torch asks `_mesh_resources.num_devices_per_host("cpu")`, i.e.
`torch.cpu.device_count()` = 1, so on a CPU every mesh dim is priced as inter-host. A case
can set another count; the oracle then answers that question instead (a one-line patch of
the count, nothing else).

Set iteration order: the priority-queue search iterates `set`s of Partial placements
(`_get_neighbor_placements`), whose order follows the string hash of "sum" and "avg" and so
PYTHONHASHSEED. `partial_order()` says which order this process has; the agreement tool runs
each order in its own process.
"""

import contextlib
import functools
import math
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
from torch.distributed.tensor import _sharding_prop
from torch.distributed.tensor._dtensor_spec import DTensorSpec, TensorMeta
from torch.distributed.tensor._op_schema import OpSchema
from torch.distributed.tensor._ops import single_dim_strategy
from torch.distributed.tensor._utils import compute_local_shape_and_global_offset

WORLD_SIZE = 8  # the largest mesh the cases use (2x2x2)
ATEN = {
    "mm": torch.ops.aten.mm.default,
    "bmm": torch.ops.aten.bmm.default,
    "addmm": torch.ops.aten.addmm.default,
    "baddbmm": torch.ops.aten.baddbmm.default,
}
MODES = ("full-expansion", "priority-queue")


def start():
    """A fake process group of WORLD_SIZE ranks (this process is rank 0): DTensor runs its
    propagation and its collectives' shapes, no data moves."""
    if dist.is_initialized():
        return
    from torch.testing._internal.distributed.fake_pg import FakeStore
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=WORLD_SIZE)


@functools.lru_cache(maxsize=None)
def mesh(shape):
    """A CPU DeviceMesh of `shape` on ranks 0..prod-1 (rank 0 is in every mesh)."""
    return DeviceMesh("cpu", torch.arange(math.prod(shape)).reshape(shape))


def partial_order():
    """The order this process iterates {P(sum), P(avg)}: 'sum-first' or 'avg-first'."""
    first = next(iter({Partial("sum"), Partial("avg")}))
    return "sum-first" if first.reduce_op == "sum" else "avg-first"


def parse(text):
    """'S(1)' / 'R' / 'P(sum)' -> a torch placement."""
    text = text.strip()
    if text == "R":
        return Replicate()
    if text.startswith("S(") and text.endswith(")"):
        return Shard(int(text[2:-1]))
    if text.startswith("P(") and text.endswith(")"):
        return Partial(text[2:-1])
    raise ValueError(f"not a placement: {text!r}")


def show(placement):
    """A torch placement in symmesh's spelling; _StridedShard keeps torch's repr."""
    if type(placement) is Shard:
        return f"S({placement.dim})"
    if isinstance(placement, Replicate):
        return "R"
    if isinstance(placement, Partial):
        return f"P({placement.reduce_op})"
    return repr(placement)


def shows(placements):
    return tuple(show(p) for p in placements)


class Answer:
    """What torch chose: the output's placements, each input's placements as the op
    consumes them, the summed redistribute cost in µs (None where no one OpSpec holds it)."""

    def __init__(self, output, inputs, cost_us, ops=()):
        self.output = tuple(output)
        self.inputs = tuple(tuple(p) for p in inputs)
        self.cost_us = cost_us
        self.ops = tuple(ops)  # linear: the aten ops torch ran, with their answers

    def __repr__(self):
        return (f"Answer(out={self.output}, in={self.inputs}, cost_us={self.cost_us}, "
                f"ops={self.ops})")


class _Recorder:
    """Wraps _sharding_prop._select_min_cost_strategy to keep each chosen OpSpec's cost."""

    def __init__(self):
        self.choices = []  # (aten op, chosen OpSpec, summed cost)

    @contextlib.contextmanager
    def active(self, search_mode):
        original_select = _sharding_prop._select_min_cost_strategy
        original_expand = _sharding_prop._expand_single_dim_strategy_to_mesh

        def select(strategy, op_schema=None):
            chosen = original_select(strategy, op_schema)
            cost = sum(sum(c) for c in chosen.redistribute_cost or [])
            self.choices.append((op_schema.op if op_schema else None, chosen, float(cost)))
            return chosen

        def expand_by_search(mesh_, strategy_schema, info, out_meta):
            full = original_expand(mesh_, strategy_schema, info, out_meta)

            def run(op, args_meta, kwargs_meta):
                found = single_dim_strategy._dijkstra_expand_single_dim_strategy_to_mesh(
                    mesh_, strategy_schema, info, out_meta)
                return found if found is not None else full(op, args_meta, kwargs_meta)
            return run

        _sharding_prop._select_min_cost_strategy = select
        if search_mode == "priority-queue":
            _sharding_prop._expand_single_dim_strategy_to_mesh = expand_by_search
        try:
            yield self
        finally:
            _sharding_prop._select_min_cost_strategy = original_select
            _sharding_prop._expand_single_dim_strategy_to_mesh = original_expand


@contextlib.contextmanager
def devices_per_host(count):
    """torch's MeshTopoInfo reads the host size from _mesh_resources and caches the topology
    per mesh (lru_cache on build_from_mesh): the cache is emptied on the way in and out, so
    no answer sees another host size. None keeps the CPU's count."""
    from torch.distributed import device_mesh as dm
    from torch.distributed.tensor._collective_utils import MeshTopoInfo
    resources = dm._mesh_resources
    MeshTopoInfo.build_from_mesh.cache_clear()
    if count is not None:
        resources.num_devices_per_host = lambda device_type: count  # shadows the class's
    try:
        yield
    finally:
        if count is not None:
            del resources.num_devices_per_host
        MeshTopoInfo.build_from_mesh.cache_clear()


def _spec(mesh_, shape, placements, dtype):
    t = torch.empty(shape, dtype=dtype, device="meta")
    return DTensorSpec(mesh_, tuple(placements), TensorMeta(t.shape, t.stride(), t.dtype))


def _used_specs(sharding, schema):
    """The input specs the op runs on: torch's redistribution target, else the inputs."""
    return sharding.redistribute_schema.args_spec if sharding.redistribute_schema \
        else schema.args_spec


def _propagator():
    return DTensor._op_dispatcher.sharding_propagator


def matmul_op(op, shapes, placements, mesh_shape, *, mode="full-expansion",
              host_devices=None, dtype=torch.float32):
    """mm/bmm/addmm/baddbmm: torch's answer for inputs of `shapes` at `placements` (lists of
    placement strings, in aten's argument order) on a mesh of `mesh_shape`."""
    start()
    m = mesh(tuple(mesh_shape))
    specs = tuple(_spec(m, s, [parse(p) for p in pl], dtype) for s, pl in zip(shapes, placements))
    schema = OpSchema(ATEN[op], specs, {})
    recorder = _Recorder()
    with devices_per_host(host_devices), recorder.active(mode):
        sharding = _propagator().propagate_op_sharding_non_cached(schema)
    used = _used_specs(sharding, schema)
    chosen_cost = [c for op_, _, c in recorder.choices if op_ == ATEN[op]]
    return Answer(shows(sharding.output_spec.placements),
                  [shows(s.placements) for s in used],
                  chosen_cost[-1] if chosen_cost else None)


def _dtensor(m, shape, placements, dtype):
    local, _ = compute_local_shape_and_global_offset(shape, m, placements)
    stride = torch.empty(shape, device="meta").stride()
    return DTensor.from_local(torch.zeros(local, dtype=dtype), m, placements, run_check=False,
                              shape=torch.Size(shape), stride=stride)


def _forget_shardings(prop):
    """Empties both caches of decided shardings: the C++ dispatch fast path's (keyed by the
    op's schema, so another mode's or host size's answer would be reused) and Python's."""
    torch._C._clear_DTensor_sharding_propagator_cache()
    prop.propagate_op_sharding.cache_clear()


def linear(shapes, placements, mesh_shape, *, mode="full-expansion", host_devices=None,
           dtype=torch.float32):
    """F.linear(a, w[, bias]) on DTensors, as a user's module runs it. torch has no strategy
    for aten.linear and decomposes it (2-D a: t, mm or addmm; 3-D a: t, view, mm or addmm,
    view). The answer: the output DTensor's placements; the cost summed over every op torch
    chose a strategy for; for a 2-D `a`, each input's placements as the matmul consumed
    them (w read back through `t`: the matmul's S(1) is w's S(0)); for a 3-D `a`, None
    (the matmul sees a flattened view, not `a`)."""
    start()
    m = mesh(tuple(mesh_shape))
    tensors = [_dtensor(m, s, [parse(p) for p in pl], dtype) for s, pl in zip(shapes, placements)]
    recorder = _Recorder()
    seen = []  # (aten op, input placements, placements the op used, output placements)
    prop = _propagator()
    original = prop.propagate_op_sharding_non_cached

    def propagate(schema):
        sharding = original(schema)
        used = _used_specs(sharding, schema)
        out = sharding.output_spec
        seen.append((str(schema.op), [shows(s.placements) for s in schema.args_spec],
                     [shows(s.placements) for s in used],
                     shows(out.placements) if isinstance(out, DTensorSpec) else None))
        return sharding

    _forget_shardings(prop)  # every op's propagation runs now, none comes from a cache
    prop.propagate_op_sharding_non_cached = propagate
    try:
        with devices_per_host(host_devices), recorder.active(mode):
            out = F.linear(*tensors)
    finally:
        del prop.propagate_op_sharding_non_cached  # the class's method again
        _forget_shardings(prop)  # nothing decided under this case's settings outlives it
    inputs = None
    if len(shapes[0]) == 2:
        matmul = next(r for r in seen if r[0] in ("aten.mm.default", "aten.addmm.default"))
        used = matmul[2]
        swap = {"S(0)": "S(1)", "S(1)": "S(0)"}
        inputs = [used[-2], tuple(swap.get(p, p) for p in used[-1])]
        if len(shapes) == 3:
            inputs.append(used[0])
    cost = sum(c for _, _, c in recorder.choices)
    return Answer(shows(out.placements), inputs or (), cost, ops=seen)


@functools.lru_cache(maxsize=None)
def hash_seed_for(order):
    """A PYTHONHASHSEED value under which a fresh process iterates Partials in `order`
    (found by asking child processes; the mapping is fixed for a Python build)."""
    import subprocess
    import sys
    probe = ("from torch.distributed.tensor import Partial;"
             "print(next(iter({Partial('sum'), Partial('avg')})).reduce_op)")
    want = "sum" if order == "sum-first" else "avg"
    for seed in range(64):
        env = dict(os.environ, PYTHONHASHSEED=str(seed))
        got = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                             text=True, check=True).stdout.strip()
        if got == want:
            return seed
    raise RuntimeError(f"no PYTHONHASHSEED below 64 gives {order}")
