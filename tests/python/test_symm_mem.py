"""symmesh.symm_mem: one-sided programs in torch.distributed._symmetric_memory's terms, run
on the simulator. None of these needs torch; the one that checks torch.dtype is skipped
without it."""

import os
import pathlib
import unittest

import symmesh
from symmesh import symm_mem
from symm_mem_programs import ring_all_gather, streamed_ring_all_gather

try:
    import torch
except ImportError:
    torch = None

# dgx-h100.yaml takes its links from its base, dgx-h100-datasheet.yaml:
#   intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}
# and ib-rail-4node.yaml (base dgx-h100.yaml) adds
#   inter_node: {kind: rail, nics_per_node: 8, bandwidth: 400 Gb/s, latency: 3 us}.
NVLINK_BW = 450e9
NVLINK_LATENCY = 1e-6


class RingAllGather(unittest.TestCase):
    def test_time_is_the_closed_form_and_nothing_is_reported(self):
        # 1 GiB gathered over the 8 GPUs of one DGX H100: shards of 128 MiB (64 Mi bf16).
        # Every step is one put per rank, all at once, each on its own NVLink port pair:
        #   7 x (1 us + 134,217,728 B / 450 GB/s) = 7 x (1 + 298.261618) us = 2094.831324 us,
        # the figure scenarios/ring-allgather-8gpu.yaml gives for the same collective.
        shard = 64 << 20
        report = symm_mem.simulate(ring_all_gather(shard), 8)
        expected = 7 * (NVLINK_LATENCY + 2 * shard / NVLINK_BW)
        self.assertTrue(report["completed"])
        self.assertAlmostEqual(report["time_s"], expected, delta=expected * 1e-9)
        self.assertEqual(report["hazards"], [])
        self.assertEqual(report["warnings"], [])
        self.assertIsNone(report["deadlock"])
        self.assertEqual(len(report["streams"]), 8)
        for stream in report["streams"]:
            self.assertEqual(stream["stream"], "default")
            self.assertEqual(stream["ops"], 14)  # 7 puts, 7 waits
            self.assertAlmostEqual(stream["end_s"], expected, delta=expected * 1e-9)
        puts = [e for e in report["timeline"] if e["kind"] == "put_signal"]
        self.assertEqual(len(puts), 56)
        self.assertTrue(all(e["bytes"] == 2 * shard for e in puts))

    def test_a_missing_wait_leaves_a_signal_unconsumed(self):
        # Without rank 3's wait of step 2, rank 3 forwards slot 0 in step 3 before it knows
        # it arrived. No slot is written twice, so nothing is overwritten, and fewer waits
        # never deadlock on counting signals: what the run reports is the signal from rank 2
        # that rank 3 never consumed.
        report = symm_mem.simulate(ring_all_gather(1 << 20, skip_wait=(3, 2)), 8)
        self.assertTrue(report["completed"])
        self.assertEqual(report["hazards"], [])
        self.assertEqual(len(report["warnings"]), 1)
        self.assertIn("rank 3 left 1 of 7 signals from rank 2", report["warnings"][0])

    def test_torch_dtypes_are_names_too(self):
        # bf16 and "bfloat16" are the same 2 bytes: the same run.
        a = symm_mem.simulate(ring_all_gather(1 << 20, dtype="bf16"), 4)
        b = symm_mem.simulate(ring_all_gather(1 << 20, dtype="bfloat16"), 4)
        self.assertEqual(a["time_s"], b["time_s"])

    @unittest.skipUnless(torch is not None, "torch is not installed")
    def test_a_torch_dtype_is_accepted(self):
        a = symm_mem.simulate(ring_all_gather(1 << 20, dtype=torch.bfloat16), 4)
        b = symm_mem.simulate(ring_all_gather(1 << 20, dtype="bf16"), 4)
        self.assertEqual(a["time_s"], b["time_s"])


