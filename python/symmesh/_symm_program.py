"""How symmesh.symm_mem turns per-rank Python programs into one Program (core/program.hpp):
each rank's function runs once, rank 0 first, and every call appends that rank's op to its
current stream. Collectives (rendezvous, barrier) are matched across ranks by their order on
each group, as PyTorch requires every member to call them in the same order; a member that
never calls one is an error before anything runs.

The objects a rank program sees: RankContext (ctx), SymmetricMemory (the handle rendezvous
returns), Stream, Event and Group. symm_mem.py documents which PyTorch / NCCL call each
maps to."""

import contextlib
import threading

from . import _symmesh
from ._symm_errors import scenario_error, unsupported_error
from ._symm_tensor import Allocation, Tensor, dtype_name, itemsize, shape_of

DEFAULT_SIGNAL_PAD_SIZE = 9216  # torch 2.13: 32 channels x 72 ranks (NVL72) x 4 bytes
SIGNAL_INDICES = 8  # symmesh's counters per (group, sender -> receiver): kSignalIndices

_local = threading.local()


def current(where):
    """The RankContext of the rank program running now."""
    ctx = getattr(_local, "context", None)
    if ctx is None:
        raise scenario_error("called outside a rank program: call it from the function "
                             "given to symm_mem.simulate", where)
    return ctx


class Group:
    """Ranks that share symmetric buffers and signal counters (a ProcessGroup's role)."""

    def __init__(self, gid, name, ranks):
        self.id, self.name, self.ranks = gid, name, tuple(ranks)

    @property
    def size(self):
        return len(self.ranks)

    def __repr__(self):
        return f"<symm_mem.Group '{self.name}' ranks {list(self.ranks)}>"


class Stream:
    """A named in-order queue of one rank's ops (torch.cuda.Stream)."""

    def __init__(self, context, name):
        self._context, self.name = context, name
        self.id = context.tracer.program.stream(context.rank, name)

    def record_event(self, event=None):
        event = event or Event(self._context)
        event.record(self)
        return event

    def wait_event(self, event):
        event.wait(self)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def __repr__(self):
        return f"<symm_mem.Stream '{self.name}' of rank {self._context.rank}>"


class Event:
    """torch.cuda.Event: record() marks a point of a stream, wait() holds another stream of
    the same rank until that point is reached."""

    def __init__(self, context):
        self._context, self._id = context, None

    def record(self, stream=None):
        ctx = self._context
        stream = stream or ctx.current_stream()
        self._id = ctx.tracer.program.record_event(ctx.rank, stream.id, "record_event")

    def wait(self, stream=None):
        ctx = self._context
        if self._id is None:
            raise scenario_error("the event was never recorded (CUDA would not wait at all): "
                                 "record it first", "Event.wait", ctx.rank)
        stream = stream or ctx.current_stream()
        ctx.tracer.program.wait_event(ctx.rank, stream.id, self._id, "wait_event")


