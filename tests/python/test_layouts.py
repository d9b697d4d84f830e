"""symmesh.layouts against `symmesh layouts FILE --json`, run as a separate process: the
same arguments give the same JSON (but the tool's wall-clock times), and bad input the
CLI's message."""

import copy
import os
import unittest

import symmesh
from cli_support import SCENARIOS, CliTestCase, cli_error, cli_json, without_wall_times
from test_scenario import QUICKSTART

LLAMA_70B = os.path.join(SCENARIOS, "training", "llama3-70b-train.yaml")
LLAMA_8B_CAPACITY = os.path.join(SCENARIOS, "training", "llama3-8b-capacity.yaml")
LLAMA_8B_PIPELINE = os.path.join(SCENARIOS, "llama3-8b-pipeline.yaml")


class Layouts(CliTestCase):
    maxDiff = None

    def assert_same_as_the_cli(self, ours, *cli_args):
        cli = cli_json("layouts", *cli_args, "--json")
        self.assertIn("wall_s", ours)
        self.assertEqual(without_wall_times(ours), without_wall_times(cli))

    def test_70b_at_two_sizes_is_the_clis_answer(self):
        ours = symmesh.layouts(LLAMA_70B, gpus=[256, 512], top=2)
        self.assertEqual([size["gpus"] for size in ours["sizes"]], [256, 512])
        self.assertEqual([len(size["best"]) for size in ours["sizes"]], [2, 2])
        self.assert_same_as_the_cli(ours, LLAMA_70B, "--gpus", "256", "512", "--top", "2")

    def test_8b_capacity_simulated_is_the_clis_answer(self):
        ours = symmesh.layouts(LLAMA_8B_CAPACITY, simulate=1)
        # The sweep's node counts, each with its fastest layout simulated.
        self.assertEqual([size["gpus"] for size in ours["sizes"]],
                         [8, 16, 32, 64, 128, 256, 512])
        for size in ours["sizes"]:
            self.assertIn("step_s", size["best"][0]["simulated"], size["gpus"])
        self.assertIsNotNone(ours["answer_gpus"])
        self.assert_same_as_the_cli(ours, LLAMA_8B_CAPACITY, "--simulate", "1")

    def test_the_lists_replace_what_the_scenario_says(self):
        # One value or a list, as --tp 4 --micro-batch 1 2 --recompute full --zero 0 1.
        ours = symmesh.layouts(LLAMA_8B_PIPELINE, gpus=16, top=3, tp=4, pp=[2],
                               micro_batch=[1, 2], recompute="full", zero=[0, 1])
        self.assertEqual(len(ours["sizes"][0]["best"]), 3)
        for entry in ours["sizes"][0]["best"]:
            self.assertEqual((entry["tp"], entry["pp"], entry["recompute"]), (4, 2, "full"))
        self.assert_same_as_the_cli(ours, LLAMA_8B_PIPELINE, "--gpus", "16", "--top", "3",
                                    "--tp", "4", "--pp", "2", "--micro-batch", "1", "2",
                                    "--recompute", "full", "--zero", "0", "1")

    def test_a_layout_nothing_can_honour_raises_the_clis_message(self):
        # The scenario fixes tp 4 and pp 2 on 16 GPUs, so dp is 2: micro-batches of 5
        # sequences cannot make its global batch of 16.
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symmesh.layouts(LLAMA_8B_PIPELINE, micro_batch=[5])
        e = caught.exception
        self.assertIn("micro_batch 5 x dp 2 does not divide the global batch of 16", e.message)
        self.assertEqual(e.where, LLAMA_8B_PIPELINE)
        self.assertEqual(str(e), cli_error("layouts", LLAMA_8B_PIPELINE, "--micro-batch", "5"))

    def test_a_scenario_without_a_model_is_refused(self):
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symmesh.layouts(copy.deepcopy(QUICKSTART))
        self.assertIn("no model: block", caught.exception.message)

    def test_keywords_out_of_range_name_the_keyword(self):
        for kwargs, where in (({"top": 0}, "top"), ({"simulate": 101}, "simulate"),
                              ({"tp": [0]}, "tp"), ({"zero": [4]}, "zero"),
                              ({"virtual_stages": [513]}, "virtual_stages"),
                              ({"recompute": "selective"}, "recompute"),
                              ({"micro_batch": list(range(1, 66))}, "micro_batch")):
            with self.subTest(**kwargs), self.assertRaises(symmesh.ScenarioError) as caught:
                symmesh.layouts(LLAMA_8B_PIPELINE, **kwargs)
            self.assertEqual(caught.exception.where, where)
        with self.assertRaises(TypeError):
            symmesh.layouts(LLAMA_8B_PIPELINE, tp="4")
        with self.assertRaises(TypeError):
            symmesh.layouts(LLAMA_8B_PIPELINE, micro_batch=[1.5])


if __name__ == "__main__":
    unittest.main()
