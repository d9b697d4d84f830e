"""symmesh.plan against `symmesh plan --json`, run as a separate process."""

import unittest

import symmesh
from cli_support import CliTestCase, cli_error, cli_json


def chosen(plan):
    c = plan["chosen"]
    return c["input_placements"], c["output_placements"], c["cost_us"]


class Plan(CliTestCase):
    def test_dtensor_mm_matches_the_cli(self):
        # Inputs that cannot stay where they are: the plan pays a redistribution.
        ours = symmesh.plan("mm", (4096, 1024), "1024x8192", (2, 4), ["S(1),R", ("R", "S(0)")],
                            dtype="bf16")
        cli = cli_json("plan", "--op", "mm", "--a", "4096x1024", "--b", "1024x8192", "--mesh",
                       "2x4", "--in", "S(1),R", "R,S(0)", "--dtype", "bf16", "--json")
        self.assertEqual(chosen(ours), chosen(cli))
        self.assertGreater(ours["chosen"]["cost_us"], 0)
        self.assertEqual(len(ours["candidates"]), len(cli["candidates"]))
        # Where the plan leaves the output is the Python list the JSON holds.
        self.assertEqual(len(ours["chosen"]["output_placements"]), 2)

    def test_analytic_mm_on_a_cluster_matches_the_cli(self):
        ours = symmesh.plan("mm", "32768x4096", "4096x14336", "8", ["S(0)", "S(1)"],
                            dtype="bf16", cost_model="analytic", cluster="clusters/dgx-h100.yaml")
        cli = cli_json("plan", "--op", "mm", "--a", "32768x4096", "--b", "4096x14336",
                       "--mesh", "8", "--in", "S(0)", "S(1)", "--dtype", "bf16",
                       "--cost-model", "analytic", "--cluster", "clusters/dgx-h100.yaml",
                       "--json")
        self.assertEqual(chosen(ours), chosen(cli))
        self.assertGreater(ours["chosen"]["cost_us"], 0)

    def test_bad_placements_raise_the_clis_message(self):
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symmesh.plan("mm", "64x32", "32x64", "4", ["S(2)", "R"])
        self.assertEqual(str(caught.exception),
                         cli_error("plan", "--op", "mm", "--a", "64x32", "--b", "32x64",
                                   "--mesh", "4", "--in", "S(2)", "R"))

    def test_inputs_need_two_placements(self):
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symmesh.plan("mm", "64x32", "32x64", "4", ["R"])
        self.assertEqual(caught.exception.where, "--in")
        self.assertTrue(str(caught.exception).startswith("--in: expected the placements"))


if __name__ == "__main__":
    unittest.main()
