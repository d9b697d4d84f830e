"""One-sided programs in torch.distributed._symmetric_memory's terms, run on symmesh's
simulator: its time, every stream's span, overwrite hazards and deadlocks, as plain data.

    from symmesh import symm_mem

    def ring_all_gather(ctx):                        # called once per rank (SPMD)
        r, p = ctx.rank, ctx.world_size
        buf = symm_mem.empty(p, 1 << 20, dtype="bf16")   # or dtype=torch.bfloat16
        hdl = symm_mem.rendezvous(buf, ctx.group)        # collective
        slots = [symm_mem.rendezvous(buf[i], ctx.group) for i in range(p)]
        for s in range(p - 1):
            symm_mem.put_signal(buf[(r - s) % p], slots[(r - s) % p], (r + 1) % p)
            symm_mem.wait_signal(hdl, (r - 1) % p)

    report = symm_mem.simulate(ring_all_gather, 8, cluster="clusters/dgx-h100.yaml")

Names and argument order are PyTorch's (torch 2.13): empty(*size, dtype), rendezvous(tensor,
group), put_signal(src, hdl, peer), wait_signal(hdl, peer), get/set_signal_pad_size(), and
the handle's put_signal(dst_rank, channel), wait_signal(src_rank, channel), barrier(channel).
get(dst, hdl, peer) is symmesh's one-sided read (PyTorch's NCCL extension has nccl_get(tensor,
peer); the public module has none). torch is not needed: dtypes are names ("bf16", "float32",
...) and a torch.dtype is accepted as well. A peer is an index in the handle's group.

Semantics: those of PyTorch 2.13's NCCL backend, which calls NCCL's one-sided host API
(NCCL >= 2.29: ncclPutSignal, ncclSignal, ncclWaitSignal). Signals COUNT: every put_signal
or signal adds one to a counter per (group, sender -> receiver, signal index), shared by every
buffer of the group; every wait consumes one, and surplus signals carry over as credits (a
second put before the wait only adds a credit). The CUDA backend's handle signals are a
compare-and-swap slot (0 -> 1 by the sender, 1 -> 0 by the waiter): there a second signal
before the wait blocks the SENDER until the wait clears the slot. That behaviour is not
modelled: simulate(semantics="cuda") raises UnsupportedError. docs/symmetric-memory-python.md
has the table of calls, the sources, and a worked ring all-gather.
"""

from . import _symm_program, _symmesh
from ._symm_errors import scenario_error, unsupported_error
from ._symm_program import DEFAULT_SIGNAL_PAD_SIZE, current

__all__ = ["empty", "rendezvous", "put_signal", "wait_signal", "get", "get_signal_pad_size",
           "set_signal_pad_size", "simulate", "DEFAULT_SIGNAL_PAD_SIZE"]


def empty(*size, dtype=None, device=None):
    """A symmetric tensor of this rank, as torch's symm_mem.empty(*size, dtype, device):
    `size` is ints or one list; dtype a name or torch.dtype (None: float32); device is
    ignored. It becomes every member's copy at its rendezvous, so use it after that."""
    return current("symm_mem.empty").symmetric_empty(size, dtype)


def rendezvous(tensor, group=None):
    """Collective: establishes `tensor` (from empty, or a view of one) on every member of
    `group` (a Group, a group name, a list of ranks; None: the world) and returns this rank's
    handle on it. Every member calls it, in the same order, with the same size. A view's
    handle starts at the view: put_signal writes there, as PyTorch's handle offset."""
    ctx = current("symm_mem.rendezvous")
    return ctx.tracer.rendezvous(ctx, tensor, group)


def _handle(hdl, ctx, where):
    if not isinstance(hdl, _symm_program.SymmetricMemory):
        raise scenario_error(f"expected the handle rendezvous returned, got "
                             f"{type(hdl).__name__}", where, ctx.rank)
    if hdl._context is not ctx:
        raise scenario_error("the handle belongs to another rank", where, ctx.rank)
    return hdl