class StreamedRing(unittest.TestCase):
    # 16 ranks on ib-rail-4node.yaml: nodes 0 and 1, so the ring crosses nodes twice
    # (7 -> 8 and 15 -> 0), over 400 Gb/s NICs nine times slower than NVLink.
    CLUSTER = "clusters/ib-rail-4node.yaml"

    def test_with_credits_nothing_is_overwritten(self):
        report = symm_mem.simulate(streamed_ring_all_gather(1 << 19), 16, self.CLUSTER)
        self.assertTrue(report["completed"])
        self.assertEqual(report["hazards"], [])
        self.assertEqual(report["warnings"], [])

    def test_without_the_credit_wait_the_landing_buffer_is_overwritten(self):
        # Ranks 7 and 15 send across nodes, so they reach their own receive late; rank 6
        # (14), which no longer waits for their credit, puts its next shard into their
        # landing buffer before they have consumed the one before it.
        report = symm_mem.simulate(streamed_ring_all_gather(1 << 19, credit_wait=False), 16,
                                   self.CLUSTER)
        self.assertTrue(report["completed"])
        hazards = report["hazards"]
        self.assertTrue(hazards)
        self.assertEqual({h["receiver"] for h in hazards}, {7, 15})
        for h in hazards:
            self.assertEqual(h["earlier_sender"], h["receiver"] - 1)
            self.assertEqual(h["later_sender"], h["receiver"] - 1)
            self.assertEqual((h["begin_bytes"], h["end_bytes"]), (0, 1 << 20))
            self.assertTrue(h["earlier_label"].startswith("send step "))
            self.assertIn(f"rank {h['receiver']}", h["message"])
        first = min(hazards, key=lambda h: h["time_s"])
        self.assertEqual((first["earlier_label"], first["later_label"]),
                         ("send step 0", "send step 1"))
        # The credits still come, and nobody waits for them any more.
        self.assertEqual(len(report["warnings"]), 16)
        self.assertTrue(any("rank 6 left 14 of 14 signals from rank 7" in w
                            for w in report["warnings"]))


class Deadlocks(unittest.TestCase):
    def test_a_wait_nobody_answers_is_reported_with_whom_it_waits_for(self):
        def program(ctx):
            buf = symm_mem.empty(1024, dtype="fp32")
            hdl = symm_mem.rendezvous(buf)
            if ctx.rank == 0:
                symm_mem.put_signal(buf, hdl, 1)
            else:
                symm_mem.wait_signal(hdl, 0, label="first")
                symm_mem.wait_signal(hdl, 0, label="second")  # rank 0 puts only once

        report = symm_mem.simulate(program, 2)
        self.assertFalse(report["completed"])
        self.assertIsNone(report["time_s"])
        blocked = report["deadlock"]["blocked"]
        self.assertEqual(len(blocked), 1)
        self.assertEqual((blocked[0]["rank"], blocked[0]["op"], blocked[0]["kind"]),
                         (1, "second", "wait_signal"))
        self.assertEqual(blocked[0]["waits_for"], [0])
        self.assertIn("rank 1", report["deadlock"]["message"])

    def test_a_member_that_skips_a_barrier_leaves_the_others_waiting_for_it(self):
        def program(ctx):
            hdl = symm_mem.rendezvous(symm_mem.empty(16, dtype="int8"))
            if ctx.rank != 2:
                hdl.barrier()

        report = symm_mem.simulate(program, 3)
        self.assertFalse(report["completed"])
        blocked = report["deadlock"]["blocked"]
        self.assertEqual(sorted(b["rank"] for b in blocked), [0, 1])
        self.assertTrue(all(b["kind"] == "barrier" and b["waits_for"] == [2] for b in blocked))


