"""symmesh.torch_plan and torch_plan_source for a model scenario whose planner picks
Megatron's layout with sequence parallelism. The expected plan is torchtitan's Llama plan
(pytorch/torchtitan, torchtitan/models/llama3/infra/parallelize.py, apply_tp, with loss
parallel and the Llama 3 attention.forward(x, freqs_cis)), written out by hand.

The generated source is run here against stand-ins for torch's classes, so that this runs
without torch. Where torch is installed, test_torch_plan_dtensor.py supersedes that part:
it applies this plan (and others) with torch's own parallelize_module to a torchtitan-style
model on simulated ranks and compares the numbers with the unsharded model
(docs/torch-plan-check.md)."""

import os
import sys
import types
import unittest

import symmesh
from cli_support import HERE

SCENARIO = os.path.join(HERE, "llama3-8b-2layer-tp8.yaml")


def style(name, **kwargs):
    return {"style": name, "kwargs": kwargs}


TORCHTITAN_LAYER = {
    "attention_norm": style("SequenceParallel"),
    "attention": style("PrepareModuleInput", input_layouts="(Shard(1), None)",
                       desired_input_layouts="(Replicate(), None)"),
    "attention.wq": style("ColwiseParallel"),
    "attention.wk": style("ColwiseParallel"),
    "attention.wv": style("ColwiseParallel"),
    "attention.wo": style("RowwiseParallel", output_layouts="Shard(1)"),
    "ffn_norm": style("SequenceParallel"),
    "feed_forward": style("PrepareModuleInput", input_layouts="(Shard(1),)",
                          desired_input_layouts="(Replicate(),)"),
    "feed_forward.w1": style("ColwiseParallel"),
    "feed_forward.w2": style("RowwiseParallel", output_layouts="Shard(1)"),
    "feed_forward.w3": style("ColwiseParallel"),
}


def fake_torch(calls):
    """torch.distributed.tensor(.parallel) stand-ins that record what apply_tp builds (torch
    is not installed here): each style and placement prints as its torch source would."""
    def record(name):
        def make(*args, **kwargs):
            text = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
            return types.SimpleNamespace(text=f"{name}({text})")
        return make

    class Placement:
        def __init__(self, *args):
            self.args = args

        def __repr__(self):
            return f"{type(self).__name__}({', '.join(map(str, self.args))})"

    tensor = types.ModuleType("torch.distributed.tensor")
    for name in ("Shard", "Replicate", "Partial"):
        setattr(tensor, name, type(name, (Placement,), {}))
    parallel = types.ModuleType("torch.distributed.tensor.parallel")
    for name in ("ColwiseParallel", "RowwiseParallel", "SequenceParallel",
                 "PrepareModuleInput", "PrepareModuleOutput"):
        setattr(parallel, name, record(name))
    parallel.parallelize_module = lambda module, mesh, plan: calls.append(
        (module, mesh, {k: v.text for k, v in plan.items()}))
    return {"torch": types.ModuleType("torch"),
            "torch.distributed": types.ModuleType("torch.distributed"),
            "torch.distributed.tensor": tensor,
            "torch.distributed.tensor.parallel": parallel}


def source_call(entry):
    return entry["style"] + "(" + ", ".join(f"{k}={v}" for k, v in entry["kwargs"].items()) + ")"


