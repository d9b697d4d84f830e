"""symmesh.sweep against `symmesh sweep`'s results.json, run as a separate process."""

import copy
import json
import os
import tempfile
import unittest

import symmesh
from cli_support import CliTestCase, run_cli
from test_scenario import QUICKSTART


def point_summary(point):
    return (point["nodes"], point["gpus"], point["mesh"], point["status"],
            point.get("total_time_s"), point.get("skip_reason"))


class Sweep(CliTestCase):
    def test_small_sweep_matches_the_cli(self):
        scenario = copy.deepcopy(QUICKSTART)
        scenario["sweep"] = {"nodes": [1, 2], "mesh": "auto"}
        ours = symmesh.sweep(scenario, jobs=2)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "small-sweep.yaml")
            with open(path, "w") as f:
                f.write(symmesh.scenario_text(scenario))
            code, _, err = run_cli("sweep", path, "--out", os.path.join(tmp, "out"), "-j", "2")
            self.assertEqual(code, 0, err)
            with open(os.path.join(tmp, "out", "results.json")) as f:
                cli = json.load(f)
        # 1 node: 1x8, 2x4, 4x2, 8x1; 2 nodes: 1x16, 2x8, 4x4, 8x2, 16x1 (every ordered
        # factorisation of the GPUs into the scenario's two mesh dims).
        self.assertEqual([p["mesh"] for p in ours["points"]],
                         [[1, 8], [2, 4], [4, 2], [8, 1], [1, 16], [2, 8], [4, 4], [8, 2],
                          [16, 1]])
        self.assertEqual([point_summary(p) for p in ours["points"]],
                         [point_summary(p) for p in cli["points"]])
        for key in ("nodes", "gpus", "mesh", "met", "total_time_s", "point"):
            self.assertEqual(ours["answer"][key], cli["answer"][key], key)

    def test_the_scenarios_own_point_is_its_simulation(self):
        # The sweep's point at the scenario's size and mesh (1 node, 2x4) is evaluated as
        # simulate evaluates the scenario itself.
        scenario = copy.deepcopy(QUICKSTART)
        scenario["sweep"] = {"nodes": [1], "mesh": [[2, 4]]}
        ours = symmesh.sweep(scenario)
        self.assertEqual(len(ours["points"]), 1)
        self.assertEqual(ours["points"][0]["total_time_s"],
                         symmesh.simulate(QUICKSTART)["total_time_s"])


if __name__ == "__main__":
    unittest.main()
