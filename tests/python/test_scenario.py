"""Scenarios loaded from a file and from a dict, and bad ones refused with the CLI's text."""

import os
import tempfile
import unittest

import symmesh
from cli_support import SCENARIOS, CliTestCase, cli_error

# scenarios/quickstart.yaml transcribed by hand into a dict (its comments left out).
QUICKSTART = {
    "version": 2,
    "name": "quickstart",
    "cluster": "clusters/dgx-h100.yaml",
    "mesh": {"shape": [2, 4], "names": ["dp", "tp"]},
    "dtype": "bf16",
    "cost_model": "analytic",
    "tensors": {
        "x": {"shape": [32768, 4096], "placements": ["S(0)", "R"]},
        "w_up": {"shape": [4096, 14336], "parameter": True},
        "w_down": {"shape": [14336, 4096], "parameter": True},
        "y": {"placements": ["S(0)", "R"]},
    },
    "training": {"optimizer": "adam"},
    "workload": [
        {"name": "up", "op": "mm", "a": "x", "b": "w_up", "output": "h"},
        {"name": "down", "op": "mm", "a": "h", "b": "w_down", "output": "y"},
    ],
    "sweep": {"nodes": [1, 2, 4], "mesh": "auto"},
    "objective": {"max_time": "3.5 ms"},
}


class LoadScenario(CliTestCase):
    def test_file_and_dict_give_the_same_scenario(self):
        from_file = symmesh.load_scenario(os.path.join(SCENARIOS, "quickstart.yaml"))
        from_dict = symmesh.load_scenario(QUICKSTART)
        for prop in ("name", "version", "mesh_shape", "mesh_names", "dtype", "cost_model",
                     "cluster", "tensors", "ops", "training", "sweep_nodes",
                     "objective_max_time_s", "gpus"):
            self.assertEqual(getattr(from_file, prop), getattr(from_dict, prop), prop)
        # What the file says, read by hand: 1 DGX H100 node (8 GPUs), mesh 2x4, two mms.
        self.assertEqual(from_file.mesh_shape, [2, 4])
        self.assertEqual(from_file.mesh_names, ["dp", "tp"])
        self.assertEqual(from_file.gpus, 8)
        self.assertEqual(from_file.ops, [("up", "mm"), ("down", "mm")])
        self.assertEqual(from_file.sweep_nodes, [1, 2, 4])
        self.assertAlmostEqual(from_file.objective_max_time_s, 3.5e-3)
        self.assertIsNone(from_file.model)
        # Both run the same step.
        self.assertEqual(symmesh.simulate(from_file)["total_time_s"],
                         symmesh.simulate(from_dict)["total_time_s"])

    def test_a_model_scenario_names_its_model(self):
        s = symmesh.load_scenario(os.path.join(SCENARIOS, "llama3-8b-train.yaml"))
        # scenarios/models/llama3.1-8b.json: 32 layers, hidden 4096, 32 heads, 8 kv heads.
        self.assertEqual((s.model["layers"], s.model["hidden"], s.model["heads"],
                          s.model["kv_heads"]), (32, 4096, 32, 8))

    def test_a_bad_dict_names_the_line_and_column(self):
        bad = {"version": 2, "name": "x", "meshh": [8]}
        # scenario_text writes one key a line after "{": version on line 2, name on 3,
        # meshh on 4, indented by two spaces: column 3.
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symmesh.load_scenario(bad)
        self.assertTrue(str(caught.exception).startswith("<dict>:4:3: unknown key 'meshh'"),
                        str(caught.exception))
        self.assertEqual(caught.exception.where, "<dict>:4:3")
        self.assertIsInstance(caught.exception, ValueError)
        # The same text, written to a file, fails in the CLI with the same message.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.yaml")
            with open(path, "w") as f:
                f.write(symmesh.scenario_text(bad))
            with self.assertRaises(symmesh.ScenarioError) as from_file:
                symmesh.load_scenario(path)
            self.assertEqual(str(from_file.exception), cli_error("validate", path))
            self.assertEqual(str(from_file.exception),
                             path + str(caught.exception)[len("<dict>"):])

    def test_a_bad_file_raises_the_clis_message(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.yaml")
            with open(path, "w") as f:
                f.write("version: 2\nname: x\ncluster: clusters/dgx-h100.yaml\n"
                        "mesh: [8]\ndtype: bf17\n")
            with self.assertRaises(symmesh.ScenarioError) as caught:
                symmesh.load_scenario(path)
            message = str(caught.exception)
            self.assertTrue(message.startswith(path + ":5:8: "), message)
            self.assertEqual(message, cli_error("validate", path))

    def test_a_missing_file_names_it(self):
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symmesh.load_scenario("/nonexistent/scenario.yaml")
        self.assertIn("/nonexistent/scenario.yaml", str(caught.exception))

    def test_nan_or_infinity_in_a_dict_is_a_scenario_error_at_its_place(self):
        bad = {"version": 1, "name": "x", "cluster": "clusters/dgx-h100.yaml", "mesh": [8],
               "workload": [{"op": "all_reduce", "bytes": float("nan"), "mesh_dim": 0}]}
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symmesh.load_scenario(bad)
        # json.dumps(indent=2): workload on line 8, its op on 10, bytes on 11, the value
        # after '      "bytes": ' at column 16.
        self.assertEqual(caught.exception.where, "<dict>:11:16")
        self.assertIn("workload[0].bytes: expected a finite number, got nan",
                      str(caught.exception))
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symmesh.load_scenario({"name": "x", "mesh": {"shape": [8, float("-inf")]}},
                                  name="inf.yaml")
        self.assertTrue(caught.exception.where.startswith("inf.yaml:"), caught.exception.where)
        self.assertIn("mesh.shape[1]: expected a finite number, got -inf",
                      str(caught.exception))

    def test_a_nan_dimension_is_a_scenario_error_naming_the_option(self):
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symmesh.plan("mm", (4096, float("nan")), (1024, 8192), (2, 4), ["S(0),R", "R,R"])
        self.assertEqual(caught.exception.where, "--a")
        self.assertIn("'4096xnan'", str(caught.exception))
        # A whole float is still a dim.
        plan = symmesh.plan("mm", (4096.0, 1024), (1024, 8192), (2, 4), ["S(0),R", "R,R"])
        self.assertIn("chosen", plan)

    def test_a_path_that_is_not_utf8_is_a_scenario_error(self):
        for path in (b"/tmp/\xff\xfe.yaml", "/tmp/\udcff.yaml"):
            with self.assertRaises(symmesh.ScenarioError) as caught:
                symmesh.load_scenario(path)
            self.assertIn("is not valid UTF-8", str(caught.exception))
            self.assertEqual(caught.exception.where, repr(os.fsencode(path)))

    def test_other_sources_are_type_errors(self):
        with self.assertRaises(TypeError):
            symmesh.load_scenario(42)


if __name__ == "__main__":
    unittest.main()