def _signal_index(signal, where, rank):
    if isinstance(signal, bool) or not isinstance(signal, int) or not \
            0 <= signal < _symm_program.SIGNAL_INDICES:
        raise scenario_error(f"signal index {signal!r} is outside [0, "
                             f"{_symm_program.SIGNAL_INDICES})", where, rank)
    return signal


def _check_fits(name, tensor, hdl, where, rank):
    """A put's source or a get's destination is no larger than the handle's tensor."""
    if tensor.nbytes > hdl.nbytes:
        raise scenario_error(f"{name} has {tensor.nbytes} bytes but the handle's tensor only "
                             f"{hdl.nbytes}", where, rank)


def put_signal(src, hdl, peer, *, signal=0, label=None):
    """Copies `src` (a tensor of this rank) into `peer`'s copy of hdl's tensor, then bumps
    the (me -> peer) counter: ncclPutSignal, as torch's NCCL backend. Enqueued on the current
    stream; the stream goes on when the transfer completes (src may be reused), and the
    receiver sees the bytes before the signal. `signal` is NCCL's sigIdx (torch always uses
    0; NCCL 2.29-2.30 accept only 0; symmesh keeps 0-7)."""
    ctx = current("symm_mem.put_signal")
    where = "symm_mem.put_signal"
    hdl = _handle(hdl, ctx, where)
    peer = ctx.peer(peer, hdl._group, where)
    src_ref = ctx.ref(src, where)
    _check_fits("src", src, hdl, where, ctx.rank)
    ctx.tracer.program.put_signal(ctx.rank, ctx.current_stream().id, src_ref, hdl._alloc.id,
                                  hdl.offset, peer, _signal_index(signal, where, ctx.rank),
                                  label or f"put_signal(peer={peer})")


def wait_signal(hdl, peer, *, signal=0, label=None):
    """Holds the current stream until one more signal from `peer` has arrived on hdl's group
    counter, and consumes it (ncclWaitSignal, opCnt 1): work after it sees the data. A
    signal that came with a put into another buffer of the group counts too, as on NCCL."""
    ctx = current("symm_mem.wait_signal")
    where = "symm_mem.wait_signal"
    hdl = _handle(hdl, ctx, where)
    peer = ctx.peer(peer, hdl._group, where)
    ctx.tracer.program.wait_signal(ctx.rank, ctx.current_stream().id, hdl._alloc.id, peer,
                                   _signal_index(signal, where, ctx.rank),
                                   label or f"wait_signal(peer={peer})")


def get(dst, hdl, peer, *, label=None):
    """Reads `peer`'s copy of hdl's tensor (dst.nbytes of it, from the handle's offset) into
    `dst` (a tensor of this rank); the current stream goes on once the bytes have arrived.
    No signal: order it after the peer's writes yourself (a wait_signal on a signal the peer
    sends once they are done). PyTorch's NCCL extension: nccl_get(tensor, peer)."""
    ctx = current("symm_mem.get")
    where = "symm_mem.get"
    hdl = _handle(hdl, ctx, where)
    peer = ctx.peer(peer, hdl._group, where)
    dst_ref = ctx.ref(dst, where)
    _check_fits("dst", dst, hdl, where, ctx.rank)
    ctx.tracer.program.get(ctx.rank, ctx.current_stream().id, dst_ref, hdl._alloc.id,
                           hdl.offset, peer, label or f"get(peer={peer})")


def get_signal_pad_size():
    """This rank's signal pad size in bytes (torch 2.13's default: 9216 = 32 channels x 72
    ranks x 4 bytes). A handle of a group of n ranks has pad_size // (4 n) channels."""
    ctx = getattr(_symm_program._local, "context", None)
    return ctx.signal_pad_size if ctx else DEFAULT_SIGNAL_PAD_SIZE


def set_signal_pad_size(size):
    """Sets this rank's signal pad size, before its first symmetric allocation (as PyTorch);
    the members of a group must agree. Outside a rank program, pass
    simulate(signal_pad_size=...)."""
    current("symm_mem.set_signal_pad_size").set_signal_pad_size(size)