class Counting(unittest.TestCase):
    def test_signals_count_and_surplus_carries_over(self):
        # NCCL's counting: two signals before any wait are two credits (CUDA's slot would
        # hold one and hold the sender), so once both have arrived rank 1's waits take no
        # time; a third wait has no signal left and is reported as a deadlock.
        def program(waits):
            def run(ctx):
                hdl = symm_mem.rendezvous(symm_mem.empty(8, dtype="int8"))
                if ctx.rank == 0:
                    hdl.put_signal(1)
                    hdl.put_signal(1)
                else:
                    # ~180 us of HBM-bound copying first: both signals (1 us each) are in.
                    big = ctx.empty(64 << 20, dtype="fp32")
                    ctx.empty(64 << 20, dtype="fp32").copy_(big)
                    for i in range(waits):
                        hdl.wait_signal(0, label=f"wait {i}")
            return run

        two = symm_mem.simulate(program(2), 2)
        self.assertTrue(two["completed"])
        waits = [e for e in two["timeline"] if e["kind"] == "wait_signal"]
        self.assertEqual(len(waits), 2)
        for w in waits:
            self.assertAlmostEqual(w["end_s"], w["start_s"], delta=1e-15)
        three = symm_mem.simulate(program(3), 2)
        self.assertFalse(three["completed"])
        self.assertEqual(three["deadlock"]["blocked"][0]["op"], "wait 2")

    def test_cuda_semantics_are_not_modelled(self):
        with self.assertRaises(symmesh.UnsupportedError) as caught:
            symm_mem.simulate(ring_all_gather(16), 2, semantics="cuda")
        self.assertIn("compare-and-swap", str(caught.exception))


class Get(unittest.TestCase):
    def test_a_get_is_a_flow_from_the_peer_timed_by_hand(self):
        # Rank 1 reads 64 MiB of rank 0's copy: 1 us + 67,108,864 B / 450 GB/s
        # = 1 + 149.130809 us = 150.130809 us; the signal after it starts then.
        def program(ctx):
            buf = symm_mem.empty(32 << 20, dtype="bf16")
            hdl = symm_mem.rendezvous(buf)
            if ctx.rank == 1:
                symm_mem.get(ctx.empty(32 << 20, dtype="bf16"), hdl, 0, label="read")
                hdl.put_signal(0, label="done")
            else:
                hdl.wait_signal(1)

        report = symm_mem.simulate(program, 2)
        expected = NVLINK_LATENCY + (64 << 20) / NVLINK_BW
        read = next(e for e in report["timeline"] if e["label"] == "read")
        done = next(e for e in report["timeline"] if e["label"] == "done")
        self.assertEqual(read["kind"], "get")
        self.assertAlmostEqual(read["end_s"] - read["start_s"], expected, delta=1e-12)
        self.assertAlmostEqual(done["start_s"], read["end_s"], delta=1e-12)


class StreamsAndEvents(unittest.TestCase):
    def test_an_event_orders_a_copy_after_a_wait_on_another_stream(self):
        def program(ctx):
            buf = symm_mem.empty(1 << 20, dtype="fp32")
            hdl = symm_mem.rendezvous(buf)
            if ctx.rank == 0:
                symm_mem.put_signal(buf, hdl, 1)
                return
            comm, compute = ctx.Stream("comm"), ctx.Stream("compute")
            with ctx.stream(comm):
                symm_mem.wait_signal(hdl, 0, label="arrived")
                ready = comm.record_event()
            with ctx.stream(compute):
                compute.wait_event(ready)
                ctx.empty(1 << 20, dtype="fp32").copy_(buf)

        report = symm_mem.simulate(program, 2)
        by_label = {e["label"]: e for e in report["timeline"] if e["rank"] == 1}
        self.assertGreaterEqual(by_label["copy_"]["start_s"], by_label["arrived"]["end_s"])
        self.assertEqual({s["stream"] for s in report["streams"] if s["rank"] == 1},
                         {"comm", "compute"})


