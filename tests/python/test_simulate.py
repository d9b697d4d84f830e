"""symmesh.simulate against `symmesh simulate --json`, run as a separate process."""

import os
import tempfile
import unittest

import symmesh
from cli_support import SCENARIOS, CliTestCase, cli_error, cli_json, without_wall_times


def without_wall_clock(report):
    # search_s is how long this run's layout search took: the one figure that differs.
    if isinstance(report, dict):
        return {k: without_wall_clock(v) for k, v in report.items() if k != "search_s"}
    if isinstance(report, list):
        return [without_wall_clock(v) for v in report]
    return report


class Simulate(CliTestCase):
    def test_quickstart_matches_the_cli(self):
        path = os.path.join(SCENARIOS, "quickstart.yaml")
        ours = symmesh.simulate(path)
        cli = cli_json("simulate", "--json", path)
        self.assertEqual(without_wall_clock(ours), without_wall_clock(cli))
        self.assertEqual([op["name"] for op in ours["ops"]][:2], ["up", "down"])
        self.assertGreater(ours["total_time_s"], 0)

    def test_a_matmul_that_fits_nowhere_raises_the_clis_message(self):
        s = dict(name="too-big", version=2, cluster="clusters/dgx-h100.yaml", mesh=[8],
                 dtype="bf16", cost_model="analytic",
                 tensors={"a": {"shape": [1048576, 65536], "placements": ["R"]},
                          "b": {"shape": [65536, 65536], "placements": ["R"]}},
                 workload=[{"name": "m", "op": "mm", "a": "a", "b": "b", "output": "c"}])
        # a is declared whole (R) on every GPU: 2^20 x 2^16 bf16 = 128 GiB before any
        # strategy can split it, over the H100's 80 GiB (the CLI exits 2 saying so).
        with self.assertRaises(symmesh.UnsupportedError) as caught:
            symmesh.simulate(s)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "too-big.yaml")
            with open(path, "w") as f:
                f.write(symmesh.scenario_text(s))
            self.assertEqual(str(caught.exception), cli_error("simulate", path))
        self.assertIn("no strategy fits in memory", str(caught.exception))

    def test_a_model_on_16384_gpus_is_folded_as_the_cli_folds_it(self):
        # Meta's Llama 3.1 405B mesh [pp 16, dp 128, tp 8]: the closed form's step (folded)
        # is simulated as one replica of 128 ranks and one stage's rings of 1,024.
        path = os.path.join(SCENARIOS, "training", "llama3-405b-train.yaml")
        ours = symmesh.simulate(path, folded=True)
        cli = cli_json("simulate", "--folded", "--json", path)
        self.assertEqual(without_wall_times(ours), without_wall_times(cli))
        step = ours["sizes"][0]["best"][0]["simulated"]
        self.assertEqual(step["represented_ranks"], 16384)
        self.assertEqual(step["simulated_ranks"], 128 + 1024)

    def test_folded_refuses_emulation_as_the_cli_does(self):
        path = os.path.join(SCENARIOS, "llama3-8b-train.yaml")
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symmesh.simulate(path, folded=True, emulate=True)
        self.assertEqual(str(caught.exception), cli_error("simulate", "--folded", "--emulate",
                                                          path))

    def test_fold_replicas_reports_what_the_cli_reports(self):
        # The shipped 8B step at [dp 2, tp 8]: one replica simulated, the same report.
        path = os.path.join(SCENARIOS, "llama3-8b-train.yaml")
        ours = symmesh.simulate(path, fold_replicas=True)
        cli = cli_json("simulate", "--json", "--fold-replicas", path)
        self.assertEqual(without_wall_clock(ours), without_wall_clock(cli))
        self.assertAlmostEqual(ours["total_time_s"], symmesh.simulate(path)["total_time_s"],
                               delta=1e-9 * ours["total_time_s"])

    def test_fold_replicas_refuses_emulation_as_the_cli_does(self):
        path = os.path.join(SCENARIOS, "llama3-8b-train.yaml")
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symmesh.simulate(path, fold_replicas=True, emulate=True)
        self.assertEqual(str(caught.exception),
                         cli_error("simulate", "--fold-replicas", "--emulate", path))


if __name__ == "__main__":
    unittest.main()