class SymmetricMemory:
    """What rendezvous returns (torch's _SymmetricMemory): one rank's handle on a symmetric
    tensor of a group. put_signal / wait_signal / barrier are the handle's own methods,
    signals without data on the group's counters."""

    def __init__(self, context, group, alloc, offset, nbytes):
        self._context, self._group, self._alloc = context, group, alloc
        self.offset, self.nbytes = offset, nbytes

    @property
    def rank(self):
        return self._group.ranks.index(self._context.rank)

    @property
    def world_size(self):
        return self._group.size

    @property
    def buffer_size(self):
        return self._alloc.nbytes

    @property
    def group_name(self):
        return self._group.name

    def _channel(self, channel, where):
        ctx = self._context
        pad_channels = ctx.signal_pad_size // (4 * self.world_size)
        limit = min(pad_channels, SIGNAL_INDICES)
        if isinstance(channel, bool) or not isinstance(channel, int) or not 0 <= channel < limit:
            raise scenario_error(
                f"channel {channel!r} is outside [0, {limit}): the signal pad of "
                f"{ctx.signal_pad_size} bytes holds {pad_channels} channels for "
                f"{self.world_size} ranks, symmesh keeps {SIGNAL_INDICES} signal indices",
                where, ctx.rank)
        return channel

    def _no_timeout(self, timeout_ms, where):
        """torch's timeout_ms bounds a real wait; the simulator has no wall clock to bound
        and reports a wait that can never be satisfied as a deadlock instead. 0 (torch's
        default) is accepted; any other value is refused rather than ignored."""
        if timeout_ms != 0:
            raise unsupported_error(
                f"timeout_ms={timeout_ms!r} is not modelled: the simulator reports a wait "
                "that can never be satisfied as a deadlock (which ranks wait on whom); "
                "pass 0", where, self._context.rank)

    def put_signal(self, dst_rank, channel=0, timeout_ms=0, *, label=None):
        """A signal with no data to dst_rank (its index in the group): NCCL's ncclSignal,
        as torch's NCCL backend does. timeout_ms: only 0 (see _no_timeout)."""
        ctx, where = self._context, "SymmetricMemory.put_signal"
        self._no_timeout(timeout_ms, where)
        peer = ctx.peer(dst_rank, self._group, where)
        ctx.tracer.program.signal(ctx.rank, ctx.current_stream().id, self._group.id, peer,
                                  self._channel(channel, where),
                                  label or f"signal(dst_rank={peer})")

    def wait_signal(self, src_rank, channel=0, timeout_ms=0, *, label=None):
        """Waits for one signal from src_rank on the group's counter (ncclWaitSignal, opCnt
        1): a put_signal or a signal, on any buffer of the group."""
        ctx, where = self._context, "SymmetricMemory.wait_signal"
        self._no_timeout(timeout_ms, where)
        peer = ctx.peer(src_rank, self._group, where)
        ctx.tracer.program.wait_group_signal(ctx.rank, ctx.current_stream().id, self._group.id,
                                             peer, self._channel(channel, where),
                                             label or f"wait_signal(src_rank={peer})")

    def barrier(self, channel=0, timeout_ms=0, *, label=None):
        """Every member of the group reaches it before any goes on (collective)."""
        ctx = self._context
        self._no_timeout(timeout_ms, "SymmetricMemory.barrier")
        self._channel(channel, "SymmetricMemory.barrier")
        ctx.tracer.program.barrier(ctx.rank, ctx.current_stream().id, self._group.id,
                                   label or "barrier")

    def __repr__(self):
        return (f"<symm_mem.SymmetricMemory rank {self.rank} of group '{self.group_name}', "
                f"{self.nbytes} bytes at byte {self.offset}>")


