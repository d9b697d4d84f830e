"""symmesh's torch plans run by real DTensor: each plan (symmesh.torch_plan, or the apply_tp
of symmesh.torch_plan_source) is applied with torch's parallelize_module to a tiny Llama
built as torchtitan builds it (torch_llama.py), on tp simulated ranks in this process
(LocalTensorMode over a fake process group: real numerics, real collectives on the shards),
and its logits, loss and every parameter's gradient must equal those of the same model run
unsharded by torch. torch_plan_run.py holds the machinery; docs/torch-plan-check.md the
results of the full set (tools/torch_peer/run_torch_plans.py) and why the tolerances.

Here: a sample of the full set, small enough for a test (one thread; about half a minute),
and checks that the comparison can fail. Skipped where torch is not installed; where it is,
this supersedes test_torch_plan.py's checks against stand-ins for torch's classes."""

import copy
import importlib.util
import json
import unittest

import symmesh
from cli_support import SOURCE_DIR


def _torch_with_local_tensor():
    try:
        return (importlib.util.find_spec("torch") is not None
                and importlib.util.find_spec("torch.distributed._local_tensor") is not None)
    except ImportError:  # torch present but without torch.distributed
        return False


HAVE_TORCH = _torch_with_local_tensor()
if HAVE_TORCH:
    import torch
    import torch.distributed as dist
    import torch_plan_run as run


@unittest.skipUnless(HAVE_TORCH, "torch with torch.distributed._local_tensor (2.13 or later) "
                                 "is not installed")