class BadInput(unittest.TestCase):
    def assert_refused(self, program, text, world=2, cls=None):
        with self.assertRaises(cls or symmesh.ScenarioError) as caught:
            symm_mem.simulate(program, world)
        self.assertIn(text, str(caught.exception))
        return caught.exception

    def test_a_peer_outside_the_group(self):
        def program(ctx):
            buf = symm_mem.empty(4, dtype="fp32")
            symm_mem.put_signal(buf, symm_mem.rendezvous(buf), 2)

        e = self.assert_refused(program, "peer 2 out of range for a group of 2")
        self.assertEqual(e.where, "symm_mem.put_signal")
        self.assertEqual(e.rank, 0)

    def test_an_unknown_dtype(self):
        self.assert_refused(lambda ctx: symm_mem.empty(4, dtype="fp13"), "unknown dtype 'fp13'")

    def test_a_source_larger_than_the_handles_tensor(self):
        def program(ctx):
            buf = symm_mem.empty(2, 4, dtype="fp32")
            hdl = symm_mem.rendezvous(buf[0])
            symm_mem.put_signal(buf, hdl, 1)

        self.assert_refused(program, "src has 32 bytes but the handle's tensor only 16")

    def test_sizes_that_differ_between_ranks(self):
        def program(ctx):
            symm_mem.rendezvous(symm_mem.empty(4 + ctx.rank, dtype="fp32"))

        e = self.assert_refused(program, "rendezvous #1 on 'world' has 20 bytes here but 16 "
                                         "on rank 0")
        self.assertEqual(e.rank, 1)

    def test_a_member_that_never_comes_to_a_rendezvous(self):
        def program(ctx):
            if ctx.rank == 0:
                symm_mem.rendezvous(symm_mem.empty(4, dtype="fp32"))

        self.assert_refused(program, "rank 1 never called rendezvous #1 on 'world'")

    def test_a_symmetric_tensor_used_before_its_rendezvous(self):
        def program(ctx):
            ctx.empty(4, dtype="fp32").copy_(symm_mem.empty(4, dtype="fp32"))

        self.assert_refused(program, "used before rendezvous")

    def test_a_channel_beyond_the_signal_pad(self):
        def program(ctx):
            symm_mem.set_signal_pad_size(32)  # 32 // (4 bytes x 2 ranks) = 4 channels
            hdl = symm_mem.rendezvous(symm_mem.empty(4, dtype="fp32"))
            hdl.put_signal(1 - ctx.rank, channel=4)

        self.assert_refused(program, "channel 4 is outside [0, 4)")

    def test_a_timeout_is_refused_not_ignored(self):
        # The simulator has no wall clock to bound: a non-zero timeout_ms must be refused,
        # never silently dropped; 0 (torch's default) is accepted.
        def program(ctx):
            hdl = symm_mem.rendezvous(symm_mem.empty(4, dtype="fp32"))
            hdl.wait_signal(1 - ctx.rank, timeout_ms=100)

        e = self.assert_refused(program, "timeout_ms=100 is not modelled",
                                cls=symmesh.UnsupportedError)
        self.assertEqual(e.where, "SymmetricMemory.wait_signal")

        def barrier(ctx):
            symm_mem.rendezvous(symm_mem.empty(4, dtype="fp32")).barrier(timeout_ms=5)

        self.assert_refused(barrier, "timeout_ms=5", cls=symmesh.UnsupportedError)

    def test_the_signal_pad_is_sized_before_allocating(self):
        def program(ctx):
            symm_mem.empty(4)
            symm_mem.set_signal_pad_size(1024)

        self.assert_refused(program, "before any symmetric memory allocation")
        self.assertEqual(symm_mem.get_signal_pad_size(), 9216)  # torch 2.13's default

    def test_calls_outside_a_rank_program(self):
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symm_mem.empty(4)
        self.assertIn("outside a rank program", str(caught.exception))

    def test_a_world_size_that_is_not_a_count(self):
        with self.assertRaises(symmesh.ScenarioError):
            symm_mem.simulate(ring_all_gather(4), 0)

    def test_a_cluster_path_that_is_not_utf8_is_a_scenario_error(self):
        # As load_scenario says it (test_scenario.py): the bytes named, not a
        # UnicodeEncodeError from the bindings.
        for path in ("/tmp/\udcff.yaml", pathlib.PurePosixPath("/tmp/\udcfe.yaml")):
            with self.assertRaises(symmesh.ScenarioError) as caught:
                symm_mem.simulate(ring_all_gather(4), 4, path)
            self.assertIn("is not valid UTF-8", str(caught.exception))
            self.assertEqual(caught.exception.where, repr(os.fsencode(path)))

    def test_more_ranks_than_the_cluster_has(self):
        self.assert_refused(ring_all_gather(4), "the program has 9 ranks but the cluster "
                                                "only 8 GPUs", world=9)


if __name__ == "__main__":
    unittest.main()