class TorchPlan(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.plan = symmesh.torch_plan(SCENARIO)

    def test_megatron_layout_is_torchtitans_plan(self):
        plan = self.plan
        self.assertEqual(plan["tp_size"], 8)
        self.assertEqual(len(plan["layers"]), 2)
        for layer in plan["layers"]:
            self.assertEqual(layer, TORCHTITAN_LAYER)
            self.assertEqual(list(layer), list(TORCHTITAN_LAYER))  # torchtitan's order too
        self.assertEqual(plan["model"]["norm"], style("SequenceParallel"))
        self.assertEqual(plan["model"]["output"],
                         style("ColwiseParallel", input_layouts="Shard(1)",
                               output_layouts="Shard(-1)", use_local_output="False"))
        # The planner keeps this step's embedding table whole (torchtitan splits it by
        # vocabulary); its output is cut to the sequence-parallel rows the first norm reads.
        self.assertEqual(plan["model"]["tok_embeddings"],
                         style("PrepareModuleOutput", output_layouts="Replicate()",
                               desired_output_layouts="Shard(1)"))
        self.assertEqual(plan["replicated"], ["tok_embeddings"])
        self.assertEqual(plan["notes"], [])

    def test_source_applies_the_same_plan(self):
        source = symmesh.torch_plan_source(SCENARIO)
        calls = []
        saved = {k: sys.modules.get(k) for k in fake_torch(calls)}
        sys.modules.update(fake_torch(calls))
        try:
            namespace = {}
            exec(compile(source, "apply_tp.py", "exec"), namespace)
            layers = {"0": "block0", "1": "block1"}
            model = types.SimpleNamespace(layers=layers)
            namespace["apply_tp"](model, "tp_mesh")
        finally:
            for k, v in saved.items():
                if v is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = v
        # One call for the model, one per block, each with the plan torch_plan returned.
        self.assertEqual([c[0] for c in calls], [model, "block0", "block1"])
        self.assertTrue(all(c[1] == "tp_mesh" for c in calls))
        expected_model = {k: source_call(v) for k, v in self.plan["model"].items()}
        self.assertEqual(calls[0][2], expected_model)
        for call in calls[1:]:
            self.assertEqual(call[2], {k: source_call(v) for k, v in TORCHTITAN_LAYER.items()})

    def test_a_scenario_without_a_model_is_refused(self):
        with self.assertRaises(symmesh.ScenarioError) as caught:
            symmesh.torch_plan(os.path.join(symmesh.SHIPPED_SCENARIOS_DIR, "quickstart.yaml"))
        self.assertIn("needs a model scenario", str(caught.exception))



def two_layers(**changes):
    """SCENARIO as a dict, with `changes` to its keys (a model's: model_*)."""
    model = {"hf_config": "models/llama3.1-8b.json", "layers": 2, "seq": 8192, "global_batch": 1}
    for key in [k for k in changes if k.startswith("model_")]:
        model[key[len("model_"):]] = changes.pop(key)
    scenario = {"version": 2, "name": "llama3-8b-2layer", "cluster": "clusters/dgx-h100.yaml",
                "mesh": {"shape": [1, 8], "names": ["dp", "tp"]}, "dtype": "bf16",
                "cost_model": "analytic", "model": model, "training": {"optimizer": "adam"}}
    scenario.update(changes)
    return scenario


class TorchPlanOfALayout(unittest.TestCase):
    """torch_plan(scenario, layout=...): the plan of a layout symmesh.layouts chose (or any
    tp, pp, dp), rather than of the scenario file's mesh."""
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.file_plan = symmesh.torch_plan(SCENARIO)
        # On the scenario's own 8 GPUs, tp 4 with 2 pipeline stages (one layer each).
        cls.answer = symmesh.layouts(SCENARIO, gpus=[8], tp=[4], pp=[2])["sizes"][0]["best"][0]

    def test_the_answers_layout_is_planned_at_its_tp(self):
        self.assertEqual((self.answer["tp"], self.answer["pp"], self.answer["dp"]), (4, 2, 1))
        plan = symmesh.torch_plan(SCENARIO, layout=self.answer)
        self.assertEqual(self.file_plan["tp_size"], 8)
        self.assertEqual(plan["tp_size"], self.answer["tp"])
        self.assertNotEqual(plan, self.file_plan)
        # The planner chose Megatron's layout at tp 4 as at tp 8.
        self.assertEqual(plan["layers"], [TORCHTITAN_LAYER, TORCHTITAN_LAYER])

    def test_the_layout_is_the_mesh_pp_dp_tp(self):
        # The same plan as the scenario written with the layout's mesh and micro-batch.
        written = two_layers(mesh={"shape": [2, 1, 4], "names": ["pp", "dp", "tp"]},
                             model_micro_batch=1)
        self.assertEqual(symmesh.torch_plan(SCENARIO, layout=self.answer),
                         symmesh.torch_plan(written))
        self.assertEqual(symmesh.torch_plan_source(SCENARIO, layout=self.answer),
                         symmesh.torch_plan_source(written))

    def test_without_pipeline_stages_the_mesh_is_dp_tp(self):
        scenario = two_layers(model_global_batch=2)
        layout = {"tp": 4, "pp": 1, "dp": 2}
        written = two_layers(model_global_batch=2, model_micro_batch=1,
                             mesh={"shape": [2, 4], "names": ["dp", "tp"]})
        self.assertEqual(symmesh.torch_plan(scenario, layout=layout),
                         symmesh.torch_plan(written))
        # Fewer GPUs than a node: that node's first ones.
        self.assertEqual(symmesh.torch_plan(SCENARIO, layout={"tp": 2, "pp": 1, "dp": 1})
                         ["tp_size"], 2)

    def test_the_shipped_capacity_answer_is_planned(self):
        # The README's answer (llama3-8b-capacity: 128 GPUs, [dp 128, tp 1], ZeRO-2, from
        # the closed form) planned by the dataflow planner at full size: its memory, counted
        # op by op, fits the H100's 80 GiB (53.8 GiB per GPU on 2026-12-08). Both engines
        # must agree that the layout users act on can run; until ZeRO-2 was planned, it was
        # refused.
        capacity = os.path.join(HERE, "..", "..", "scenarios", "training",
                                "llama3-8b-capacity.yaml")
        answer = symmesh.layouts(capacity, gpus=[128])["sizes"][0]["best"][0]
        self.assertEqual((answer["tp"], answer["pp"], answer["dp"]), (1, 1, 128))
        self.assertEqual(symmesh.torch_plan(capacity, layout=answer)["tp_size"], 1)

    def test_a_layout_it_cannot_plan_is_refused(self):
        cases = (
            ({"tp": 4, "pp": 1, "dp": 3}, two_layers(model_global_batch=3),
             "takes 12 GPUs, which fill no whole number of nodes of 8 GPUs"),
            ({"tp": 3, "pp": 1, "dp": 1}, SCENARIO, "tp 3 does not divide the 32 heads"),
            ({"tp": 8, "pp": 1, "dp": 2}, SCENARIO,
             "dp 2 x micro_batch 1 does not divide the global batch of 1"),
            ({"tp": 8, "pp": 1}, SCENARIO, "a layout needs tp, pp and dp; dp is missing"),
            ({"tp": 8, "pp": 1, "dp": 1, "zero": 1}, SCENARIO, "unknown key 'zero'"),
            ({"tp": 8, "pp": 1, "dp": 1, "recompute": "some"}, SCENARIO,
             "recompute is 'none' or 'full'"),
        )
        for layout, scenario, message in cases:
            with self.subTest(layout=layout), \
                    self.assertRaises(symmesh.ScenarioError) as caught:
                symmesh.torch_plan(scenario, layout=layout)
            self.assertIn(message, caught.exception.message)
            self.assertEqual(caught.exception.where, "layout")
        with self.assertRaises(TypeError):
            symmesh.torch_plan(SCENARIO, layout=[8, 1, 1])


if __name__ == "__main__":
    unittest.main()
