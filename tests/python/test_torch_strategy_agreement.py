"""symmesh's strategy choice against torch 2.13's own sharding propagation, live.

tools/torch_peer/strategy_agreement.py runs every case (docs/torch-strategy-agreement.md
holds its table); here CI runs its fixed sample and asserts that no disagreement is left
unexplained, and checks the pieces that verdict rests on against hand-worked numbers:
torch's answers on cases whose outcome PyTorch's own tests and docs/dtensor-strategies.md
derive by hand, and each explanation on a case it does and one it does not claim.
Skipped where torch is not installed."""

import importlib.util
import math
import os
import sys
import unittest

from cli_support import SOURCE_DIR

HAVE_TORCH = importlib.util.find_spec("torch") is not None
PEER_DIR = os.path.join(SOURCE_DIR, "tools", "torch_peer")
if HAVE_TORCH:
    sys.path.insert(0, PEER_DIR)
    import cases as case_list
    import explanations
    import strategy_agreement
    import torch_oracle


def all_gather_us(n, nbytes, inter_host=True):
    """docs/dtensor-strategies.md §3: AG_d(B) = 6.6 + (n-1)·λ + 1e6·B·(n-1)/(n·β), B in GiB."""
    lam, beta = (2.7, 0.22 * 87.7) if inter_host else (0.6, 87.7)
    return 6.6 + (n - 1) * lam + 1e6 * (nbytes / 2**30) * (n - 1) / (n * beta)


def case(op, mesh, placements, host_devices=None):
    c = next(c for c in case_list.all_cases() if c["op"] == op and c["mesh"] == mesh
             and c["host_devices"] == host_devices and c["placements"] == placements)
    return c


@unittest.skipUnless(HAVE_TORCH, "torch is not installed")
class TorchAnswers(unittest.TestCase):
    """The oracle reports what torch decides; expected values are worked by hand."""

    @classmethod
    def setUpClass(cls):
        torch_oracle.start()

    def test_pytorch_tests_worked_cases(self):
        # PyTorch's test_dtensor_ops / docs §5: mm on 1-D 4, (6,8)@(8,12).
        shapes = [(6, 8), (8, 12)]
        got = torch_oracle.matmul_op("mm", shapes, [["S(1)"], ["S(0)"]], (4,))
        self.assertEqual(got.output, ("P(sum)",))
        self.assertEqual(got.cost_us, 0.0)
        got = torch_oracle.matmul_op("mm", shapes, [["S(0)"], ["R"]], (4,))
        self.assertEqual((got.output, got.inputs), (("S(0)",), (("S(0)",), ("R",))))

    def test_full_expansion_and_search_differ_as_worked_by_hand(self):
        # docs/dtensor-strategies.md §6, mm 64x32 @ 32x64 fp32 on 2x2, one device per host
        # (every mesh dim inter-host). The expansion takes b (R,S0) to (R,R): b is 8192 B,
        # 4096 B per rank, and d1's S0->R is priced on the gathered 8192 B: 9.498 µs. The
        # search moves a's d1 S0 -> R -> S1 instead: a is 8192 B, 2048 B per rank on 4
        # shards, gathered to 4096 B (9.399 µs), then a free chunk; output (S0, P(sum)).
        a, b = (64, 32), (32, 64)
        full = torch_oracle.matmul_op("mm", [a, b], [["S(0)", "S(0)"], ["R", "S(0)"]], (2, 2))
        self.assertEqual(full.output, ("S(0)", "S(0)"))
        self.assertEqual(full.inputs, (("S(0)", "S(0)"), ("R", "R")))
        self.assertAlmostEqual(full.cost_us, all_gather_us(2, 8192), places=9)
        pq = torch_oracle.matmul_op("mm", [a, b], [["S(0)", "S(0)"], ["R", "S(0)"]], (2, 2),
                                    mode="priority-queue")
        self.assertEqual(pq.output, ("S(0)", "P(sum)"))
        self.assertAlmostEqual(pq.cost_us, all_gather_us(2, 4096), places=9)
        self.assertLess(pq.cost_us, full.cost_us)

    def test_devices_per_host_changes_torchs_price(self):
        # Same case, 2 devices per host: mesh dim 1 (inner, 2 ranks) is intra-host, so b's
        # gather costs 6.6 + 0.6 + 1e6·8192/2^30/2/87.7 = 7.243 µs and stays the cheapest.
        with_host = torch_oracle.matmul_op("mm", [(64, 32), (32, 64)],
                                           [["S(0)", "S(0)"], ["R", "S(0)"]], (2, 2),
                                           host_devices=2)
        self.assertAlmostEqual(with_host.cost_us,
                               all_gather_us(2, 8192, inter_host=False), places=9)
        # torch caches the topology per mesh: the next case must not inherit 2 per host.
        again = torch_oracle.matmul_op("mm", [(64, 32), (32, 64)],
                                       [["S(0)", "S(0)"], ["R", "S(0)"]], (2, 2))
        self.assertAlmostEqual(again.cost_us, all_gather_us(2, 8192), places=9)

    def test_linear_is_decomposed_by_torch(self):
        got = torch_oracle.linear([(16, 32), (48, 32)], [["S(0)"], ["S(0)"]], (4,))
        ops = [op for op, *_ in got.ops]
        self.assertEqual(ops, ["aten.t.default", "aten.mm.default"])
        # w (48,32) S(0) becomes wT S(1) through t. mm(a S0, wT S1) is no rule, so one of
        # them is gathered: a (16x32 fp32 = 2048 B, AG 14.774 µs) is cheaper than wT
        # (6144 B, 14.922 µs); wT keeps S(1) and so does the output.
        self.assertEqual(got.output, ("S(1)",))
        self.assertEqual(got.inputs, (("R",), ("S(0)",)))
        self.assertAlmostEqual(got.cost_us, all_gather_us(4, 2048), places=9)