def _world_size(world_size):
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        raise scenario_error(f"expected an int >= 1, got {world_size!r}", "world_size")
    return world_size


def _cluster_path(cluster):
    import os
    if not isinstance(cluster, (str, os.PathLike)):
        raise scenario_error(f"expected a cluster file path, got {type(cluster).__name__}",
                             "cluster")
    # The package's one reading of a path: UTF-8 text, or a ScenarioError naming its bytes
    # (os.fsdecode alone would carry them as surrogates that no message can print).
    from . import _path_text
    path = _path_text(cluster)
    if os.path.exists(path) or os.path.isabs(path):
        return path
    return os.path.join(_symmesh.shipped_scenarios_dir, path)


def _stream_spans(timeline):
    spans = {}
    for e in timeline:
        key = (e["rank"], e["stream"])
        s = spans.setdefault(key, {"rank": e["rank"], "stream": e["stream"],
                                   "start_s": e["start_s"], "end_s": e["end_s"],
                                   "busy_s": 0.0, "ops": 0})
        s["start_s"] = min(s["start_s"], e["start_s"])
        s["end_s"] = max(s["end_s"], e["end_s"])
        s["busy_s"] += e["end_s"] - e["start_s"]
        s["ops"] += 1
    return [spans[k] for k in sorted(spans)]


def simulate(program, world_size, cluster="clusters/dgx-h100.yaml", *, semantics="nccl",
             signal_pad_size=DEFAULT_SIGNAL_PAD_SIZE, time_limit_s=0.0):
    """Runs program(ctx) once per rank (rank 0 first) to write every rank's ops, then
    simulates them on `cluster` (a cluster file; relative paths also under the shipped
    scenarios folder). Returns a dict:

        completed   False when some wait can never be satisfied (then time_s is None)
        time_s      when the last stream finished
        streams     [{rank, stream, start_s, end_s, busy_s, ops}] per stream that ran ops
        timeline    [{rank, stream, op, kind, label, start_s, end_s, bytes}] per op
        hazards     [{receiver, buffer, earlier_sender, later_sender, begin_bytes,
                      end_bytes, earlier_label, later_label, time_s, message}]: a put that
                    landed on bytes an earlier put delivered and the receiver had not yet
                    consumed with a wait
        deadlock    None, or {message, blocked: [{rank, stream, op, kind, buffer,
                    waits_for, description}]}: every stream still waiting, for whom
        warnings    e.g. signals left unconsumed when the run ended
        peak_memory_bytes, world_size, cluster, semantics

    Bad input raises symmesh.ScenarioError naming the call and the rank; semantics="cuda"
    raises UnsupportedError (not modelled); a run past time_limit_s (0: none) raises
    SimulationError. The simulator moves sizes and times, not values."""
    world_size = _world_size(world_size)
    if semantics == "cuda":
        raise unsupported_error(
            "PyTorch's CUDA backend signals through a compare-and-swap slot per (channel, "
            "sender): a second signal before the wait blocks the sender until the wait clears "
            "the slot. symmesh models NCCL's counting signals only (semantics='nccl')",
            "semantics")
    if semantics != "nccl":
        raise scenario_error(f"unknown semantics {semantics!r} (nccl; cuda is not modelled)",
                             "semantics")
    if not callable(program):
        raise scenario_error("expected a function program(ctx)", "program")
    if isinstance(signal_pad_size, bool) or not isinstance(signal_pad_size, int) or \
            signal_pad_size < 4:
        raise scenario_error(f"expected a size in bytes >= 4, got {signal_pad_size!r}",
                             "signal_pad_size")
    path = _cluster_path(cluster)
    tracer = _symm_program.Tracer(world_size, signal_pad_size)
    tracer.run(program, world_size)
    report = _symmesh.simulate_program(tracer.program, path, float(time_limit_s))
    report["streams"] = _stream_spans(report["timeline"])
    report.update(world_size=world_size, cluster=path, semantics=semantics)
    return report