class RankContext:
    """What a rank program receives: who it is (rank, world_size, group), local tensors,
    groups, streams and events. The symm_mem functions act on the rank running now."""

    def __init__(self, tracer, rank):
        self.tracer, self.rank = tracer, rank
        self.world_size = tracer.program.world_size
        self.group = tracer.world
        self.signal_pad_size = tracer.signal_pad_size
        self._allocated = False  # a symmetric tensor was made: the pad size is fixed
        self._symmetric_count = 0
        self._default = Stream(self, "default")
        self._current = self._default
        self._stream_count = 0

    # -- groups
    def new_group(self, ranks, name=None):
        """A group of these world ranks (every member must create it too, as
        torch.distributed.new_group)."""
        return self.tracer.group(list(ranks), name, self.rank)

    def peer(self, peer, group, where):
        if isinstance(peer, bool) or not isinstance(peer, int) or not 0 <= peer < group.size:
            raise scenario_error(f"peer {peer!r} out of range for a group of {group.size} "
                                 f"('{group.name}')", where, self.rank)
        return peer

    # -- streams and events
    def Stream(self, name=None):  # noqa: N802 - torch.cuda.Stream
        self._stream_count += 1
        return Stream(self, name or f"stream{self._stream_count}")

    def current_stream(self):
        return self._current

    def default_stream(self):
        return self._default

    @contextlib.contextmanager
    def stream(self, stream):
        """with ctx.stream(s): ops go to s (torch.cuda.stream)."""
        if not isinstance(stream, Stream) or stream._context is not self:
            raise scenario_error(f"{stream!r} is not a stream of this rank", "stream",
                                 self.rank)
        previous, self._current = self._current, stream
        try:
            yield stream
        finally:
            self._current = previous

    def Event(self):  # noqa: N802 - torch.cuda.Event
        return Event(self)

    # -- tensors
    def empty(self, *size, dtype=None):
        """torch.empty on this rank's GPU: a local (not symmetric) tensor."""
        where = "empty"
        shape = shape_of(size, where, self.rank)
        dtype = dtype_name(dtype, where, self.rank)
        nbytes = itemsize(dtype) * _numel(shape)
        buffer_id = self.tracer.program.local_alloc(self.rank, nbytes)
        return Tensor(self, Allocation(self.rank, False, nbytes, buffer_id), 0, shape, dtype)

    def symmetric_empty(self, size, dtype):
        where = "symm_mem.empty"
        shape = shape_of(size, where, self.rank)
        dtype = dtype_name(dtype, where, self.rank)
        self._allocated = True
        self._symmetric_count += 1
        alloc = Allocation(self.rank, True, itemsize(dtype) * _numel(shape),
                           index=self._symmetric_count)
        return Tensor(self, alloc, 0, shape, dtype)

    def ref(self, tensor, where):
        """The BufferRef of one of this rank's tensors."""
        if not isinstance(tensor, Tensor):
            raise scenario_error(f"expected a symm_mem tensor, got {type(tensor).__name__}",
                                 where, self.rank)
        if tensor.rank != self.rank:
            raise scenario_error(f"the tensor belongs to rank {tensor.rank}", where, self.rank)
        alloc = tensor._alloc
        if alloc.id is None:
            raise scenario_error(
                "a symm_mem.empty tensor is used before rendezvous(tensor, group): symmesh "
                "makes a symmetric tensor at its rendezvous, the collective that gives every "
                "member its copy", where, self.rank)
        return _symmesh.BufferRef(alloc.symmetric, alloc.id, tensor.offset, tensor.nbytes)

    def copy(self, dst, src):
        where = "Tensor.copy_"
        dst_ref, src_ref = self.ref(dst, where), self.ref(src, where)
        if dst.dtype != src.dtype or dst.numel() != src.numel():
            raise scenario_error(f"copy of {src.numel()} {src.dtype} elements into "
                                 f"{dst.numel()} {dst.dtype} elements (same dtype and count "
                                 "needed)", where, self.rank)
        self.tracer.program.copy(self.rank, self._current.id, dst_ref, src_ref, "copy_")

    def set_signal_pad_size(self, size):
        where = "symm_mem.set_signal_pad_size"
        if self._allocated:
            raise scenario_error("must be called before any symmetric memory allocation "
                                 "(as in PyTorch)", where, self.rank)
        if isinstance(size, bool) or not isinstance(size, int) or size < 4:
            raise scenario_error(f"expected a size in bytes >= 4, got {size!r}", where,
                                 self.rank)
        self.signal_pad_size = size


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Tracer:
    """Builds the Program: groups by rank list, symmetric allocations matched across ranks."""

    def __init__(self, world_size, signal_pad_size):
        self.program = _symmesh.Program(world_size)
        self.signal_pad_size = signal_pad_size
        self._groups = {}
        self.world = self._add(list(range(world_size)), "world")
        # (group id, n): the n-th rendezvous that makes a symmetric tensor on the group.
        self._rendezvous = {}
        self._made = {}  # (rank, group id) -> rendezvous that made tensors so far

    def _add(self, ranks, name):
        key = tuple(ranks)
        if key not in self._groups:
            gid = self.program.add_group(ranks)
            self._groups[key] = Group(gid, name or f"group{len(self._groups)}", ranks)
        return self._groups[key]

    def group(self, ranks, name, rank):
        group = self._add(ranks, name)
        if rank not in group.ranks:
            raise scenario_error(f"rank {rank} is not in the group {list(ranks)}: only "
                                 "members create it", "new_group", rank)
        return group

    def run(self, program, world_size):
        for rank in range(world_size):
            ctx = RankContext(self, rank)
            _local.context = ctx
            try:
                program(ctx)
            finally:
                _local.context = None
        self._check_every_member_came()

    def rendezvous(self, ctx, tensor, group):
        where = "symm_mem.rendezvous"
        if group is None:
            group = ctx.group
        elif isinstance(group, (list, tuple)):
            group = ctx.new_group(group)
        elif isinstance(group, str):
            group = self._named(group, ctx.rank, where)
        if not isinstance(group, Group):
            raise scenario_error(f"group must be a Group, a group name or a list of ranks, "
                                 f"not {type(group).__name__}", where, ctx.rank)
        if ctx.rank not in group.ranks:
            raise scenario_error(f"rank {ctx.rank} is not a member of '{group.name}'", where,
                                 ctx.rank)
        if not isinstance(tensor, Tensor) or not tensor.is_symmetric:
            raise scenario_error("the tensor must come from symm_mem.empty (as in PyTorch)",
                                 where, ctx.rank)
        if tensor.rank != ctx.rank:
            raise scenario_error(f"the tensor belongs to rank {tensor.rank}", where, ctx.rank)
        alloc = tensor._alloc
        if alloc.id is None:
            self._make(ctx, alloc, group, where)
        elif alloc.group is not group:
            raise scenario_error(
                f"this tensor's memory was made symmetric on '{alloc.group.name}'; symmesh "
                f"keeps each symmetric allocation in one group, not also '{group.name}'",
                where, ctx.rank)
        return SymmetricMemory(ctx, group, alloc, tensor.offset, tensor.nbytes)

    def _named(self, name, rank, where):
        for group in self._groups.values():
            if group.name == name:
                return group
        raise scenario_error(f"no group named '{name}' (known: "
                             f"{', '.join(g.name for g in self._groups.values())})", where, rank)

    def _make(self, ctx, alloc, group, where):
        n = self._made.get((ctx.rank, group.id), 0) + 1
        self._made[(ctx.rank, group.id)] = n
        made = self._rendezvous.get((group.id, n))
        if made is None:
            handle = self.program.symm_alloc(group.id, alloc.nbytes)
            made = {"id": handle, "bytes": alloc.nbytes, "pad": ctx.signal_pad_size,
                    "first": ctx.rank, "came": set()}
            self._rendezvous[(group.id, n)] = made
        elif made["bytes"] != alloc.nbytes:
            raise scenario_error(
                f"rendezvous #{n} on '{group.name}' has {alloc.nbytes} bytes here but "
                f"{made['bytes']} on rank {made['first']}: a symmetric tensor has one size "
                "on every member", where, ctx.rank)
        elif made["pad"] != ctx.signal_pad_size:
            raise scenario_error(
                f"ranks of '{group.name}' disagree on the signal pad size "
                f"({ctx.signal_pad_size} vs {made['pad']} bytes on rank {made['first']})",
                where, ctx.rank)
        made["came"].add(ctx.rank)
        alloc.id, alloc.group = made["id"], group

    def _check_every_member_came(self):
        groups = {g.id: g for g in self._groups.values()}
        for (gid, n), made in sorted(self._rendezvous.items()):
            group = groups[gid]
            missing = [r for r in group.ranks if r not in made["came"]]
            if missing:
                raise scenario_error(
                    f"rank {missing[0]} never called rendezvous #{n} on '{group.name}' that "
                    f"rank {made['first']} did: rendezvous is collective, every member calls "
                    "it, in the same order", "symm_mem.rendezvous", missing[0])