@unittest.skipUnless(HAVE_TORCH, "torch is not installed")
class Explanations(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch_oracle.start()

    def verdict_of(self, c, mode="full-expansion"):
        result = strategy_agreement.compare(c, mode)
        key = (mode, None)
        return result, explanations.verdict(c, key, result, {key: [result]}, 0)

    def test_strided_view_claims_a_sequence_sharded_3d_linear(self):
        c = case("linear 3d", (4,), [["S(1)"], ["S(1)"]])
        result, verdict = self.verdict_of(c)
        self.assertEqual(result["torch"].output, ("P(sum)",))
        self.assertEqual(result["symmesh"][0], ("S(1)",))
        self.assertEqual(verdict, ("explained", "linear-strided-view"))

    def test_strided_view_is_not_claimed_without_a_strided_shard(self):
        # Batch-sharded a flattens to a plain S(0): no _StridedShard, and both agree.
        c = case("linear 3d", (4,), [["S(0)"], ["R"]])
        result, verdict = self.verdict_of(c)
        self.assertFalse(any("_StridedShard" in str(s) for s in result["torch"].ops))
        self.assertEqual(verdict, ("agreed",))

    def test_torch_refusing_to_view_back_a_strided_shard_is_claimed(self):
        # a (4,8,32) at (S(1),S(1)) on 2x2: the flattened view is strided twice, and torch
        # raises when it views the product back; symmesh plans it.
        c = case("linear 3d", (2, 2), [["S(1)", "S(1)"], ["R", "R"]])
        result = strategy_agreement._work((0, c, "full-expansion"))[2]
        self.assertIn("Cannot unflatten tensor with _StridedShard placement", result)
        key = ("full-expansion", None)
        self.assertEqual(explanations.verdict(c, key, {"error": result}, {}, 0),
                         ("explained", "linear-strided-unflatten"))
        other = {"error": "RuntimeError: something else"}
        self.assertEqual(explanations.verdict(c, key, other, {}, 0), ("unexplained",))

    def test_an_equal_cost_tie_of_the_flattened_search_is_claimed(self):
        # a (4,8,32) at (S(0),R), w at (P(sum),R) on 2x2, priority queue: torch and symmesh
        # find paths of the same cost; on mesh dim 1 torch's flattened a is chunked along k
        # (output P, P), symmesh's 3-D a along the sequence (output P, S(1)).
        c = case("linear 3d", (2, 2), [["S(0)", "R"], ["P(sum)", "R"]])
        result, verdict = self.verdict_of(c, mode="priority-queue")
        self.assertEqual(result["torch"].output, ("P(sum)", "P(sum)"))
        self.assertEqual(result["symmesh"][0], ("P(sum)", "S(1)"))
        self.assertNotIn("cost", result["differs"])
        self.assertEqual(verdict, ("explained", "linear-flattened-tie"))
        # The same difference with a different cost is not a tie.
        forged = dict(result, differs=["output", "cost"])
        key = ("priority-queue", None)
        self.assertEqual(explanations.verdict(c, key, forged, {key: [forged]}, 0),
                         ("unexplained",))

    def test_a_difference_nothing_claims_is_unexplained(self):
        c = case("mm", (2, 2), [["S(0)", "S(0)"], ["R", "S(0)"]])
        result = strategy_agreement.compare(c, "full-expansion")
        forged = dict(result, differs=["output"])  # as if symmesh had chosen otherwise
        key = ("full-expansion", None)
        self.assertEqual(explanations.verdict(c, key, forged, {key: [forged]}, 0),
                         ("unexplained",))

    def test_partial_order_needs_the_sum_first_twin_to_agree(self):
        c = case("mm", (4,), [["P(sum)"], ["P(sum)"]])
        avg, total = ("priority-queue", "avg-first"), ("priority-queue", "sum-first")
        differs = {"differs": ["inputs"], "torch": None, "symmesh": None}
        agrees = {"differs": [], "torch": None, "symmesh": None}
        self.assertEqual(explanations.verdict(c, avg, differs, {avg: [differs], total: [agrees]}, 0),
                         ("explained", "partial-set-order"))
        self.assertEqual(explanations.verdict(c, avg, differs, {avg: [differs], total: [differs]},
                                              0), ("unexplained",))


@unittest.skipUnless(HAVE_TORCH, "torch is not installed")
class Sample(unittest.TestCase):
    def test_ci_sample_has_no_unexplained_disagreement(self):
        cases = list(case_list.sample_cases())
        self.assertGreater(len(cases), 200)  # 4 of each of 63 (op, mesh) groups, fewer of 2
        self.assertEqual({len(c["mesh"]) for c in cases}, {1, 2, 3})
        jobs = os.cpu_count() or 1
        raw = {key: strategy_agreement.run(cases, key[0], key[1], jobs)
               for key in strategy_agreement.RUNS}
        outcomes = strategy_agreement.judge(cases, raw)
        for key, results in raw.items():
            errors = [(c["name"], r["error"]) for c, r in zip(cases, results) if "error" in r]
            self.assertEqual(errors, [])
            verdicts = outcomes[key]
            bad = [strategy_agreement.describe(c, r) for c, r, v in
                   zip(cases, results, verdicts) if v == ("unexplained",)]
            self.assertEqual(bad, [], key)
            agreed = sum(v == ("agreed",) for v in verdicts)
            self.assertGreater(agreed, 0.9 * len(cases), key)

if __name__ == "__main__":
    unittest.main()
