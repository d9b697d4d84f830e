"""The rank programs of docs/symmetric-memory-python.md, shared by test_symm_mem.py: a ring
all-gather into a symmetric buffer, the same ring without one wait, and a ring that streams
every shard through a one-shard landing buffer with credits, with and without the credit
wait. Written as a PyTorch user writes them (torch.distributed._symmetric_memory's calls)."""

from symmesh import symm_mem


def ring_all_gather(shard_elems, dtype="bf16", skip_wait=None):
    """Rank r's shard starts in buf[r] (all_gather_into_tensor, in place); in step s it
    sends slot (r - s) % p to the next rank's same slot, then waits for the slot the
    previous rank sends. skip_wait=(rank, step) leaves that one wait out."""
    def program(ctx):
        r, p = ctx.rank, ctx.world_size
        buf = symm_mem.empty(p, shard_elems, dtype=dtype)
        hdl = symm_mem.rendezvous(buf, ctx.group)
        slots = [symm_mem.rendezvous(buf[i], ctx.group) for i in range(p)]
        for s in range(p - 1):
            i = (r - s) % p
            symm_mem.put_signal(buf[i], slots[i], (r + 1) % p, label=f"send step {s}")
            if (r, s) != skip_wait:
                symm_mem.wait_signal(hdl, (r - 1) % p, label=f"recv step {s}")
    return program


def streamed_ring_all_gather(shard_elems, credit_wait=True):
    """The ring through one landing shard per rank: each received shard is copied out of
    the landing buffer into the local output, and a credit (a signal with no data) tells
    the sender the landing buffer is free again. credit_wait=False leaves out the sender's
    wait for that credit."""
    def program(ctx):
        r, p = ctx.rank, ctx.world_size
        nxt, prv = (r + 1) % p, (r - 1) % p
        out = ctx.empty(p, shard_elems, dtype="bf16")  # local: out[r] holds my shard
        land = symm_mem.empty(shard_elems, dtype="bf16")
        hdl = symm_mem.rendezvous(land, ctx.group)
        for s in range(p - 1):
            if s > 0 and credit_wait:
                hdl.wait_signal(nxt, label=f"credit step {s}")  # next copied its slot out
            symm_mem.put_signal(out[(r - s) % p], hdl, nxt, label=f"send step {s}")
            symm_mem.wait_signal(hdl, prv, label=f"recv step {s}")
            out[(r - s - 1) % p].copy_(land)
            if s < p - 2:
                hdl.put_signal(prv, label=f"free step {s}")  # my landing slot is free
    return program