class TorchPlanDTensor(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        # Tiny tensors: torch's worker threads would only contend for the cores.
        cls.threads = torch.get_num_threads()
        torch.set_num_threads(1)
        cls.cases = {c.name: c for c in run.cases(SOURCE_DIR)}
        cls.plans = {}

    @classmethod
    def tearDownClass(cls):
        torch.set_num_threads(cls.threads)
        if dist.is_initialized():
            dist.destroy_process_group()

    def plan_of(self, name):
        if name not in self.plans:
            self.plans[name] = run.case_plan(symmesh, self.cases[name])
        return self.plans[name]

    def check(self, name, dtype=None):
        """Runs case `name` (fp32 unless `dtype`) and asserts it matches the unsharded model,
        every plan entry applied once per module it names."""
        dtype = dtype or torch.float32
        plan, source, args = self.plan_of(name)
        result = run.run_plan(plan, args, source=source, name=name, dtype=dtype)
        self.assertTrue(result.passed, f"{name}, {dtype}: over {result.tolerance} "
                                        f"(abs, rel): {result.failures}")
        # As many styles applied as the plan's JSON has entries for the tiny model: the
        # source applies exactly the JSON's plan.
        layers = run.tiny_layer_plans(plan, args.n_layers) if source is None or \
            run.uniform_layers(plan) else plan["layers"]
        entries = [*plan["model"].values(), *(v for layer in layers for v in layer.values())]
        self.assertEqual(sum(result.styles.values()),
                         sum(1 + ("then" in e) for e in entries))
        return result

    # -- The plans ------------------------------------------------------------------------

    def test_megatron_with_sequence_parallelism_tp8(self):
        # The test scenario's plan, applied by its generated apply_tp: torchtitan's blocks,
        # loss parallel, the embedding table whole.
        for dtype in (torch.float32, torch.bfloat16):
            result = self.check("llama3-8b-2layer-tp8", dtype)
            self.assertTrue(result.loss_parallel)
            self.assertEqual(result.styles["SequenceParallel"], 5)  # 2 x 2 norms + norm
            self.assertEqual(result.replicated, ["tok_embeddings"])

    def test_megatron_at_tp4_and_tp2(self):
        self.check("llama3-8b-2layer-tp4")
        self.check("llama3-8b-2layer-tp2", torch.bfloat16)

    def test_embedding_split_by_vocabulary_tp2(self):
        plan, _, _ = self.plan_of("llama3.2-1b-2layer-tp2")
        self.assertEqual(plan["model"]["tok_embeddings"]["style"], "RowwiseParallel")
        self.check("llama3.2-1b-2layer-tp2")

    def test_pipeline_scenario_multiplies_whole_weights_by_token_rows(self):
        # scenarios/llama3-8b-pipeline.yaml (tp 4): two different block plans, wo and the
        # MLP (and in the last blocks q/k/v) whole on every rank, on token rows, moved by
        # all-to-alls; applied from the JSON, one tiny block per block plan.
        plan, _, args = self.plan_of("llama3-8b-pipeline")
        self.assertEqual(plan["tp_size"], 4)
        self.assertEqual(args.n_layers, 2)
        result = self.check("llama3-8b-pipeline")
        self.assertGreater(result.collectives["shard_dim_alltoall"], 0)

    def test_pipeline_copy_from_its_source(self):
        # The same layout, 4 layers: its apply_tp names each block and applies the second
        # styles (SequenceParallel behind a preparation) by a second parallelize_module call.
        _, source, _ = self.plan_of("llama3-8b-pipeline-4l")
        self.assertIn("# Second styles, after the first", source)
        self.check("llama3-8b-pipeline-4l")

    # -- That it can fail ---------------------------------------------------------------------

    def test_a_module_the_model_lacks_fails(self):
        # parallelize_module only warns and skips a path it cannot resolve; here it fails,
        # from the JSON and from the source alike.
        plan, source, args = self.plan_of("llama3-8b-2layer-tp2")
        wrong = copy.deepcopy(plan)
        for layer in wrong["layers"]:
            layer["attention.q_proj"] = layer.pop("attention.wq")
        with self.assertRaisesRegex(run.PlanError, "attention.q_proj.*no submodule 'q_proj'"):
            run.run_plan(wrong, args)
        with self.assertRaisesRegex(run.PlanError, "no submodule 'q_proj'"):
            run.run_plan(plan, args, source=source.replace('"attention.wq"', '"attention.q_proj"'))

    def test_a_plain_whole_weight_on_token_rows_fails_on_its_gradient(self):
        # The pipeline's MLP with its whole weights left plain (no SequenceParallel), fed
        # token rows as plain tensors: the forward is right, but each rank's weight gradient
        # covers its own rows only. Only the gradient comparison sees it.
        plan, _, args = self.plan_of("llama3-8b-pipeline")
        wrong = copy.deepcopy(plan)
        for layer in wrong["layers"]:
            for w in ("feed_forward.w1", "feed_forward.w2", "feed_forward.w3"):
                del layer[w]
            layer["ffn_norm"]["kwargs"]["use_local_output"] = "True"
        result = run.run_plan(wrong, args)
        self.assertLessEqual(result.errors["logits"][1], result.tolerance)
        self.assertEqual(sorted(k for k in result.failures if "feed_forward" not in k), [])
        self.assertIn("grad layers.0.feed_forward.w2.weight", result.failures)
        self.assertGreater(result.failures["grad layers.0.feed_forward.w2.weight"][1], 0.1)

    def test_the_pipeline_plan_before_the_fix_fails(self):
        # What symmesh emitted for the pipeline scenario before: wo and the MLP left
        # replicated (no style). wo's whole weight then meets attention's output split by
        # heads, and torch refuses the product.
        plan, _, args = self.plan_of("llama3-8b-pipeline")
        old = copy.deepcopy(plan)
        for layer in old["layers"]:
            for w in ("attention.wo", "feed_forward.w1", "feed_forward.w2",
                      "feed_forward.w3"):
                layer.pop(w, None)
        with self.assertRaisesRegex(RuntimeError, "cannot be multiplied"):
            run.run_plan(old, args)

    def test_a_plan_with_notes_is_not_run(self):
        plan, _, args = self.plan_of("llama3-8b-2layer-dp4-tp2")
        self.assertTrue(plan["notes"], json.dumps(plan, indent=1))
        with self.assertRaisesRegex(run.PlanError, "the plan has notes"):
            run.run_plan(plan, args)


if __name__ == "__main__":
    unittest.main()
